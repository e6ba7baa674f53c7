"""The scripted model endpoint (bench/scripted_model.py): every policy's code is run, here, in a small
RLM loop written after the wire format the server's loop speaks (the issue's contract, part B), with
rlm_query / llm_query calling the same policies; and the HTTP server is run as the benchmark runs it."""
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request

import pytest

BENCH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, os.pardir,
                                      "bench"))
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import rlm_tasks  # noqa: E402
import scripted_model  # noqa: E402

SYSTEM = ("You are a Recursive Language Model: you answer a question about `context` by writing Python in "
          "```repl blocks. You are at depth {depth}.")
CODE = re.compile(r"```(?:repl|python)\n(.*?)```", re.S)
FINAL_TEXT = re.compile(r"FINAL\((.*?)\)")


def chat(model, messages):
    return scripted_model.complete({"model": model, "messages": messages})["choices"][0]["message"]["content"]


def describe(context):
    return (f"The variable `context` holds a {type(context).__name__} of length {len(context)}.\n"
            f"Preview: {str(context)[:300]}")


def first_user(question, context):
    about = "There is no `context` variable." if context is None else describe(context)
    return f"Question: {question}\n{about}\n\nStart by looking at the context in a ```repl block."


class Tree:
    """What a run did: RLMs started (by depth), model turns, plain sub-calls."""

    def __init__(self):
        self.rlms, self.turns, self.llm_calls, self.lock = [], 0, 0, threading.Lock()


def llm_query(model, tree):
    def call(prompt, model_name=None):
        with tree.lock:
            tree.llm_calls += 1
        return chat(model_name or model, [{"role": "user", "content": prompt}])
    return call


def run_rlm(model, question, context, *, depth=0, max_depth=2, max_turns=12, window_chars=None, tree=None,
            output_cap=20_000):
    """One RLM as the contract describes its loop; returns (answer or None, tree, messages)."""
    tree = tree or Tree()
    with tree.lock:
        tree.rlms.append(depth)
    llm = llm_query(model, tree)

    def rlm_query(prompt, ctx=None, *, model=None, max_iterations=None):
        if depth + 1 >= max_depth:  # at the depth limit: an llm_query of the prompt with the context's value
            return llm(prompt if ctx is None else f"{prompt}\n\nThe context:\n{ctx}", model)
        answer, _, _ = run_rlm(model or MODEL[0], prompt, ctx, depth=depth + 1, max_depth=max_depth, tree=tree)
        return answer if answer is not None else "[rlm_query failed: NO_ANSWER: the child gave no answer]"

    def rlm_query_batched(prompts, contexts=None, *, model=None, max_iterations=None, concurrency=None):
        contexts = contexts if contexts is not None else [None] * len(prompts)
        results = [None] * len(prompts)

        def one(i):
            results[i] = rlm_query(prompts[i], contexts[i], model=model)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(prompts))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results

    def final(value):
        ns["answer"] = {"content": str(value), "ready": True}

    MODEL = [model]
    ns = {"context": context, "answer": {"content": "", "ready": False}, "rlm_query": rlm_query,
          "rlm_query_batched": rlm_query_batched, "llm_query": llm,
          "llm_query_batched": lambda prompts, **kw: [llm(p) for p in prompts], "FINAL": final}
    if context is None:
        del ns["context"]
    start = [{"role": "system", "content": SYSTEM.format(depth=depth)},
             {"role": "user", "content": first_user(question, context)}]
    messages = list(start)
    for _ in range(max_turns):
        if window_chars and sum(len(m["content"]) for m in messages) > window_chars:
            summary = chat(model, messages + [{"role": "user", "content": "Summarize your progress so far."}])
            ns["history"] = [m["content"] for m in messages[2:]] + [summary]
            note = f"Earlier turns were summarized into the variable `history`. Summary: {summary}"
            messages = start + [{"role": "user", "content": note}]
        reply = chat(model, messages)
        with tree.lock:
            tree.turns += 1
        messages.append({"role": "assistant", "content": reply})
        blocks = CODE.findall(reply)
        if not blocks:
            messages.append({"role": "user", "content": "No code ran this turn. Answer from code: set "
                                                        "answer[\"content\"] and answer[\"ready\"] = True."})
            continue
        outputs = []
        for code in blocks:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                try:
                    exec(code, ns)
                except Exception:  # the REPL shows the error to the model
                    out.write(traceback.format_exc(limit=1))
            text = out.getvalue()
            outputs.append(text if len(text) <= output_cap else text[:output_cap] + f"\n[output cut at {output_cap}]")
        if ns["answer"].get("ready"):
            return ns["answer"]["content"], tree, messages
        shown = ("REPL output:\n" + outputs[0] if len(outputs) == 1 else
                 "\n".join(f"REPL output (block {i + 1}):\n{o}" for i, o in enumerate(outputs)))
        if FINAL_TEXT.search(CODE.sub("", reply)):
            shown += "\nYour answer came with code: the code ran first; answer again now that you have seen its output."
        messages.append({"role": "user", "content": shown})
    return None, tree, messages


SIZES = [2 ** 13, 2 ** 16]


@pytest.mark.parametrize("name", ["niah", "oolong", "pairs"])
@pytest.mark.parametrize("tokens", SIZES)
def test_direct_policies_solve_their_task(name, tokens):
    task = rlm_tasks.generate(name, tokens)
    for model in (f"scripted-{name}", "scripted"):
        answer, tree, _ = run_rlm(model, task.question, task.context)
        assert rlm_tasks.score(task, answer) == 1.0, (model, answer[:200])
        assert tree.rlms == [0] and tree.turns == 3


@pytest.mark.parametrize("name", ["niah", "oolong", "pairs"])
def test_chunked_rlm_builds_a_depth_two_tree(name):
    task = rlm_tasks.generate(name, 2 ** 16)
    answer, tree, messages = run_rlm("scripted-chunked-rlm", task.question + " Use 6 chunks.", task.context)
    assert rlm_tasks.score(task, answer) == 1.0
    assert sorted(tree.rlms) == [0] + [1] * 6  # each chunk went to a child RLM with its own namespace
    assert tree.llm_calls == 0
    assert "rlm_query_batched" in messages[2]["content"]


def test_chunked_rlm_at_the_depth_limit_gets_plain_answers_about_the_chunks():
    """At the depth limit rlm_query is an llm_query of the prompt with the chunk itself, so the answer is found."""
    task = rlm_tasks.generate("niah", 2 ** 15)
    answer, tree, _ = run_rlm("scripted-chunked-rlm", task.question, task.context, max_depth=1)
    assert answer == task.expected and rlm_tasks.score(task, answer) == 1.0
    assert tree.rlms == [0] and tree.llm_calls == 4


def test_chunked_rlm_cuts_a_large_context_into_chunks_under_the_prompt_limit():
    task = rlm_tasks.generate("niah", 2 ** 20)
    answer, tree, _ = run_rlm("scripted-chunked-rlm", task.question, task.context)
    assert answer == task.expected
    assert len(tree.rlms) - 1 == -(-len(task.context) // scripted_model.CHUNK_CHARS)


@pytest.mark.parametrize("name", ["niah", "oolong", "pairs"])
def test_chunked_llm_uses_plain_sub_calls(name):
    task = rlm_tasks.generate(name, 2 ** 15)
    answer, tree, _ = run_rlm("scripted-chunked-llm", task.question, task.context)
    assert rlm_tasks.score(task, answer) == 1.0
    assert tree.rlms == [0] and tree.llm_calls == 4


@pytest.mark.parametrize("n", [16, 64])
def test_wide_starts_n_children_at_once(n):
    answer, tree, messages = run_rlm(f"scripted-wide-{n}", "Start the children.", "unused")
    assert answer == str(sum(range(n)))
    assert sorted(tree.rlms) == [0] + [1] * n
    assert "concurrency=n" in messages[2]["content"]


def test_serial_children_carry_the_time_of_their_call():
    answer, tree, messages = run_rlm("scripted-serial-3", "Start the children.", None)
    assert answer == "3" and sorted(tree.rlms) == [0, 1, 1, 1]
    assert "sent_at={time.time()!r}" in messages[2]["content"]
    body = {"model": "scripted-serial-3", "messages": [{"role": "system", "content": SYSTEM.format(depth=1)}, {
        "role": "user", "content": first_user("Reply with the number in the context. sent_at=1700000000.25", "7")}]}
    entry = scripted_model.log_entry(body, 1700000000.5, 1700000000.6, "x")
    assert entry["sent_at"] == 1700000000.25 and entry["kind"] == "rlm-turn" and entry["depth"] == 1
    assert entry["policy"] == "echo"


def test_steps_takes_n_turns_of_trivial_code():
    answer, tree, _ = run_rlm("scripted-steps-5", "Take steps.", "c")
    assert answer == "4" and tree.turns == 6


def test_answer_without_code_never_writes_code():
    answer, tree, messages = run_rlm("scripted-answer-without-code", "What is it?", "c", max_turns=3)
    assert answer is None
    replies = [m["content"] for m in messages if m["role"] == "assistant"]
    assert len(replies) == 3 and all("FINAL(42)" in r and not CODE.search(r) for r in replies)
    assert all(m["content"].startswith("No code ran") for m in messages[3::2])


def test_code_and_answer_answers_from_its_code_when_asked_again():
    answer, tree, messages = run_rlm("scripted-code-and-answer", "What is six times seven?", "c")
    first = messages[2]["content"]
    assert CODE.search(first) and "FINAL(42)" in CODE.sub("", first)
    assert "Your answer came with code" in messages[3]["content"] and "42" in messages[3]["content"]
    assert answer == "42" and tree.turns == 2


def test_never_answers_prints_every_turn():
    answer, tree, messages = run_rlm("scripted-never-answers", "Q", "c", max_turns=4)
    assert answer is None and tree.turns == 4
    assert [m["content"] for m in messages[3::2]] == [f"REPL output:\nstill working {i}\n" for i in range(4)]


def test_always_errors_raises_every_turn():
    answer, _, messages = run_rlm("scripted-always-errors", "Q", "c", max_turns=3)
    assert answer is None
    assert all("ValueError: scripted failure" in m["content"] for m in messages[3::2])


def test_big_output_prints_100k_characters_then_answers_with_what_it_was_shown():
    answer, _, messages = run_rlm("scripted-big-output", "Q", "c", output_cap=20_000)
    assert len(messages[3]["content"]) < 20_100 and "cut at 20000" in messages[3]["content"]
    assert answer == str(len(messages[3]["content"]))
    _, _, uncapped = run_rlm("scripted-big-output", "Q", "c", output_cap=10 ** 6, max_turns=1)
    assert uncapped[3]["content"].count("x") == 100_000


def run_block_in_a_process(reply, timeout):
    code = "\n".join(CODE.findall(reply))
    return subprocess.run([sys.executable, "-c", "context = 'c'\n" + code], capture_output=True, timeout=timeout)


def test_crash_kills_its_own_process():
    reply = chat("scripted-crash", [{"role": "system", "content": SYSTEM.format(depth=1)},
                                    {"role": "user", "content": first_user("Q", "c")}])
    assert run_block_in_a_process(reply, 30).returncode == -9


def test_sleeper_sleeps():
    reply = chat("scripted-sleeper", [{"role": "system", "content": SYSTEM.format(depth=0)},
                                      {"role": "user", "content": first_user("Q", "c")}])
    with pytest.raises(subprocess.TimeoutExpired):
        run_block_in_a_process(reply, 1.5)


def test_verbose_passes_the_window_and_finds_its_variable_after_compaction():
    answer, tree, messages = run_rlm("scripted-verbose", "Q", "c", window_chars=12_000, max_turns=30)
    assert answer == "sentinel-7321 history:list"
    assert any(m["content"].startswith("Earlier turns were summarized") for m in messages)
    assert 3 < tree.turns < 30


def test_verbose_without_compaction_says_so_in_the_end():
    answer, _, _ = run_rlm("scripted-verbose", "Q", "c", max_turns=70)
    assert answer == "NO COMPACTION"


def test_summary_request_in_an_rlm_conversation_gets_text_without_code():
    messages = [{"role": "system", "content": SYSTEM.format(depth=0)},
                {"role": "user", "content": first_user("Q", "c")},
                {"role": "assistant", "content": "x"},
                {"role": "user", "content": "Summarize your progress so far."}]
    reply = chat("scripted-niah", messages)
    assert reply.startswith("Progress:") and not CODE.search(reply)


def test_plain_sub_calls_are_answered_from_the_prompt():
    task = rlm_tasks.generate("niah", 2 ** 13)
    assert chat("scripted", [{"role": "user", "content": "Find the magic number in this text: " + task.context}]) \
        == task.expected
    assert chat("scripted-niah", [{"role": "user", "content": "Find the magic number in this text: none"}]) == "NONE"
    records = rlm_tasks.generate("oolong", 2 ** 13)
    counted = chat("scripted", [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Count the labels in: " + records.context}])
    assert rlm_tasks.score(records, counted) == 1.0
    pairs = rlm_tasks.generate("pairs", 2 ** 13)
    assert rlm_tasks.score(pairs, chat("scripted", [{"role": "user", "content": pairs.question + "\n" +
                                                     pairs.context}])) == 1.0
    assert chat("scripted", [{"role": "user", "content": "Summarize your progress"}]).startswith("Progress")
    assert chat("scripted", [{"role": "user", "content": "Reply with the number in the context. sent_at=1.5\n12"}]) \
        == "12"
    assert chat("scripted", [{"role": "user", "content": "hello   there"}]) == "scripted reply: hello there"


def test_requests_are_told_apart_and_policies_picked():
    rlm = {"model": "scripted-chunked-rlm", "messages": [
        {"role": "system", "content": SYSTEM.format(depth=1)},
        {"role": "user", "content": first_user(scripted_model.CHILD_QUESTIONS["oolong"], "abc")}]}
    d = scripted_model.describe(rlm)
    assert d["kind"] == "rlm-turn" and d["policy"] == "oolong" and d["turns"] == 0
    assert d["question"] == scripted_model.CHILD_QUESTIONS["oolong"]
    no_context = {"model": "scripted", "messages": [
        {"role": "system", "content": SYSTEM.format(depth=0)},
        {"role": "user", "content": first_user("Take steps", None)}]}
    assert scripted_model.describe(no_context)["policy"] == "steps-5"
    plain = {"model": "scripted-niah", "messages": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Hi"}]}
    assert scripted_model.describe(plain)["kind"] == "sub-call"
    with pytest.raises(ValueError, match="unknown policy"):
        chat("scripted-nonesuch", rlm["messages"])


def test_usage_is_about_a_token_per_four_characters():
    body = {"model": "scripted", "messages": [{"role": "system", "content": "s" * 400},
                                              {"role": "user", "content": "u" * 400}]}
    answer = scripted_model.complete(body)
    text = answer["choices"][0]["message"]["content"]
    assert answer["usage"]["prompt_tokens"] == 200
    assert answer["usage"]["completion_tokens"] == -(-len(text) // 4)


@pytest.fixture
def endpoint(tmp_path):
    """bench/scripted_model.py run as the benchmark runs it; yields (base URL, log path)."""
    log = tmp_path / "requests.jsonl"
    proc = subprocess.Popen([sys.executable, os.path.join(BENCH, "scripted_model.py"), "--port", "0",
                             "--delay-ms", "100", "--log", str(log)], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert re.fullmatch(r"listening \d+\n", line), line
        yield f"http://127.0.0.1:{line.split()[1]}", log
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.loads(r.read())


def test_http_server_answers_logs_and_runs_requests_in_parallel(endpoint):
    base, log = endpoint
    turn = {"model": "scripted-niah", "messages": [
        {"role": "system", "content": SYSTEM.format(depth=2)},
        {"role": "user", "content": first_user("Find the magic number. sent_at=12.5", "abc")}]}
    answer = post(base + "/v1/chat/completions", turn)
    assert "```repl" in answer["choices"][0]["message"]["content"] and answer["usage"]["prompt_tokens"] > 0
    sub = post(base + "/chat/completions", {"model": "scripted", "messages": [
        {"role": "user", "content": "Find the magic number in this text: the magic number is 99."}]})
    assert sub["choices"][0]["message"]["content"] == "99"
    started = time.time()
    threads = [threading.Thread(target=post, args=(base + "/v1/chat/completions", turn)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.time() - started < 0.6  # 8 requests of 100 ms each, at once
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(entries) == 10
    first, second = entries[0], entries[1]
    assert first["kind"] == "rlm-turn" and first["depth"] == 2 and first["sent_at"] == 12.5
    assert first["policy"] == "niah" and first["done"] - first["t"] >= 0.1 and abs(first["t"] - time.time()) < 30
    assert second["kind"] == "sub-call" and second["sent_at"] is None and second["chars"] > 0


def test_http_server_refuses_bad_requests(endpoint):
    base, _ = endpoint
    with pytest.raises(urllib.error.HTTPError) as bad:
        post(base + "/v1/chat/completions", {"model": "scripted"})
    assert bad.value.code == 400 and "messages" in json.loads(bad.value.read())["error"]["message"]
    with pytest.raises(urllib.error.HTTPError) as missing:
        post(base + "/v1/completions", {"model": "scripted", "messages": []})
    assert missing.value.code == 404


def test_the_benchmark_reads_child_start_times_from_the_endpoints_log(tmp_path, monkeypatch):
    """A run whose model calls go over HTTP to the endpoint as bin/bench starts it: the log gives, per child,
    the time from its rlm_query call to its first request, and the root's turns in order."""
    import rlm_bench
    endpoint = rlm_bench.Endpoint(str(tmp_path))
    try:
        def endpoint_chat(model, messages):
            reply = post(endpoint.url + "/chat/completions", {"model": model, "messages": messages})
            return reply["choices"][0]["message"]["content"]
        monkeypatch.setattr(sys.modules[__name__], "chat", endpoint_chat)
        mark = endpoint.mark()
        answer, _, _ = run_rlm("scripted-serial-5", "Start the children.", None)
        assert answer == "10"
        entries = endpoint.entries(mark)
        waits = rlm_bench.first_requests(entries, {"serial-5"})
        assert len(waits) == 5 and all(0 <= ms < 5000 for ms in waits)
        roots = [e for e in entries if e["policy"] == "serial-5"]
        assert [e["turns"] for e in roots] == [0] and roots[0]["done"] >= roots[0]["t"]
        assert rlm_bench.first_requests(endpoint.entries(endpoint.mark()), set()) == []
    finally:
        endpoint.close()


def test_the_benchmark_finds_a_run_and_its_times_in_a_trace():
    import rlm_bench
    run = {"run_id": "r2", "root": {"iterations": [
        {"ms": 9.0, "model_ms": 5.0, "code_blocks": [{"ms": 1.5, "exec_ms": 1.0}, {"ms": 0.5}]},
        {"ms": 4.0, "code_blocks": []}]}}
    trace = {"steps": [{"kind": "exec"}, {"kind": "rlm", "rlm": {"run_id": "r1", "root": {}}},
                       {"kind": "rlm", "rlm": run}]}
    assert rlm_bench.find_run(trace, "r2") is run
    assert rlm_bench.turn_times(run) == [{"ms": 9.0, "model_ms": 5.0, "exec_ms": 1.5},
                                         {"ms": 4.0, "model_ms": None, "exec_ms": 0}]
    assert rlm_bench.turn_times(None) is None
    assert os.getpid() in rlm_bench.proc_tree(os.getppid())
