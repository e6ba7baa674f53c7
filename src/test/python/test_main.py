"""The harness as the host runs it: a child process spoken to in frames on its stdin and stdout."""
import json
import os
import platform
import signal
import subprocess
import sys
import threading

from conftest import FRAME_HEAD
from rlm_harness.protocol import CHUNK_HEAD, PROTOCOL_VERSION, RESERVED, STREAMED


def test_the_ready_frame_names_the_protocol_and_reserved_names(start_kernel):
    kernel = start_kernel()
    ready = kernel.ready
    assert ready == {"ready": True, "pid": kernel.proc.pid, "python": platform.python_version(),
                     "protocol": PROTOCOL_VERSION, "reserved": sorted(RESERVED)}


def test_exec_captures_python_and_c_level_output(start_kernel):
    kernel = start_kernel()
    reply = kernel.call("exec", code="import os\nprint('py')\nos.write(1, b'raw\\n')\nos.write(2, b'err\\n')\nx = 5")
    assert reply["ok"] is True and reply["error"] is None
    assert sorted(reply["stdout"].splitlines()) == ["py", "raw"] and reply["stderr"] == "err\n"
    assert reply["variables_changed"] == ["x"]
    assert "variables_unsaved" not in reply  # no snapshot store attached
    assert kernel.call("exec", code="x * 2")["stdout"] == "10\n"


def test_user_code_cannot_write_into_the_frames(start_kernel):
    kernel = start_kernel()
    reply = kernel.call("exec", code="import sys\nsys.__stdout__.write('{bad')\nprint(input.__name__)")
    assert reply["ok"] and reply["stdout"] == "{badinput\n"
    error = kernel.call("exec", code="input()")["error"]
    assert error["type"] == "EOFError"  # stdin is /dev/null


def test_errors_hide_the_harness(start_kernel):
    kernel = start_kernel()
    error = kernel.call("exec", code="def f():\n    return undefined_name\nf()")["error"]
    assert error["type"] == "NameError" and "undefined_name" in error["traceback"]
    assert "harness" not in error["traceback"]


def test_load_inline_streamed_and_from_a_file(start_kernel, tmp_path):
    kernel = start_kernel()
    reply = kernel.call("load", b'{"a": [1, 2]}', name="doc", data_type="json")
    assert reply["ok"] and reply["type"] == "dict" and reply["length"] == 1
    (tmp_path / "rows.csv").write_text("k,v\nx,1\n")
    reply = kernel.call("load", name="rows", path=str(tmp_path / "rows.csv"), data_type="csv")
    assert reply["columns"] == ["k", "v"] and reply["length"] == 1
    kernel.next_id += 1
    body = json.dumps({"id": kernel.next_id, "op": "load", "name": "lines", "data_type": "lines"}).encode()
    data = FRAME_HEAD.pack(len(body), STREAMED) + body
    for chunk in (b"one\r", b"\ntwo\nth", b"ree", b""):
        data += CHUNK_HEAD.pack(len(chunk)) + chunk
    kernel.proc.stdin.write(data)
    kernel.proc.stdin.flush()
    reply = kernel.receive()
    assert reply["ok"] and reply["length"] == 3
    assert kernel.call("exec", code="lines")["stdout"] == "['one', 'two', 'three']\n"


def test_vars_get_and_clear(start_kernel):
    kernel = start_kernel()
    kernel.call("exec", code="text = 'hello world'\nn = 3")
    names = [v["name"] for v in kernel.call("vars")["variables"]]
    assert sorted(names) == ["n", "text"]
    page = kernel.call("get", name="text", offset=6, max_chars=3)
    assert (page["value"], page["next_offset"], page["format"]) == ("wor", 9, "text")
    cleared = kernel.call("clear", name="n")
    assert cleared["ok"] and cleared["cleared"] == ["n"]
    assert [v["name"] for v in kernel.call("vars")["variables"]] == ["text"]


def test_failures_are_error_replies_and_the_kernel_keeps_serving(start_kernel):
    kernel = start_kernel()
    assert kernel.call("frobnicate") == {"id": 1, "ok": False, "code": "UNKNOWN_OP",
                                         "message": "unknown kernel operation 'frobnicate'", "argument": None}
    assert kernel.call("load", b"x", name="llm_query") == {
        "id": 2, "ok": False, "code": "INVALID_ARGUMENT", "argument": "name",
        "message": "'llm_query' is reserved by rlm-mcp; choose another name"}
    reply = kernel.call("get", name="missing")
    assert (reply["code"], reply["argument"]) == ("VARIABLE_NOT_FOUND", "var_name")
    reply = kernel.call("exec")  # no code: a broken request
    assert reply["code"] == "KERNEL_ERROR" and reply["message"] == "KeyError: 'code'"
    assert kernel.call("snapshot")["code"] == "INVALID_ARGUMENT"
    assert kernel.call("ping")["ok"] is True


def test_snapshot_and_restore_in_a_new_process(start_kernel, tmp_path):
    store = tmp_path / "snapshot"
    store.mkdir()
    first = start_kernel()
    assert first.call("restore", dir=str(store))["generation"] == 0
    reply = first.call("exec", code="import rlm_harness as h\nimport json\ndata = {'k': list(range(3))}\n"
                                    "def double(v):\n    return v * 2\n")
    # written before the reply: a stop right after it loses nothing
    assert reply["variables_unsaved"] == [] and "still_writing" not in reply
    snap = first.call("snapshot")
    assert snap["ok"] and snap["written"] == [] and snap["generation"] == 1
    first.close()

    second = start_kernel()
    restored = second.call("restore", dir=str(store))
    assert restored["restored"] == ["double"] and restored["spilled"] == ["data"] and restored["failed"] == {}
    reply = second.call("exec", code="print(double(data['k'][2]), h.PROTOCOL_VERSION, json.dumps(1))")
    assert reply["stdout"] == f"4 {PROTOCOL_VERSION} 1\n"
    assert reply["loaded_from_snapshot"]["names"] == ["data"]


def test_only_a_kernel_given_a_snapshot_directory_loads_the_pickler(start_kernel, tmp_path):
    probe = "import sys\nloaded = [m for m in ('_pickle', '_blake2', 'ctypes') if m in sys.modules]\nprint(loaded)"
    plain = start_kernel()
    assert plain.call("exec", code=probe)["stdout"] == "[]\n"
    store = tmp_path / "snapshot"
    store.mkdir()
    session = start_kernel()
    session.call("restore", dir=str(store))
    assert session.call("exec", code=probe)["stdout"] == "['_pickle', '_blake2']\n"


def test_a_change_too_large_to_write_before_the_reply_is_pending_until_written(start_kernel, tmp_path):
    store = tmp_path / "snapshot"
    store.mkdir()
    first = start_kernel()
    first.call("restore", dir=str(store))
    reply = first.call("exec", code="small = 1\nbig = 'x' * (9 << 20)")
    assert reply["variables_unsaved"] == ["big"]
    manifest = json.loads((store / "manifest.json").read_text())
    assert sorted(manifest["variables"]) == ["small"] and manifest["pending"] == ["big"]
    first.close()  # killed before the snapshot after the reply: big's value is lost, and said so

    second = start_kernel()
    restored = second.call("restore", dir=str(store))
    assert restored["spilled"] == ["small"] and restored["unwritten"] == ["big"]
    reply = second.call("exec", code="big = 'y' * (9 << 20)")
    assert reply["variables_unsaved"] == ["big"]
    snap = second.call("snapshot")
    assert snap["written"] == ["big"]
    manifest = json.loads((store / "manifest.json").read_text())
    assert sorted(manifest["variables"]) == ["big", "small"] and manifest["pending"] == []
    second.close()
    assert start_kernel().call("restore", dir=str(store))["unwritten"] == []


def test_callbacks_during_an_exec(start_kernel):
    kernel = start_kernel()
    kernel.next_id += 1
    kernel.send({"id": kernel.next_id, "op": "exec", "code": "print(llm_query('ping?'))"})
    request = kernel.receive()
    assert request == {"cb": 1, "kind": "llm", "request": {"prompts": ["ping?"], "system": None,
                                                           "max_tokens": None, "model": None, "printed": ""}}
    kernel.send({"cb": 1, "ok": True, "result": {"answers": [{"text": "pong"}]}})
    assert kernel.receive() == {"cb_close": True}
    kernel.send({"cb_closed": True})
    reply = kernel.receive()
    assert reply["ok"] and reply["stdout"] == "pong\n"


def test_a_refused_callback_is_an_llmqueryerror(start_kernel):
    kernel = start_kernel()
    kernel.next_id += 1
    kernel.send({"id": kernel.next_id, "op": "exec", "code": "llm_query('x')"})
    kernel.receive()
    kernel.send({"cb": 1, "ok": False, "error": {"code": "NOT_CONFIGURED", "message": "no LLM"}})
    kernel.receive()
    kernel.send({"cb_closed": True})
    error = kernel.receive()["error"]
    assert error["type"] == "LLMQueryError" and error["traceback"].endswith("LLMQueryError: no LLM\n")
    assert "harness" not in error["traceback"]


def test_sigint_interrupts_running_code(start_kernel):
    kernel = start_kernel()
    kernel.next_id += 1
    kernel.send({"id": kernel.next_id, "op": "exec", "code": "import time\nwhile True:\n    time.sleep(0.01)"})
    threading.Timer(0.5, os.kill, (kernel.proc.pid, signal.SIGINT)).start()
    error = kernel.receive()["error"]
    assert error["type"] == "KeyboardInterrupt" and error["interrupted"] is True
    assert kernel.call("exec", code="1 + 1")["stdout"] == "2\n"


def test_shutdown_and_eof_end_the_process(start_kernel):
    kernel = start_kernel()
    assert kernel.call("shutdown") == {"id": 1, "ok": True}
    assert kernel.proc.wait(10) == 0
    other = start_kernel()
    other.proc.stdin.close()
    assert other.proc.wait(10) == 0


def test_config_sets_limits_and_output_cap(start_kernel):
    kernel = start_kernel({"output_cap": 10, "memory_limit_bytes": 4096, "limits": {"nofile": 50}})
    reply = kernel.call("exec", code="import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE), 'x' * 50)")
    assert reply["truncated"]["stdout"]["total_chars"] == len("(50, 50) " + "x" * 50 + "\n")
    assert kernel.call("memory")["limit_bytes"] == 4096
    assert kernel.call("exec", code="print(_last_output[:8])")["stdout"] == "(50, 50)\n"


def test_a_snapshot_naming_rlm_harness_restores(start_kernel, tmp_path):
    """Snapshots written by the single-file harness may name rlm_harness (a module alias, a pickled global)."""
    store = tmp_path / "old-snapshot"
    store.mkdir()
    head = b"crlm_harness\nSizer\n."  # protocol 0: the global rlm_harness.Sizer
    (store / "cls.1").write_bytes(head)
    manifest = {"version": 1, "generation": 1, "saved_at": 0, "modules": {"h": "rlm_harness"}, "not_persisted": {},
                "variables": {"cls": {"type": "type", "kind": "pickle", "file": "cls.1", "lengths": [len(head)],
                                      "saved": 0, "size_bytes": 100}}}
    (store / "manifest.json").write_text(json.dumps(manifest))
    kernel = start_kernel()
    restored = kernel.call("restore", dir=str(store))
    assert restored["failed"] == {} and restored["spilled"] == ["cls"]
    assert kernel.call("exec", code="print(cls is h.Sizer, h.KERNEL is not None)")["stdout"] == "True True\n"


def test_a_request_asking_for_it_is_followed_by_a_poll_that_changes_nothing(start_kernel):
    kernel = start_kernel()
    assert kernel.call("exec", code="x = 1", poll_us=200)["error"] is None
    assert kernel.call("exec", code="print(x + 1)", poll_us=200)["stdout"] == "2\n"


def test_a_kernel_leaves_heavy_modules_to_the_code_that_needs_them(start_kernel, tmp_path):
    """An idle kernel's memory: json, re, enum, threading, linecache and pickle (~1.3 MiB together) are not
    imported by a step, a snapshot or a listing; user code gets each as usual, and tracebacks still quote the cell."""
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    kernel = start_kernel()
    assert kernel.call("restore", dir=str(snapshot))["ok"]
    assert kernel.call("exec", code="x = 1")["ok"] and kernel.call("snapshot")["ok"] and kernel.call("vars")["ok"]
    # those the interpreter's own start imports (a .pth file, sitecustomize) are not the harness's doing
    started = subprocess.run([sys.executable, "-I", "-c", "import sys; print(' '.join(sys.modules))"],
                             capture_output=True, text=True, check=True).stdout.split()
    heavy = [m for m in ("json", "re", "enum", "threading", "linecache", "tokenize", "pickle") if m not in started]
    loaded = kernel.call("exec", code=f"import sys\nprint([m for m in {heavy!r} if m in sys.modules])")
    assert loaded["stdout"] == "[]\n"
    used = kernel.call("exec", code="import json, re, threading\nprint(json.dumps(re.findall('a.', 'ab ac')), "
                                    "threading.active_count() >= 1)")
    assert used["stdout"] == '["ab", "ac"] True\n'
    error = kernel.call("exec", code="def f():\n    return 1 / 0\nf()")["error"]
    assert "return 1 / 0" in error["traceback"] and error["type"] == "ZeroDivisionError"


def test_cells_run_before_linecache_was_imported_are_found_by_inspect(start_kernel):
    kernel = start_kernel()
    assert kernel.call("exec", code="def double(n):\n    return 2 * n")["ok"]
    reply = kernel.call("exec", code="import inspect\nprint(inspect.getsource(double), end='')")
    assert reply["error"] is None and reply["stdout"] == "def double(n):\n    return 2 * n"
