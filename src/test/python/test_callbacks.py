import json
import os
import threading
import traceback

import pytest

from conftest import FRAME_HEAD, encode
from rlm_harness.callbacks import CallbackError, Callbacks, LLMQueryError, Pending, llm_functions
from rlm_harness.protocol import Channel


def test_pending_returns_the_result():
    p = Pending(1, "llm")
    assert not p.done()
    p.set({"cb": 1, "ok": True, "result": {"x": 1}})
    assert p.done() and p.result() == {"x": 1}


def test_pending_raises_the_hosts_error():
    p = Pending(2, "mcp")
    p.set({"ok": False, "error": {"code": "LIMIT_EXCEEDED", "message": "too many"}})
    with pytest.raises(CallbackError) as e:
        p.result()
    assert (e.value.code, str(e.value), e.value.kind) == ("LIMIT_EXCEEDED", "too many", "mcp")


def test_pending_without_an_error_body_and_timeout():
    p = Pending(3, "x")
    with pytest.raises(TimeoutError, match="within 0.01 s"):
        p.result(0.01)
    p.set({"ok": False})
    with pytest.raises(CallbackError) as e:
        p.result()
    assert (e.value.code, str(e.value)) == ("ERROR", "the host refused the request")


def test_requests_outside_an_exec_are_refused():
    callbacks = Callbacks(None)
    with pytest.raises(CallbackError) as e:
        callbacks.submit("llm", {})
    assert e.value.code == "NOT_RUNNING"


class Host:
    """The host's side of the pipes: answers callbacks with answer(kind, request) -> reply fields."""

    def __init__(self, answer):
        to_kernel_r, self.out = os.pipe()
        self.inp, from_kernel_w = os.pipe()
        self.channel = Channel(to_kernel_r, from_kernel_w)
        # write ends first: the readers see end of file and stop before any read end is closed, so that
        # neither reads a later test's pipe that got the same fd number
        self.fds = {"out": self.out, "from_kernel_w": from_kernel_w, "inp": self.inp, "to_kernel_r": to_kernel_r}
        self.answer, self.seen = answer, []
        self.reader = os.fdopen(self.inp, "rb", closefd=False)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            head = self.reader.read(FRAME_HEAD.size)
            if len(head) < FRAME_HEAD.size:
                return
            n, _ = FRAME_HEAD.unpack(head)
            header = json.loads(self.reader.read(n))
            self.seen.append(header)
            if header.get("cb_close"):
                os.write(self.out, encode({"cb_closed": True}))
                continue
            reply = self.answer(header["kind"], header["request"])
            if reply is not None:
                os.write(self.out, encode(dict(reply, cb=header["cb"])))

    def close_out(self):
        """The host goes away: the kernel's side of the pipe sees end of file."""
        self._close("out")

    def close(self):
        self._close("out")
        self._close("from_kernel_w")
        self.thread.join(5)
        self._close("inp")
        self._close("to_kernel_r")

    def _close(self, name):
        fd = self.fds.pop(name, None)
        if fd is not None:
            os.close(fd)


@pytest.fixture
def host():
    hosts = []

    def make(answer):
        h = Host(answer)
        hosts.append(h)
        return h

    yield make
    for h in hosts:
        h.close()


def test_a_callback_round_trip_and_the_close_handshake(host):
    h = host(lambda kind, request: {"ok": True, "result": {"kind": kind, **request}})
    callbacks = Callbacks(h.channel)
    callbacks.begin()
    assert callbacks.call("echo", {"n": [1, 2]}) == {"kind": "echo", "n": [1, 2]}
    assert callbacks.call("echo", {"n": 3}) == {"kind": "echo", "n": 3}
    callbacks.end()
    assert h.seen[0] == {"cb": 1, "kind": "echo", "request": {"n": [1, 2]}}
    assert h.seen[-1] == {"cb_close": True}
    assert callbacks.reader is None
    with pytest.raises(CallbackError):
        callbacks.call("echo", {})


def test_llm_and_rlm_requests_carry_what_the_step_printed_since_the_last_one(host):
    h = host(lambda kind, request: {"ok": True, "result": {}})
    printed = iter(["first\n", "", "second\n"])
    callbacks = Callbacks(h.channel)
    callbacks.begin(lambda: next(printed))
    callbacks.call("llm", {"prompts": ["a"]})
    callbacks.call("mcp", {"tool": "t"})
    callbacks.call("rlm", {"prompts": ["b"]})
    callbacks.call("llm", {"prompts": ["c"]})
    callbacks.end()
    assert [m["request"].get("printed") for m in h.seen[:4]] == ["first\n", None, "", "second\n"]


def test_answers_may_come_in_any_order(host):
    h = host(lambda kind, request: None)  # the test answers, last first
    callbacks = Callbacks(h.channel)
    callbacks.begin()
    waiting = [callbacks.submit("square", {"i": i}) for i in range(3)]
    while len(h.seen) < 3:
        threading.Event().wait(0.01)
    for p in reversed(waiting):
        os.write(h.out, encode({"cb": p.cid, "ok": True, "result": p.cid * p.cid}))
    assert [p.result(5) for p in waiting] == [1, 4, 9]
    callbacks.end()


def test_ending_abandons_requests_still_waiting(host):
    h = host(lambda kind, request: None)  # never answers
    callbacks = Callbacks(h.channel)
    callbacks.begin()
    pending = callbacks.submit("slow", {})
    callbacks.end()
    with pytest.raises(CallbackError) as e:
        pending.result(5)
    assert e.value.code == "ABANDONED"


def test_a_closed_pipe_fails_waiting_requests(host):
    h = host(lambda kind, request: None)
    callbacks = Callbacks(h.channel)
    callbacks.begin()
    pending = callbacks.submit("slow", {})
    h.close_out()
    with pytest.raises(CallbackError) as e:
        pending.result(5)
    assert e.value.code == "HOST_GONE"


class StubCallbacks:
    def __init__(self, answer):
        self.answer, self.requests = answer, []

    def call(self, kind, request):
        self.requests.append((kind, request))
        return self.answer(request)


def test_llm_query_sends_one_prompt_and_returns_its_text():
    stub = StubCallbacks(lambda r: {"answers": [{"text": "42"}]})
    llm_query, _ = llm_functions(stub)
    assert llm_query("q?", system="be brief", max_tokens=10, model="m") == "42"
    assert stub.requests == [("llm", {"prompts": ["q?"], "system": "be brief", "max_tokens": 10, "model": "m"})]


@pytest.mark.parametrize("call, message", [
    (lambda q, b: q(1), "prompt must be a str, not int"),
    (lambda q, b: q("x", max_tokens=0), "max_tokens must be a positive int or None, not 0"),
    (lambda q, b: q("x", max_tokens=True), "max_tokens must be a positive int or None, not True"),
    (lambda q, b: q("x", system=3), "system must be str or None, not 3"),
    (lambda q, b: b("one"), "prompts must be a list of str, not a str"),
    (lambda q, b: b(["a", 2]), r"prompts\[1\] must be a str, not int"),
    (lambda q, b: b(["a"], concurrency=-1), "concurrency must be a positive int or None, not -1"),
])
def test_llm_arguments_are_checked_before_any_request(call, message):
    stub = StubCallbacks(lambda r: pytest.fail("no request expected"))
    with pytest.raises(TypeError, match=message):
        call(*llm_functions(stub))


def test_llm_query_batched_returns_answers_in_order():
    stub = StubCallbacks(lambda r: {"answers": [{"text": p.upper()} for p in r["prompts"]]})
    _, batched = llm_functions(stub)
    assert batched([]) == []
    assert stub.requests == []
    assert batched(("a", "b"), concurrency=2) == ["A", "B"]
    assert stub.requests[0][1]["batched"] is True and stub.requests[0][1]["concurrency"] == 2


def test_llm_query_batched_failures_keep_the_other_answers():
    answers = [{"text": "ok"}, {"error": {"code": "TIMEOUT", "message": "slow"}}, {"text": "ok2"}]
    _, batched = llm_functions(StubCallbacks(lambda r: {"answers": answers}))
    with pytest.raises(LLMQueryError) as e:
        batched(["a", "b", "c"])
    assert e.value.code == "TIMEOUT"
    assert str(e.value) == "1 of 3 prompts failed; prompt 1: slow"
    assert e.value.answers == ["ok", None, "ok2"] and e.value.errors == [(1, "TIMEOUT", "slow")]


def test_a_refused_llm_call_raises_llmqueryerror():
    def refuse(request):
        raise CallbackError("NOT_CONFIGURED", "no backend", "llm")

    llm_query, _ = llm_functions(StubCallbacks(refuse))
    with pytest.raises(LLMQueryError) as e:
        llm_query("x")
    assert (e.value.code, str(e.value), e.value.kind) == ("NOT_CONFIGURED", "no backend", "llm")
    assert isinstance(e.value, CallbackError)


def test_user_code_sees_the_names_without_a_module_path():
    line = traceback.format_exception_only(LLMQueryError, LLMQueryError("TIMEOUT", "slow"))[-1]
    assert line == "LLMQueryError: slow\n"
    llm_query, batched = llm_functions(StubCallbacks(lambda r: None))
    assert llm_query.__module__ == batched.__module__ == CallbackError.__module__ == "__main__"
