import pytest

from rlm_harness.protocol import Fail


@pytest.fixture
def kernel(make_kernel):
    k, output = make_kernel()

    def run(code, **req):
        return k.op_exec(dict(req, code=code), None, output)

    k.run_cell = run
    return k


def test_exec_defines_variables_and_echoes_the_last_expression(kernel):
    reply = kernel.run_cell("x = 41\nprint('hi')\nx + 1")
    assert reply["stdout"] == "hi\n42\n" and reply["error"] is None
    assert reply["variables_changed"] == ["x"] and reply["variables_deleted"] == []
    assert reply["memory"]["variable_count"] == 1
    assert kernel.run_cell("del x")["variables_deleted"] == ["x"]


def test_none_is_not_echoed_and_stderr_is_separate(kernel):
    reply = kernel.run_cell("import sys\nsys.stderr.write('warn\\n')\nNone")
    assert reply["stdout"] == "" and reply["stderr"] == "warn\n"


def test_an_error_reply_hides_the_harness(kernel):
    reply = kernel.run_cell("def f():\n    return 1 / 0\nf()")
    error = reply["error"]
    assert error["type"] == "ZeroDivisionError" and error["message"] == "division by zero"
    assert error["traceback"].startswith("Traceback (most recent call last):\n")
    assert "<cell" in error["traceback"] and "rlm_harness" not in error["traceback"]
    assert "interrupted" not in error


def test_a_syntax_error_names_its_line(kernel):
    error = kernel.run_cell("x = 1\ny = (")["error"]
    assert error["type"] == "SyntaxError" and error["line"] == 2
    assert not error["traceback"].startswith("Traceback")


def test_keyboard_interrupt_is_marked(kernel):
    assert kernel.run_cell("raise KeyboardInterrupt('stop')")["error"]["interrupted"] is True


def test_system_exit_does_not_end_the_kernel(kernel):
    assert kernel.run_cell("raise SystemExit(3)")["error"]["type"] == "SystemExit"
    assert kernel.run_cell("1")["stdout"] == "1\n"


def test_top_level_await(kernel):
    reply = kernel.run_cell("import asyncio\nawait asyncio.sleep(0)\nasync def v():\n    return 7\nawait v()")
    assert reply["error"] is None and reply["stdout"] == "7\n"


def test_llm_query_outside_a_host_is_refused_in_the_cell(kernel):
    error = kernel.run_cell("llm_query(1)")["error"]
    assert error["type"] == "TypeError" and "rlm_harness" not in error["traceback"]


def test_long_output_is_clipped_and_kept(kernel):
    reply = kernel.run_cell("print('a' * 100 + 'b' * 100)", output_cap=40)
    assert reply["truncated"]["stdout"] == {"total_chars": 201, "shown_chars": 40, "kept_in": "_last_output",
                                            "kept_chars": 201}
    assert reply["stdout"].startswith("a" * 30 + "\n\n[... 161 of 201 characters cut here; the full text is in "
                                      "the variable _last_output: print(_last_output[30:70]) shows the next part")
    assert reply["stdout"].endswith("b" * 9 + "\n")
    assert kernel.ns["_last_output"] == "a" * 100 + "b" * 100 + "\n"
    assert "_last_output" not in kernel.user_names()


def test_the_import_policy_applies_to_cells(make_kernel):
    k, output = make_kernel(blocked_imports=["socket"])
    error = k.op_exec({"code": "import socket"}, None, output)["error"]
    assert error["type"] == "ImportError" and "refused by rlm-mcp's import policy" in error["message"]
    k.op_configure({"blocked_imports": []}, None, output)
    assert k.op_exec({"code": "import socket"}, None, output)["error"] is None


def test_load_inline_data(kernel):
    reply = kernel.op_load({"name": "rows", "data_type": "csv"}, b"a,b\n1,2\n3,4\n", None)
    assert reply["name"] == "rows" and reply["type"] == "list" and reply["length"] == 2
    assert reply["columns"] == ["a", "b"] and reply["data_type"] == "csv"
    assert kernel.ns["rows"][1] == {"a": "3", "b": "4"}
    with pytest.raises(Fail) as e:
        kernel.op_load({"name": "mcp"}, b"x", None)
    assert e.value.code == "INVALID_ARGUMENT"


def test_load_a_file(kernel, tmp_path):
    (tmp_path / "f.txt").write_text("l1\nl2\n")
    reply = kernel.op_load({"name": "lines", "path": str(tmp_path / "f.txt"), "data_type": "lines"}, None, None)
    assert kernel.ns["lines"] == ["l1", "l2"] and reply["preview"] == "['l1', 'l2']"


def test_vars_and_var_info(kernel):
    kernel.run_cell("import json\nnums = list(range(5))\ndef f(): pass")
    listed = {v["name"]: v for v in kernel.op_vars({}, None, None)["variables"]}
    assert set(listed) == {"nums", "f"}  # no modules, no reserved names
    assert listed["nums"]["status"] == "live" and listed["nums"]["length"] == 5
    info = kernel.op_var_info({"name": "nums"}, None, None)
    assert info["preview"] == "[0, 1, 2, 3, 4]" and info["type"] == "list"
    for name in ("missing", "json", "llm_query"):
        with pytest.raises(Fail) as e:
            kernel.op_var_info({"name": name}, None, None)
        assert (e.value.code, e.value.argument) == ("VARIABLE_NOT_FOUND", "name")


def test_get_renders_and_pages(kernel):
    kernel.run_cell("text = 'abcdefghij'\ndoc = {'k': [1, 2]}\nclass C: pass\nobj = C()")
    page = kernel.op_get({"name": "text", "offset": 2, "max_chars": 3}, None, None)
    assert (page["value"], page["format"], page["next_offset"], page["total_chars"]) == ("cde", "text", 5, 10)
    assert kernel.op_get({"name": "text", "offset": 8}, None, None)["next_offset"] is None
    assert kernel.op_get({"name": "doc"}, None, None)["value"] == '{"k": [1, 2]}'
    assert kernel.op_get({"name": "obj"}, None, None)["format"] == "repr"
    with pytest.raises(Fail) as e:
        kernel.op_get({"name": "nope"}, None, None)
    assert e.value.argument == "var_name"


def test_clear_one_and_all(kernel):
    kernel.run_cell("a = [1] * 1000\nb = 2")
    reply = kernel.op_clear({"name": "a"}, None, None)
    assert reply["cleared"] == ["a"] and reply["freed_bytes"] > 8000 and "a" not in kernel.ns
    with pytest.raises(Fail):
        kernel.op_clear({"name": "a"}, None, None)
    assert kernel.op_clear({"all": True}, None, None)["cleared"] == ["b"]
    assert kernel.user_names() == []


def test_memory_and_ping(kernel):
    kernel.run_cell("x = 'y' * 1000")
    memory = kernel.op_memory({}, None, None)
    assert memory["total_bytes"] >= 1000 and memory["rss_bytes"] > 0 and memory["limit_human"] == "1.0 GB"
    assert set(kernel.op_ping({}, None, None)) == {"pid", "python"}


def test_configure_changes_limits(kernel):
    reply = kernel.op_configure({"memory_limit_bytes": 2048, "output_cap": 5}, None, None)
    assert reply["memory"]["limit_bytes"] == 2048 and kernel.output_cap == 5
