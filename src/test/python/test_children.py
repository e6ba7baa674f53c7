import base64
import json
import os
import pickle
import threading
import traceback

import pytest

from rlm_harness import children
from rlm_harness.callbacks import CallbackError
from rlm_harness.children import RLMQueryError, Transfer, describe, failure, rlm_functions
from rlm_harness.store import TRANSFER_DIR, Store


class Host:
    """The host's side of the "rlm" callback: answer(request, files) -> the result, where files maps each
    context's "file" to the bytes it held while the request was being answered."""

    def __init__(self, answer, store=None):
        self.answer, self.store, self.requests, self.files = answer, store, [], {}

    def call(self, kind, request):
        assert kind == "rlm"
        self.requests.append(request)
        for ctx in request["contexts"]:
            if ctx is not None and "file" in ctx:
                with open(os.path.join(self.store.dir, ctx["file"]), "rb") as f:
                    self.files[ctx["file"]] = f.read()
        return self.answer(request)


def texts(request):
    return {"answers": [{"text": f"answer to {p}"} for p in request["prompts"]]}


def functions(answer=texts, store=None):
    host = Host(answer, store)
    rlm_query, batched = rlm_functions(host, lambda: store)
    return host, rlm_query, batched


def transfer_files(store):
    directory = os.path.join(store.dir, TRANSFER_DIR)
    return os.listdir(directory) if os.path.isdir(directory) else []


def test_a_context_goes_as_a_transfer_file_that_is_gone_after_the_answer(tmp_path):
    store = Store(str(tmp_path))
    host, rlm_query, _ = functions(store=store)
    context = {"rows": list(range(1000)), "name": "x" * 500}
    assert rlm_query("sum the rows", context, model="m", max_iterations=5) == "answer to sum the rows"
    request = host.requests[0]
    ctx = request["contexts"][0]
    assert ctx["file"].startswith(".transfer/") and ctx["file"].endswith(".pkl") and "inline" not in ctx
    data = host.files[ctx["file"]]
    assert ctx["bytes"] == len(data) and pickle.loads(data) == context
    assert data[:2] == b"\x80\x05"  # protocol 5
    assert (ctx["type"], ctx["length"]) == ("dict", 2) and ctx["preview"] == repr(context)[:300]
    assert {k: request[k] for k in ("prompts", "model", "max_iterations", "concurrency", "batched")} == {
        "prompts": ["sum the rows"], "model": "m", "max_iterations": 5, "concurrency": None, "batched": False}
    assert transfer_files(store) == []


def test_the_transfer_file_is_removed_when_the_host_fails_too(tmp_path):
    store = Store(str(tmp_path))

    def refuse(request):
        raise CallbackError("LIMIT_EXCEEDED", "no more children", "rlm")

    host, rlm_query, batched = functions(refuse, store)
    with pytest.raises(RLMQueryError) as e:
        rlm_query("q", "some text")
    assert (e.value.code, str(e.value), e.value.kind) == ("LIMIT_EXCEEDED", "no more children", "rlm")
    assert len(host.files) == 1 and transfer_files(store) == []
    assert batched(["a", "b"], ["x", None]) == ["[rlm_query failed: LIMIT_EXCEEDED: no more children]"] * 2
    assert transfer_files(store) == []


def test_without_a_snapshot_directory_the_context_goes_inline():
    host, rlm_query, _ = functions()
    rlm_query("q", "héllo wörld " * 100)
    ctx = host.requests[0]["contexts"][0]
    data = base64.b64decode(ctx["inline"])
    assert "file" not in ctx and ctx["bytes"] == len(data) and pickle.loads(data) == "héllo wörld " * 100
    assert (ctx["type"], ctx["length"], ctx["preview"]) == ("str", 1200, ("héllo wörld " * 100)[:300])


def test_the_inline_cap_refuses_before_anything_is_sent(monkeypatch):
    monkeypatch.setattr(children, "INLINE_LIMIT", 1000)
    host, rlm_query, batched = functions()
    with pytest.raises(RLMQueryError) as e:
        rlm_query("q", "x" * 2000)
    assert e.value.code == "CONTEXT_TOO_LARGE" and "state directory" in str(e.value) and "smaller" in str(e.value)
    with pytest.raises(RLMQueryError) as e:  # the cap is on the request: 600 + 600 pickled passes it
        batched(["a", "b"], ["y" * 600, "z" * 600])
    assert e.value.code == "CONTEXT_TOO_LARGE"
    assert host.requests == []
    assert rlm_query("q", "x" * 900) == "answer to q"


def test_the_real_inline_cap_is_64_mib():
    assert children.INLINE_LIMIT == 64 << 20


def test_a_context_past_the_disk_limit_is_refused_and_leaves_no_file(tmp_path):
    store = Store(str(tmp_path), limit=64 << 10)
    host, rlm_query, _ = functions(store=store)
    with pytest.raises(RLMQueryError) as e:
        rlm_query("q", "x" * (100 << 10))
    assert e.value.code == "CONTEXT_TOO_LARGE" and "--max-disk-mb" in str(e.value)
    assert host.requests == [] and transfer_files(store) == []


class Unpicklable:
    def __reduce__(self):
        raise TypeError("cannot pickle a socket")


def test_an_unpicklable_context_raises_before_anything_is_sent(tmp_path):
    store = Store(str(tmp_path))
    host, rlm_query, batched = functions(store=store)
    for call in (lambda: rlm_query("q", threading.Lock()), lambda: batched(["a", "b"], ["ok", Unpicklable()])):
        with pytest.raises(RLMQueryError) as e:
            call()
        assert e.value.code == "CONTEXT_NOT_PICKLABLE"
        assert "Pass plain data" in str(e.value)
    with pytest.raises(RLMQueryError, match=r"the context \(a Unpicklable\) cannot be pickled.*cannot pickle a socket"):
        rlm_query("q", Unpicklable())
    assert host.requests == [] and transfer_files(store) == []  # the batch's first file went too


def test_batched_answers_in_order_with_failure_strings(tmp_path):
    store = Store(str(tmp_path))

    def some_fail(request):
        return {"answers": [{"text": "one"}, {"error": {"code": "CHILD_FAILED", "message": "kernel died"}},
                            {"text": "three"}]}

    host, _, batched = functions(some_fail, store)
    answers = batched(("a", "b", "c"), [None, [1, 2], b"raw"], model="m", max_iterations=3, concurrency=2)
    assert answers == ["one", "[rlm_query failed: CHILD_FAILED: kernel died]", "three"]
    request = host.requests[0]
    assert request["batched"] is True and request["concurrency"] == 2 and request["max_iterations"] == 3
    assert request["contexts"][0] is None
    assert [c["type"] for c in request["contexts"][1:]] == ["list", "bytes"]
    assert [pickle.loads(host.files[c["file"]]) for c in request["contexts"][1:]] == [[1, 2], b"raw"]
    assert transfer_files(store) == []


def test_batched_without_contexts_and_empty():
    host, _, batched = functions()
    assert batched([]) == [] and host.requests == []
    assert batched(["a", "b"]) == ["answer to a", "answer to b"]
    assert host.requests[0]["contexts"] == [None, None]


def test_a_single_failed_child_raises_rlmqueryerror():
    _, rlm_query, _ = functions(lambda r: {"answers": [{"error": {"code": "BUDGET_EXCEEDED", "message": "$1 spent"}}]})
    with pytest.raises(RLMQueryError) as e:
        rlm_query("q")
    assert (e.value.code, str(e.value)) == ("BUDGET_EXCEEDED", "$1 spent")
    assert isinstance(e.value, CallbackError)


@pytest.mark.parametrize("call, error, message", [
    (lambda q, b: q(1), TypeError, "prompt must be a str, not int"),
    (lambda q, b: q("x", model=3), TypeError, "model must be str or None, not 3"),
    (lambda q, b: q("x", max_iterations=0), TypeError, "max_iterations must be a positive int or None, not 0"),
    (lambda q, b: b("one"), TypeError, "prompts must be a list of str, not a str: use rlm_query"),
    (lambda q, b: b(["a", 2]), TypeError, r"prompts\[1\] must be a str, not int"),
    (lambda q, b: b(["a"], "ctx"), TypeError, "contexts must be a list as long as prompts"),
    (lambda q, b: b(["a", "b"], ["x"]), ValueError, "contexts has 1 items and prompts 2"),
    (lambda q, b: b(["a"], concurrency=0), TypeError, "concurrency must be a positive int or None, not 0"),
    (lambda q, b: b(["a"], max_iterations=True), TypeError, "max_iterations must be a positive int or None"),
])
def test_rlm_arguments_are_checked_before_any_request(call, error, message):
    host = Host(lambda r: pytest.fail("no request expected"))
    with pytest.raises(error, match=message):
        call(*rlm_functions(host, lambda: None))


def test_describe_and_failure():
    assert describe("abc") == {"type": "str", "length": 3, "preview": "abc"}
    assert describe(42) == {"type": "int", "length": None, "preview": "42"}
    assert describe(list(range(500)))["preview"] == repr(list(range(500)))[:300]
    assert failure("TIMEOUT", "slow") == "[rlm_query failed: TIMEOUT: slow]"


def test_user_code_sees_rlmqueryerror_without_a_module_path():
    line = traceback.format_exception_only(RLMQueryError, RLMQueryError("TIMEOUT", "slow"))[-1]
    assert line == "RLMQueryError: slow\n"
    q, b = rlm_functions(Host(texts), lambda: None)
    assert q.__module__ == b.__module__ == "__main__"


def test_transfer_close_removes_what_it_wrote(tmp_path):
    transfer = Transfer(Store(str(tmp_path)))
    entry = transfer.pack("data")
    assert os.path.exists(tmp_path / entry["file"])
    transfer.close()
    assert not os.path.exists(tmp_path / entry["file"]) and transfer.pack(None) is None


def test_the_snapshot_store_leaves_the_transfer_directory_alone(tmp_path):
    store = Store(str(tmp_path))
    entry, _ = store.write("v", [1, 2], None)
    store.commit({"v": entry}, {}, {})
    transfer = Transfer(store)
    kept = transfer.pack("in flight")["file"]
    # a dead kernel's leftover goes when the next kernel opens the directory; the directory stays
    reopened = Store(str(tmp_path))
    assert os.path.isdir(tmp_path / TRANSFER_DIR) and not os.path.exists(tmp_path / kept)
    assert set(reopened.entries) == {"v"} and reopened.read("v") == [1, 2]
    assert sorted(os.listdir(tmp_path)) == sorted([TRANSFER_DIR, "manifest.json", reopened.entries["v"]["file"]])


def test_the_disk_limit_counts_transfer_files(tmp_path):
    store = Store(str(tmp_path), limit=256 << 10)
    store.check_room(100 << 10)
    transfer = Transfer(store)
    transfer.pack(b"x" * (150 << 10))
    with pytest.raises(OSError, match="No space left"):
        store.check_room(100 << 10)
    transfer.close()
    store.check_room(100 << 10)


def test_rlm_query_through_a_kernel_process(start_kernel, tmp_path):
    """The callback frames as the host sees them, from a kernel with a snapshot directory."""
    snapshot = tmp_path / "snap"
    snapshot.mkdir()
    kernel = start_kernel()
    assert kernel.call("restore", dir=str(snapshot))["ok"]
    kernel.next_id += 1
    kernel.send({"id": kernel.next_id, "op": "exec",
                 "code": "big = 'ab' * 3_000_000\nprint(rlm_query('count the a', big))"})
    frame = kernel.receive()
    assert frame["kind"] == "rlm" and frame["request"]["prompts"] == ["count the a"]
    ctx = frame["request"]["contexts"][0]
    path = snapshot / ctx["file"]
    assert path.stat().st_size == ctx["bytes"] > 6_000_000
    assert pickle.loads(path.read_bytes()) == "ab" * 3_000_000
    assert (ctx["type"], ctx["length"], ctx["preview"]) == ("str", 6_000_000, "ab" * 150)
    kernel.send({"cb": frame["cb"], "ok": True, "result": {"answers": [{"text": "3000000"}]}})
    assert kernel.receive() == {"cb_close": True}
    kernel.send({"cb_closed": True})
    reply = kernel.receive()
    assert reply["ok"] and reply["stdout"] == "3000000\n"
    assert not path.exists() and os.listdir(snapshot / TRANSFER_DIR) == []
    assert kernel.call("snapshot")["ok"]
    manifest = json.loads((snapshot / "manifest.json").read_text())
    assert list(manifest["variables"]) == ["big"]
    assert sorted(os.listdir(snapshot)) == [TRANSFER_DIR, manifest["variables"]["big"]["file"], "manifest.json"]
    assert [v["name"] for v in kernel.call("vars")["variables"]] == ["big"]


def test_a_detached_kernel_writes_no_snapshot_but_hands_contexts_over_in_its_directory(tmp_path):
    from rlm_harness.kernel import Kernel
    from rlm_harness.callbacks import Callbacks

    class Channel:
        def __init__(self):
            self.sent = []

        def send(self, header, payload=None):
            self.sent.append(header)

    kernel = Kernel({}, Callbacks(Channel()))
    kernel.op_restore({"dir": str(tmp_path)}, None, None)
    kernel.op_detach({"dir": str(tmp_path)}, None, None)
    assert kernel.store is None
    assert kernel.handover.dir == str(tmp_path)
    from rlm_harness.children import Transfer
    transfer = Transfer(kernel.store or kernel.handover)
    entry = transfer.pack("x" * 1000)
    assert entry["file"].startswith(".transfer/")
    assert (tmp_path / entry["file"]).stat().st_size == entry["bytes"]
    transfer.close()
    assert not (tmp_path / entry["file"]).exists()
    assert not (tmp_path / "manifest.json").exists()


class DepthLimitHost:
    """A host at the depth limit: it answers "rlm" with depth_limit, then "llm" as llm_query does."""

    def __init__(self, refuse=None):
        self.calls, self.refuse = [], refuse

    def call(self, kind, request):
        self.calls.append((kind, request))
        if kind == "rlm":
            return {"depth_limit": True}
        if self.refuse:
            raise CallbackError(self.refuse, "refused as llm_query is", "llm")
        return {"answers": [{"text": f"{len(p)} chars"} for p in request["prompts"]]}


def test_at_the_depth_limit_rlm_query_is_an_llm_query_of_the_prompt_with_the_contexts_value():
    host = DepthLimitHost()
    rlm_query, batched = rlm_functions(host, lambda: None)
    lines = "\n".join(f"line {i}" for i in range(200))
    prompt = f"count\n\nThe context:\n{lines}"
    assert rlm_query("count", lines, model="m") == f"{len(prompt)} chars"
    kind, request = host.calls[-1]
    assert kind == "llm" and request["prompts"] == [prompt]
    assert (request["model"], request["batched"]) == ("m", False)
    assert batched(["a", "b"], [{"k": [1, 2]}, None], concurrency=2) == ["29 chars", "1 chars"]
    kind, request = host.calls[-1]
    assert request["prompts"] == ['a\n\nThe context:\n{"k": [1, 2]}', "b"]
    assert (request["batched"], request["concurrency"]) == (True, 2)


def test_at_the_depth_limit_llm_querys_refusals_are_rlm_querys():
    rlm_query, batched = rlm_functions(DepthLimitHost(refuse="PROMPT_TOO_LARGE"), lambda: None)
    with pytest.raises(RLMQueryError) as e:
        rlm_query("big", "w" * 1000)
    assert e.value.code == "PROMPT_TOO_LARGE"
    assert batched(["x"] * 3) == [failure("PROMPT_TOO_LARGE", "refused as llm_query is")] * 3


def test_as_text_renders_a_value_as_a_prompt_holds_it():
    assert [children.as_text(v) for v in ("s", b"b\xff", 3, None, [1, "é"], {1, 2})] == [
        "s", "b\ufffd", "3", "None", '[1, "é"]', "{1, 2}"]
