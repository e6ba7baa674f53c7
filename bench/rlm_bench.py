"""bin/bench --only rlm: RLM runs through the MCP tool rlm_solve, on the offline tasks of rlm_tasks.py.

With the scripted model (bench/scripted_model.py, always): accuracy, tokens and time per task, size and
mode; the server's own time per iteration; the time from rlm_query to the child's first model request;
16 and 64 children at once (wall time, kernels and memory of the tree). With a real OpenAI-compatible
endpoint (RLM_LLM_BASE_URL, RLM_LLM_API_KEY, RLM_LLM_MODEL set): the same tasks for the base model (the
whole context in one prompt, where it fits), RLM depth 1 and depth 2, as in the RLM paper's table.
"""
import contextlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

import rlm_tasks

HERE = os.path.dirname(os.path.abspath(__file__))
GOAL_ITERATION_MS = 2
GOAL_FIRST_REQUEST_MS = 10
# The scripted modes: the root solves the task in its own REPL; the root gives each chunk to llm_query;
# the root gives each chunk to a child RLM (rlm_query), whose own REPL solves it.
SCRIPTED_MODES = [("repl only, depth 1", "scripted-{task}", 1),
                  ("llm_query per chunk, depth 1", "scripted-chunked-llm", 1),
                  ("rlm_query per chunk, depth 2", "scripted-chunked-rlm", 2)]


class Endpoint:
    """bench/scripted_model.py in a process of its own, logging every request to a file."""

    def __init__(self, workdir):
        self.log = os.path.join(workdir, "scripted-model.jsonl")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "scripted_model.py"), "--port", "0",
                                      "--log", self.log], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening "):
            self.close()
            raise RuntimeError(f"the scripted model did not start: {line!r}")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/v1"

    def mark(self):
        return os.path.getsize(self.log) if os.path.exists(self.log) else 0

    def entries(self, since=0):
        """The requests logged after mark `since`."""
        if not os.path.exists(self.log):
            return []
        with open(self.log, encoding="utf-8") as f:
            f.seek(since)
            return [json.loads(line) for line in f if line.strip()]

    def close(self):
        self.proc.terminate()
        self.proc.wait(10)
        self.proc.stdout.close()


@contextlib.contextmanager
def without_llm_environment():
    """The scripted rows use the scripted endpoint only: a configured real one's variables are set aside."""
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("RLM_LLM_")}
    try:
        yield
    finally:
        os.environ.update(saved)


class Solver:
    """rlm_solve on one server, with the limits its schema knows (the others are named once and left out)."""

    def __init__(self, client):
        self.client = client
        tools = {t["name"]: t for t in client.request("tools/list")["tools"]}
        self.tool = tools.get("rlm_solve")
        self.known = set((self.tool or {}).get("inputSchema", {}).get("properties", {}))
        self.dropped = set()

    def solve(self, question, context, **arguments):
        kept = {}
        for name, value in arguments.items():
            if name in self.known or not self.known:
                kept[name] = value
            else:
                self.dropped.add(name)
        started = time.perf_counter()
        reply = self.client.tool("rlm_solve", question=question, context=context, **kept)
        wall_ms = (time.perf_counter() - started) * 1000
        return reply, reply.get("figures") or {}, wall_ms

    def trajectory(self, reply):
        """The run's tree from the session's trace (the entry the reply names); None if it names none."""
        session, entry = reply.get("session_id"), reply.get("trace_entry")
        if not session:
            return None
        span = {} if entry is None else {"start": entry, "end": entry + 1}
        try:
            trace = self.client.tool("rlm_get_trace", session_id=session, **span)
        except RuntimeError:
            return None
        return find_run(trace, reply.get("run_id"))

    def forget(self, reply):
        """Deletes the session a run loaded its context into, so that runs do not pile up kernels."""
        if reply.get("session_id"):
            try:
                self.client.tool("rlm_delete_session", session_id=reply["session_id"])
            except RuntimeError:
                pass


def find_run(value, run_id):
    """The trajectory (a dict with "root") of run_id anywhere in a trace."""
    if isinstance(value, dict):
        if "root" in value and (run_id is None or value.get("run_id") == run_id):
            return value
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = find_run(item, run_id)
            if found:
                return found
    return None


def turn_times(trajectory):
    """Per iteration of the root RLM: its wall time, the model call's, and the kernel's own time running its code
    blocks (ms; a block without the kernel's figure counts its wall time). None without a trajectory."""
    if not trajectory:
        return None
    times = []
    for it in trajectory["root"].get("iterations") or []:
        blocks = it.get("code_blocks") or []
        times.append({"ms": float(it.get("ms") or 0), "model_ms": it.get("model_ms"),
                      "exec_ms": sum(float(b["exec_ms"] if b.get("exec_ms") is not None else b.get("ms") or 0)
                                     for b in blocks)})
    return times


def p(samples, q):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))] if ordered else float("nan")


def proc_tree(root):
    """root and its descendants, from /proc (no process started to look)."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


class TreeWatch:
    """Samples, every 50 ms while a run goes, the server's Python kernels and their memory (PSS)."""

    def __init__(self, server_pid, memory, python_processes):
        self.server_pid, self.memory, self.python_processes = server_pid, memory, python_processes
        self.peak_kernels, self.peak_pss, self.stop = 0, 0, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            kernels = self.python_processes(proc_tree(self.server_pid))
            self.peak_kernels = max(self.peak_kernels, len(kernels))
            self.peak_pss = max(self.peak_pss, self.memory(kernels)["pss"])
            self.stop.wait(0.05)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def context_file(data_root, task):
    name = f"{task.name}-{task.tokens}-{task.seed}.txt"
    path = os.path.join(data_root, name)
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(task.context)
        os.chmod(path, 0o644)
    return {"file": name}


def tokens_label(tokens):
    return f"{tokens // 1024}K" if tokens < 2 ** 20 else f"{tokens // 2 ** 20}M"


def task_table(solver, data_root, sizes, modes, limits, price=None, base=None):
    """Per task, size and mode: score, iterations, children, depth, tokens, cost, time. Returns the rows."""
    rows = []
    print(f"  {'task':<7} {'size':>5} {'mode':<30} {'score':>5} {'iter':>4} {'kids':>4} {'dep':>3} "
          f"{'in tok':>9} {'out tok':>8} {'cost $':>8} {'time ms':>9}  stopped")
    for name in ("niah", "oolong", "pairs"):
        for tokens in sizes:
            task = rlm_tasks.generate(name, tokens)
            if base:
                rows.append(print_row(name, tokens, "base model, whole context", *base(task), price))
            for label, model, depth in modes:
                try:
                    reply, figures, wall_ms = solver.solve(task.question, context_file(data_root, task),
                                                           model=model.format(task=name), max_depth=depth, **limits)
                except RuntimeError as e:  # a refused call: its row says why, the others still run
                    reply, figures, wall_ms = {"stopped_by": f"ERROR {str(e)[:100]}"}, {}, 0.0
                solver.forget(reply)
                score = rlm_tasks.score(task, reply.get("answer") or "")
                rows.append(print_row(name, tokens, label, score, figures, wall_ms, reply.get("stopped_by"), price))
    return rows


def print_row(name, tokens, label, score, figures, wall_ms, stopped, price):
    cost = figures.get("cost_usd")
    if cost is None and price and figures:
        cost = (figures.get("input_tokens", 0) * price[0] + figures.get("output_tokens", 0) * price[1]) / 1e6
    elapsed = figures.get("elapsed_ms", wall_ms)
    print(f"  {name:<7} {tokens_label(tokens):>5} {label:<30} {score:>5.2f} {figures.get('iterations', '-'):>4} "
          f"{figures.get('children', '-'):>4} {figures.get('depth_reached', '-'):>3} "
          f"{figures.get('input_tokens', 0):>9} {figures.get('output_tokens', 0):>8} "
          f"{'-' if cost is None else f'{cost:.4f}':>8} {elapsed:>9.0f}  {stopped or ''}")
    return {"task": name, "tokens": tokens, "mode": label, "score": score, "cost": cost, "ms": elapsed, **figures}


def summary(rows):
    by_mode = {}
    for row in rows:
        by_mode.setdefault(row["mode"], []).append(row)
    for mode, items in by_mode.items():
        scores = {n: statistics.mean(r["score"] for r in items if r["task"] == n) for n in ("niah", "oolong", "pairs")
                  if any(r["task"] == n for r in items)}
        print(f"  {mode:<30} mean score " + ", ".join(f"{n} {s:.2f}" for n, s in scores.items()) +
              f"; tokens {sum(r.get('input_tokens', 0) + r.get('output_tokens', 0) for r in items)}")


def iteration_overhead(solver, endpoint, runs=3, steps=30):
    """The server's own time per iteration, model and code time excluded: from the trajectory (a turn's
    wall time less its model call and the kernel's time running its code), and from the endpoint's side
    (the model's reply sent to the next request received, less the kernel's time running that turn's code)."""
    gaps, own, per_run = [], [], []
    for _ in range(runs):
        mark = endpoint.mark()
        reply, figures, wall_ms = solver.solve("Take steps.", {"text": "steps"}, model=f"scripted-steps-{steps}",
                                               max_depth=1, max_iterations=steps + 5)
        turns = sorted((e for e in endpoint.entries(mark) if e["kind"] == "rlm-turn"), key=lambda e: e["turns"])
        times = solver.trajectory(reply)
        times = turn_times(times) or []
        solver.forget(reply)
        own.extend(t["ms"] - t["model_ms"] - t["exec_ms"] for t in times if t["model_ms"] is not None)
        for i, (a, b) in enumerate(zip(turns, turns[1:])):
            gaps.append((b["t"] - a["done"]) * 1000 - (times[i]["exec_ms"] if i < len(times) else 0))
        model_ms = sum((e["done"] - e["t"]) * 1000 for e in turns)
        elapsed = figures.get("elapsed_ms", wall_ms)
        per_run.append((elapsed - model_ms - sum(t["exec_ms"] for t in times)) / max(1, len(turns)))
    print(f"  server time per iteration ({runs} runs of {steps} turns of `x = i`; model and code time excluded), "
          f"goal <= {GOAL_ITERATION_MS} ms p50: "
          + (f"from the trajectory p50 {p(own, 50):.2f} ms, p90 {p(own, 90):.2f} ms; " if own else
             "(the trajectory has no model times); ")
          + f"from the model's reply to its next request p50 {p(gaps, 50):.2f} ms, p90 {p(gaps, 90):.2f} ms; "
          f"the whole run (kernel start included) per iteration: median {statistics.median(per_run):.2f} ms")


def first_requests(entries, roots):
    """Per child RLM (its first request carries sent_at), ms from its rlm_query call to that request."""
    return [(e["t"] - e["sent_at"]) * 1000 for e in entries
            if e["kind"] == "rlm-turn" and e["turns"] == 0 and e.get("sent_at") is not None
            and e["policy"] not in roots]


def child_start(solver, endpoint, children=20):
    mark = endpoint.mark()
    reply, figures, _ = solver.solve("Start the children one at a time.", {"text": "serial"},
                                     model=f"scripted-serial-{children}", max_depth=2, max_children=children + 1)
    solver.forget(reply)
    ms = first_requests(endpoint.entries(mark), {f"serial-{children}"})
    ok = reply.get("answer") == str(sum(range(children)))
    print(f"  rlm_query to the child's first model request, {children} children one at a time: p50 {p(ms, 50):.2f} ms, "
          f"p90 {p(ms, 90):.2f} ms, max {max(ms, default=float('nan')):.2f} ms over {len(ms)} children "
          f"(goal <= {GOAL_FIRST_REQUEST_MS} ms p50); "
          f"answer {'right' if ok else 'WRONG: ' + str(reply.get('answer'))[:80]}")


def wide(solver, endpoint, client, memory, python_processes, n):
    mark = endpoint.mark()
    with TreeWatch(client.proc.pid, memory, python_processes) as watch:
        reply, figures, wall_ms = solver.solve("Start the children at once.", {"text": "wide"},
                                               model=f"scripted-wide-{n}", max_depth=2, max_children=n + 1)
    solver.forget(reply)
    ms = first_requests(endpoint.entries(mark), {f"wide-{n}"})
    ok = reply.get("answer") == str(sum(range(n)))
    print(f"  {n} children at once: {figures.get('elapsed_ms', wall_ms):.0f} ms wall, {figures.get('children', '-')} "
          f"children, answer {'right' if ok else 'WRONG (' + str(reply.get('answer'))[:60] + ')'}"
          f"{'' if not reply.get('stopped_by') else ', stopped by ' + reply['stopped_by']}; to each child's first "
          f"request p50 {p(ms, 50):.1f} ms, max {max(ms, default=float('nan')):.1f} ms ({len(ms)} children; "
          f"{n - len(ms)} never reached the model); "
          f"peak {watch.peak_kernels} Python kernels under the server (warm pool included), their peak PSS "
          f"{watch.peak_pss / 2 ** 20:.0f} MiB "
          f"({watch.peak_pss / max(1, watch.peak_kernels) / 2 ** 20:.1f} MiB per kernel)")


def real_base(base_url, key, model, window_tokens):
    """The base model: the whole context and the question in one prompt, when it fits the window."""
    def run(task):
        prompt = f"{task.context}\n\nQuestion: {task.question}"
        if len(prompt) // 4 + 2000 > window_tokens:
            return 0.0, {}, 0.0, "does not fit the window"
        body = json.dumps({"model": model, "messages": [{"role": "user", "content": prompt}]}).encode()
        request = urllib.request.Request(base_url.rstrip("/") + "/chat/completions", data=body, headers={
            "Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})})
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=600) as r:
                answer = json.loads(r.read())
        except OSError as e:
            return 0.0, {}, (time.perf_counter() - started) * 1000, f"error: {str(e)[:60]}"
        ms = (time.perf_counter() - started) * 1000
        usage = answer.get("usage") or {}
        text = answer["choices"][0]["message"].get("content") or ""
        return rlm_tasks.score(task, text), {"iterations": 1, "children": 0, "depth_reached": 0,
                                             "input_tokens": usage.get("prompt_tokens", 0),
                                             "output_tokens": usage.get("completion_tokens", 0),
                                             "elapsed_ms": ms}, ms, None
    return run


def server_flags(launcher, wanted):
    """Those of wanted's flags (name -> value) that this build's `stdio --help` lists."""
    usage = subprocess.run([launcher, "stdio", "--help"], capture_output=True, text=True).stdout
    return [x for name, value in wanted.items() if name + "=" in usage for x in (name, str(value))]


def model_price(model):
    """(USD per million input, per million output) for the base model's row: RLM_BENCH_PRICE="in,out", else
    the model's entry in the server's price file (RLM_LLM_PRICES); None if neither has one."""
    if os.environ.get("RLM_BENCH_PRICE"):
        return tuple(float(x) for x in os.environ["RLM_BENCH_PRICE"].split(","))
    path = os.environ.get("RLM_LLM_PRICES")
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            entry = json.load(f).get(model)
        if entry:
            return float(entry["input_per_million"]), float(entry["output_per_million"])
    return None


def sizes_from(text):
    return [int(s) for s in text.split(",") if s.strip()]


def bench_rlm(workdir, tokens="8192,16384,32768,65536,131072,262144,524288,1048576",
              real_tokens="8192,65536,262144"):
    from bench import LAUNCHER, StdioClient, memory, python_processes
    data_root = os.path.join(workdir, "rlm-data")
    os.makedirs(data_root, exist_ok=True)
    os.chmod(data_root, 0o755)
    endpoint = Endpoint(workdir)
    try:
        with without_llm_environment():
            # 64 children at once need as many slots for one rlm_query_batched (--rlm-concurrency, default 8)
            client = StdioClient("--llm-base-url", endpoint.url, "--llm-model", "scripted", "--data-root", data_root,
                                 "--llm-max-calls", "100000", "--llm-max-calls-per-step", "10000",
                                 *server_flags(LAUNCHER, {"--rlm-concurrency": 64}))
        try:
            solver = Solver(client)
            if solver.tool is None:
                print("rlm: this build has no rlm_solve tool; nothing measured")
                return
            print("rlm: RLM runs through rlm_solve with the scripted model (bench/scripted_model.py), "
                  "contexts from files under the data root (bench/rlm_tasks.py)")
            rows = task_table(solver, data_root, sizes_from(tokens), SCRIPTED_MODES, {})
            summary(rows)
            iteration_overhead(solver, endpoint)
            child_start(solver, endpoint)
            for n in (16, 64):
                wide(solver, endpoint, client, memory, python_processes, n)
            if solver.dropped:
                print(f"  (rlm_solve has no argument {', '.join(sorted(solver.dropped))}: left out, defaults used)")
        finally:
            client.close()
    finally:
        endpoint.close()
    base_url, model = os.environ.get("RLM_LLM_BASE_URL"), os.environ.get("RLM_LLM_MODEL")
    if not base_url or not model:
        print("rlm: no real endpoint (set RLM_LLM_BASE_URL, RLM_LLM_API_KEY and RLM_LLM_MODEL for the base model, "
              "RLM depth 1 and depth 2 on the same tasks)")
        return
    price = model_price(model)
    window = int(os.environ.get("RLM_BENCH_WINDOW", "128000"))
    client = StdioClient("--data-root", data_root)
    try:
        solver = Solver(client)
        priced = f"price {price} USD per million tokens in, out" if price else "no price: set RLM_LLM_PRICES"
        print(f"rlm: {model} at {base_url} ({priced}"
              f"; base model's window {window} tokens)")
        rows = task_table(solver, data_root, sizes_from(real_tokens),
                          [("RLM depth 1", model, 1), ("RLM depth 2", model, 2)], {}, price,
                          real_base(base_url, os.environ.get("RLM_LLM_API_KEY"), model, window))
        summary(rows)
    finally:
        client.close()
