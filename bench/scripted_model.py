"""A scripted OpenAI-compatible chat completions server: a deterministic stand-in for a model.

    python3 bench/scripted_model.py --port 0 [--delay-ms N] [--log FILE]

prints "listening <port>" and serves POST /v1/chat/completions (and /chat/completions). The request's
"model" picks a policy: "scripted-<policy>", or plain "scripted" to pick one from the question's words.
A request is either an RLM turn (its system message says "You are a Recursive Language Model"; the
model answers with ```repl code that really solves the task from `context`) or a plain sub-call
(llm_query, or rlm_query past the depth limit), answered from the prompt itself. Every answer is a
function of the messages alone (the number of assistant turns, the last user message): the server keeps
no state between requests, so any number of conversations can run through it at once.
"""
import argparse
import collections
import http.server
import itertools
import json
import re
import sys
import threading
import time

RLM_MARK = "You are a Recursive Language Model"
COMPACTED = "Earlier turns were summarized into the variable `history`"
ASKED_AGAIN = "Your answer came with code"
SUMMARIZE = "Summarize your progress"

# What a chunk's child is asked, per task; the keyword policy below maps each back to its task.
CHILD_QUESTIONS = {
    "niah": "Find the magic number in this chunk of the context. Answer with the number only, or NONE.",
    "oolong": "Count the labels in this chunk of the context. "
              "Answer with a JSON object mapping each label to its count.",
    "pairs": "List the users per code in this chunk of the context as a JSON object mapping each code to its user ids.",
}
# What a plain sub-call over a chunk is asked (the chunk follows the colon).
SUB_PROMPTS = {
    "niah": "Find the magic number in this text: ",
    "oolong": "Count the labels in: ",
    "pairs": "List the users per code in: ",
}
CHUNK_CHARS = 150_000  # a chunk stays well under the server's default largest prompt (200,000 characters)


def keyword_policy(question):
    """The policy for a question when the model name does not pick one."""
    q = question.lower()
    if "reply with the number" in q:
        return "echo"
    if "users per code" in q:
        return "codes"
    if "magic number" in q:
        return "niah"
    if "label" in q:
        return "oolong"
    if "pair" in q:
        return "pairs"
    if "steps" in q:
        return "steps-5"
    return "niah"


def task_of(question):
    """Which of the three tasks a question is about (for the chunked policies)."""
    q = question.lower()
    if "magic number" in q:
        return "niah"
    if "label" in q:
        return "oolong"
    return "pairs" if "pair" in q or "per code" in q else "niah"


def is_leaf_question(question):
    return "this chunk" in question or "Reply with the number" in question


# ---------------------------------------------------------------------------------------------- RLM turns

def block(code):
    return "```repl\n" + code.strip("\n") + "\n```"


def solve_code(task):
    """Code that computes `result` (the answer's text) from `context`, for one of the tasks."""
    text = "text = context if isinstance(context, str) else str(context)\n"
    if task == "niah":
        return text + ("import re\n"
                       "hits = re.findall(r\"magic number is (\\d+)\", text)\n"
                       "result = hits[0] if hits else \"NONE\"\n"
                       "print(len(text), hits)\n")
    if task == "oolong":
        return text + ("import collections, json, re\n"
                       "counts = collections.Counter(re.findall(r\"Label: ([a-z]+)\", text))\n"
                       "result = json.dumps(dict(sorted(counts.items())))\n"
                       "print(sum(counts.values()), counts.most_common(3))\n")
    if task == "codes":
        return text + ("import collections, json, re\n"
                       "groups = collections.defaultdict(list)\n"
                       "for user, code in re.findall(r\"User: (\\d+) .*?Code: (\\w+)\", text):\n"
                       "    groups[code].append(int(user))\n"
                       "result = json.dumps(groups)\n"
                       "print(len(groups), 'codes')\n")
    if task == "pairs":
        return text + ("import collections, itertools, re\n"
                       "groups = collections.defaultdict(set)\n"
                       "for user, code in re.findall(r\"User: (\\d+) .*?Code: (\\w+)\", text):\n"
                       "    groups[code].add(int(user))\n"
                       "pairs = sorted({p for ids in groups.values() "
                       "for p in itertools.combinations(sorted(ids), 2)})\n"
                       "result = \"\\n\".join(f\"{a},{b}\" for a, b in pairs)\n"
                       "print(len(pairs), 'pairs', pairs[:5])\n")
    raise ValueError(task)


ANSWER = 'answer["content"] = result\nanswer["ready"] = True\n'


def direct(task, turns):
    """Look, then compute, then answer: three turns, each code block standing alone."""
    if turns == 0:
        return ("Let me look at the context first.\n\n" +
                block("print(type(context).__name__, len(context))\nprint(str(context)[:300])"))
    if turns == 1:
        return f"Now I compute the answer with code.\n\n{block(solve_code(task))}"
    return f"The code found it; I answer with the computed value.\n\n{block(solve_code(task) + ANSWER)}"


SPLIT = """parts = int({k})
text = context if isinstance(context, str) else str(context)
parts = max(parts, -(-len(text) // {chunk}))
cuts = [0]
for i in range(1, parts):  # each cut just after a newline, so that no line is split
    cut = text.find("\\n", max(cuts[-1], i * len(text) // parts)) + 1
    cuts.append(cut if cut > cuts[-1] else cuts[-1])
cuts.append(len(text))
chunks = [text[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]
"""

AGGREGATE = {
    "niah": """import re
found = [a.strip() for a in answers if re.fullmatch(r"\\s*\\d+\\s*", a)]
result = found[0] if found else "NONE"
""",
    "oolong": """import collections, json, re
counts = collections.Counter()
for a in answers:
    m = re.search(r"\\{.*\\}", a, re.S)
    if m:
        counts.update({k: int(v) for k, v in json.loads(m.group(0)).items()})
result = json.dumps(dict(sorted(counts.items())))
""",
    "pairs": """import collections, itertools, json, re
groups = collections.defaultdict(set)
for a in answers:
    m = re.search(r"\\{.*\\}", a, re.S)
    if m:
        for code, ids in json.loads(m.group(0)).items():
            groups[code].update(int(i) for i in ids)
pairs = sorted({p for ids in groups.values() for p in itertools.combinations(sorted(ids), 2)})
result = "\\n".join(f"{a},{b}" for a, b in pairs)
""",
}


def chunked(task, question, turns, recursive):
    """Split `context` into chunks, one sub-call each (child RLMs or plain completions), then aggregate."""
    m = re.search(r"(\d+) chunks", question)
    split = SPLIT.format(k=int(m.group(1)) if m else 4, chunk=CHUNK_CHARS)
    if recursive:
        call = f"answers = rlm_query_batched([{CHILD_QUESTIONS[task]!r}] * len(chunks), chunks)\n"
    else:
        call = f"answers = llm_query_batched([{SUB_PROMPTS[task]!r} + c for c in chunks])\n"
    if turns == 0:
        return (f"I split the context into chunks and give each to a {'child RLM' if recursive else 'sub-LLM'}.\n\n"
                + block(split + call + "print(len(chunks), 'chunks;', [a[:80] for a in answers])"))
    return ("I aggregate the answers of the chunks.\n\n" +
            block("try:\n    answers\nexcept NameError:\n" + indent(split + call) + AGGREGATE[task] + ANSWER))


def indent(code):
    return "".join("    " + line + "\n" for line in code.splitlines())


def wide(n, turns):
    """n children at once, each on a tiny context (its number); the answer is the sum of their answers."""
    code = (f"import time\nn = {n}\n"
            "replies = rlm_query_batched([f\"Reply with the number in the context. sent_at={time.time()!r}\" "
            "for i in range(n)], [str(i) for i in range(n)], concurrency=n)\n"
            "ok = [int(r) for r in replies if r.strip().isdigit()]\n"
            "result = str(sum(ok))\n"
            "print(len(ok), 'of', n, 'children answered; sum', result)\n")
    return f"I start {n} children at once.\n\n" + block(code + ANSWER)


def serial(n, turns):
    """n children one after the other: each child's prompt carries the time rlm_query was called."""
    code = (f"import time\nn = {n}\nreplies = []\n"
            "for i in range(n):\n"
            "    replies.append(rlm_query(f\"Reply with the number in the context. sent_at={time.time()!r}\", "
            "str(i)))\n"
            "result = str(sum(int(r) for r in replies if r.strip().isdigit()))\n"
            "print(result)\n")
    return f"I start {n} children one at a time.\n\n" + block(code + ANSWER)


def steps(n, turns):
    """n turns of trivial code, then the answer: the loop's own cost per iteration, the code costing ~nothing."""
    if turns < n:
        return f"Step {turns}.\n\n" + block(f"x = {turns}")
    return "Done.\n\n" + block('answer["content"] = str(x)\nanswer["ready"] = True')


VERBOSE_PROSE = ("I am thinking out loud at length so that this conversation grows past the context window. " * 24)


def verbose(turns, compacted):
    if compacted:
        return ("The history was compacted; the variable I set before must still be there.\n\n" +
                block('try:\n    kept = keep\nexcept NameError:\n    kept = "LOST"\n'
                      'answer["content"] = kept + " history:" + type(history).__name__\nanswer["ready"] = True'))
    if turns == 0:
        return VERBOSE_PROSE + "\n\n" + block('keep = "sentinel-7321"\nprint(keep)')
    if turns >= 60:
        return "No compaction came.\n\n" + block('answer["content"] = "NO COMPACTION"\nanswer["ready"] = True')
    return VERBOSE_PROSE + f"\n\nTurn {turns}.\n\n" + block(f"print({turns})")


def rlm_reply(policy, question, turns, last, messages):
    """The assistant's reply for one RLM turn."""
    if last.startswith(SUMMARIZE):
        return (f"Progress: {turns} turns so far on the question {question[:80]!r}; "
                "the variables I set are kept in the REPL.")
    compacted = any(m.get("role") == "user" and str(m.get("content", "")).startswith(COMPACTED) for m in messages)
    name, _, arg = policy.partition("-")
    if policy in ("niah", "oolong", "pairs", "codes"):
        return direct(policy, turns)
    if policy == "echo":
        return block('answer["content"] = str(context).strip()\nanswer["ready"] = True')
    if policy in ("chunked-rlm", "chunked-llm"):
        return chunked(task_of(question), question, turns, policy == "chunked-rlm")
    if name in ("wide", "serial", "steps") and arg.isdigit():
        return {"wide": wide, "serial": serial, "steps": steps}[name](int(arg), turns)
    if policy == "answer-without-code":
        return "I am sure of it without running anything.\n\nFINAL(42)"
    if policy == "code-and-answer":
        if ASKED_AGAIN in last:
            return "The code ran; now I answer from its result.\n\n" + block(
                'answer["content"] = str(x)\nanswer["ready"] = True')
        return "I compute and answer at once.\n\n" + block("x = 6 * 7\nprint(x)") + "\n\nFINAL(42)"
    if policy == "never-answers":
        return "Still working.\n\n" + block(f"print('still working', {turns})")
    if policy == "always-errors":
        return "Trying again.\n\n" + block(f"raise ValueError('scripted failure {turns}')")
    if policy == "big-output":
        if turns == 0:
            return "A lot of output.\n\n" + block("print('x' * 100000)")
        return "I answer with the length of the output I was shown.\n\n" + block(
            f'answer["content"] = "{len(last)}"\nanswer["ready"] = True')
    if policy == "crash":
        return "Oops.\n\n" + block("import os\nos.kill(os.getpid(), 9)")
    if policy == "sleeper":
        return "Waiting.\n\n" + block("import time\ntime.sleep(3600)")
    if policy == "verbose":
        return verbose(turns, compacted)
    raise ValueError(f"unknown policy {policy!r}")


# ------------------------------------------------------------------------------------------------ sub-calls

def sub_reply(prompt):
    """A plain completion, computed from the prompt (which carries the text it is about)."""
    if prompt.startswith(SUMMARIZE):
        return "Progress: the work so far is in the REPL's variables."
    if prompt.startswith("Reply with the number"):
        numbers = re.findall(r"(?<![\d.=])\d+(?![\d.])", prompt.split("\n", 1)[1] if "\n" in prompt else "")
        return numbers[-1] if numbers else "NONE"
    if "magic number" in prompt.lower():
        hits = re.findall(r"magic number is (\d+)", prompt)
        return hits[0] if hits else "NONE"
    if "users per code" in prompt.lower():
        groups = collections.defaultdict(list)
        for user, code in re.findall(r"User: (\d+) .*?Code: (\w+)", prompt):
            groups[code].append(int(user))
        return json.dumps(groups)
    if "label" in prompt.lower():
        counts = collections.Counter(re.findall(r"Label: ([a-z]+)", prompt))
        return json.dumps(dict(sorted(counts.items())))
    if "pair" in prompt.lower():
        groups = collections.defaultdict(set)
        for user, code in re.findall(r"User: (\d+) .*?Code: (\w+)", prompt):
            groups[code].add(int(user))
        pairs = sorted({p for ids in groups.values() for p in itertools.combinations(sorted(ids), 2)})
        return "\n".join(f"{a},{b}" for a, b in pairs) or "NONE"
    return "scripted reply: " + " ".join(prompt.split())[:80]


# ---------------------------------------------------------------------------------------------- a request

def content_of(message):
    """A message's text (content may be a string or a list of parts)."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def question_of(first_user):
    text = first_user[len("Question: "):] if first_user.startswith("Question: ") else first_user
    for marker in ("\nThe variable `context` holds", "\nThere is no `context` variable"):
        if marker in text:
            return text[:text.index(marker)]
    return text.split("\n", 1)[0]


def policy_for(model, question):
    name = model[len("scripted-"):] if model.startswith("scripted-") else ""
    if not name or (is_leaf_question(question) and (name.startswith(("chunked", "wide", "serial")))):
        return keyword_policy(question)
    return name


def describe(body):
    """What a request is: kind, policy, question, turns, last user message."""
    messages = body.get("messages") or []
    texts = [content_of(m) for m in messages]
    model = str(body.get("model") or "scripted")
    rlm = any(m.get("role") == "system" and RLM_MARK in t for m, t in zip(messages, texts))
    users = [t for m, t in zip(messages, texts) if m.get("role") == "user"]
    last = users[-1] if users else ""
    if not rlm:
        return {"kind": "sub-call", "model": model, "policy": None, "question": last, "turns": 0, "last": last,
                "texts": texts, "messages": messages}
    question = question_of(users[0] if users else "")
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    return {"kind": "rlm-turn", "model": model, "policy": policy_for(model, question), "question": question,
            "turns": turns, "last": last, "texts": texts, "messages": messages}


def reply_text(body):
    """The assistant's reply to one chat completions request body."""
    d = describe(body)
    if d["kind"] == "sub-call":
        return sub_reply(d["last"])
    return rlm_reply(d["policy"], d["question"], d["turns"], d["last"], d["messages"])


def tokens(chars):
    return max(1, (chars + 3) // 4)


def complete(body):
    """The chat completions response for one request body."""
    text = reply_text(body)
    prompt_chars = sum(len(content_of(m)) for m in body.get("messages") or [])
    return {"id": "scripted", "object": "chat.completion", "model": body.get("model") or "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": tokens(prompt_chars), "completion_tokens": tokens(len(text)),
                      "total_tokens": tokens(prompt_chars) + tokens(len(text))}}


def log_entry(body, received, done, reply):
    d = describe(body)
    system = next((t for m, t in zip(d["messages"], d["texts"]) if m.get("role") == "system"), "")
    depth = re.search(r"\bdepth (\d+)", system)
    at_limit = "depth limit is reached" in system
    sent = re.search(r"sent_at=([\d.]+)", d["question"]) if d["kind"] == "rlm-turn" else None
    return {"t": received, "done": done, "model": d["model"], "kind": d["kind"], "policy": d["policy"],
            "turns": d["turns"], "question": d["question"][:160], "depth": int(depth.group(1)) if depth else None,
            "at_depth_limit": at_limit,
            "sent_at": float(sent.group(1)) if sent else None, "chars": sum(len(t) for t in d["texts"]),
            "reply_chars": len(reply)}


# -------------------------------------------------------------------------------------------------- server

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def do_POST(self):
        received = time.time()
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            return self.send_json(404, {"error": {"message": f"no such path {self.path}; "
                                                             "use /v1/chat/completions"}})
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError("the body must be a JSON object with a \"messages\" list")
            answer = complete(body)
        except (ValueError, KeyError, TypeError) as e:
            return self.send_json(400, {"error": {"message": f"bad request: {e}"}})
        if self.server.delay_s:
            time.sleep(self.server.delay_s)
        self.send_json(200, answer)
        if self.server.log:
            entry = log_entry(body, received, time.time(), answer["choices"][0]["message"]["content"])
            with self.server.log_lock:
                self.server.log.write(json.dumps(entry) + "\n")
                self.server.log.flush()

    def do_GET(self):
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            return self.send_json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        self.send_json(404, {"error": {"message": f"no such path {self.path}"}})

    def send_json(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serve(port=0, delay_ms=0, log=None, host="127.0.0.1"):
    """A started server (serve_forever on a daemon thread); .server_address[1] is its port."""
    server = http.server.ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    server.delay_s = delay_ms / 1000
    server.log = open(log, "a", encoding="utf-8") if log else None
    server.log_lock = threading.Lock()
    return server


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--delay-ms", type=float, default=0, help="time to wait before each answer")
    parser.add_argument("--log", help="append one JSON line per request to this file")
    args = parser.parse_args(argv)
    server = serve(args.port, args.delay_ms, args.log, args.host)
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    sys.exit(main())
