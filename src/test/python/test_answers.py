import pickle

import pytest

from rlm_harness.answers import reported
from rlm_harness.protocol import Chunks, Fail
from rlm_harness.store import Store


@pytest.fixture
def kernel(make_kernel):
    k, output = make_kernel()

    def run(code, **req):
        return k.op_exec(dict(req, code=code), None, output)

    k.run_cell = run
    return k


def test_final_sets_the_answer_and_the_exec_reports_it(kernel):
    reply = kernel.run_cell("x = 6 * 7\nFINAL(x)", answer=True)
    assert reply["error"] is None and reply["answer"] == {"content": "42", "ready": True}
    assert kernel.ns["answer"] == {"content": "42", "ready": True}
    assert "answer" in reply["variables_changed"]


def test_final_replaces_an_answer_that_is_not_a_dict(kernel):
    kernel.run_cell("answer = 'draft'")
    assert kernel.run_cell("FINAL([1, 2])", answer=True)["answer"] == {"content": "[1, 2]", "ready": True}


def test_the_answer_dict_written_by_code_is_reported(kernel):
    reply = kernel.run_cell("answer = {'content': 'not yet', 'ready': False}", answer=True)
    assert reply["answer"] == {"content": "not yet", "ready": False}
    reply = kernel.run_cell("answer['content'] = 7; answer['ready'] = 1", answer=True)
    assert reply["answer"] == {"content": "7", "ready": True}


def test_no_answer_field_unless_asked_or_without_an_answer_dict(kernel):
    assert "answer" not in kernel.run_cell("FINAL('x')")
    kernel.run_cell("answer = {'content': 'c'}")
    assert "answer" not in kernel.run_cell("pass", answer=True)
    kernel.run_cell("del answer")
    assert "answer" not in kernel.run_cell("pass", answer=True)


def test_reported_survives_odd_values():
    class Bad:
        def __str__(self):
            raise ValueError("nope")

        def __bool__(self):
            raise ValueError("ambiguous")

    assert reported({"content": Bad(), "ready": Bad()}) == {
        "content": "<Bad: str() failed: ValueError: nope>", "ready": False}
    assert reported({"ready": True}) == {"content": "", "ready": True}
    assert reported(None) is None and reported({"content": "x"}) is None


def test_final_var_answers_with_a_variable(kernel):
    reply = kernel.run_cell("result = {'a': 1}\nFINAL_VAR('result')", answer=True)
    assert reply["answer"] == {"content": "{'a': 1}", "ready": True}


def test_final_var_errors_are_clear(kernel):
    error = kernel.run_cell("FINAL_VAR('missing')")["error"]
    assert error["type"] == "NameError" and "there is no variable 'missing'" in error["message"]
    error = kernel.run_cell("v = 3\nFINAL_VAR(v)")["error"]
    assert error["type"] == "TypeError" and 'FINAL_VAR("result")' in error["message"]
    assert "FINAL(value)" in error["message"]
    assert kernel.run_cell("FINAL_VAR('llm_query')")["error"]["type"] == "NameError"


def test_final_var_loads_a_spilled_variable_back(kernel, tmp_path):
    kernel.store = Store(str(tmp_path))
    kernel.run_cell("big = 'z' * 10")
    assert kernel.spill("big") is None and "big" not in kernel.ns
    assert kernel.run_cell("FINAL_VAR('big')", answer=True)["answer"] == {"content": "z" * 10, "ready": True}


def test_show_vars_lists_name_type_and_size(kernel, tmp_path):
    assert kernel.run_cell("print(SHOW_VARS())")["stdout"] == "(no variables)\n"
    kernel.run_cell("import json\ntext = 'hello'\nrows = [1, 2, 3]")
    lines = kernel.run_cell("print(SHOW_VARS())")["stdout"].splitlines()
    assert [line.split(",")[0] for line in lines] == ["rows: list", "text: str"]
    assert lines[1].endswith(" B") and "json" not in "".join(lines)
    kernel.store = Store(str(tmp_path))
    assert kernel.spill("rows") is None
    lines = kernel.run_cell("print(SHOW_VARS())")["stdout"].splitlines()
    assert lines[0].startswith("text: str") and lines[1].startswith("rows: list, ") and "in the snapshot" in lines[1]


def test_the_new_names_are_reserved_and_not_variables(kernel):
    for name in ("rlm_query", "rlm_query_batched", "FINAL", "FINAL_VAR", "SHOW_VARS"):
        assert name in kernel.ns and not kernel.is_user_var(name, kernel.ns[name])
        with pytest.raises(Fail, match="reserved"):
            kernel.op_load({"name": name}, b"x", None)
    assert kernel.run_cell("print(RLMQueryError.__mro__[1].__name__)")["stdout"] == "CallbackError\n"
    assert kernel.op_vars({}, None, None)["variables"] == []


def test_rlm_begin_binds_an_empty_answer(kernel):
    assert kernel.op_rlm_begin({}, None, None) == {}
    assert kernel.ns["answer"] == {"content": "", "ready": False} and "answer" in kernel.dirty
    kernel.run_cell("FINAL('done')")
    kernel.op_rlm_begin({}, None, None)  # a new loop on the same kernel starts unanswered
    assert kernel.ns["answer"] == {"content": "", "ready": False}


def test_rlm_begin_refuses_an_answer_variable_of_another_kind(kernel):
    for code in ("answer = 42", "answer = {'content': 'no ready key'}"):
        kernel.run_cell(code)
        with pytest.raises(Fail) as e:
            kernel.op_rlm_begin({}, None, None)
        assert (e.value.code, e.value.argument) == ("NAME_TAKEN", "answer")
        assert "rename it" in e.value.message
    assert kernel.ns["answer"] == {"content": "no ready key"}


def test_load_pickle_binds_the_unpickled_value(kernel):
    value = {"rows": [1, 2, 3], "text": "é" * 10, "raw": b"\x00\x01"}
    reply = kernel.op_load({"name": "context", "data_type": "pickle"}, pickle.dumps(value, protocol=5), None)
    assert reply["type"] == "dict" and reply["data_type"] == "pickle" and reply["size_bytes"] > 0
    assert kernel.ns["context"] == value


class ListChunks(Chunks):
    def __init__(self, chunks):
        self.chunks = chunks

    def __iter__(self):
        yield from self.chunks


def test_load_pickle_streamed_and_from_a_file(kernel, tmp_path):
    data = pickle.dumps(["x" * 100_000, list(range(1000))], protocol=5)
    pieces = ListChunks([data[i:i + 7000] for i in range(0, len(data), 7000)])
    kernel.op_load({"name": "context", "data_type": "pickle"}, pieces, None)
    assert kernel.ns["context"] == ["x" * 100_000, list(range(1000))]
    (tmp_path / "c.pkl").write_bytes(pickle.dumps({"k": 1}, protocol=5))
    kernel.op_load({"name": "context", "data_type": "pickle", "path": str(tmp_path / "c.pkl")}, None, None)
    assert kernel.ns["context"] == {"k": 1}


def test_a_bad_pickle_is_invalid_data_and_stores_nothing(kernel):
    with pytest.raises(Fail) as e:
        kernel.op_load({"name": "context", "data_type": "pickle"}, b"not a pickle", None)
    assert e.value.code == "INVALID_DATA" and "could not be unpickled" in e.value.message
    missing_class = b"\x80\x05\x8c\x08__main__\x94\x8c\x04Gone\x94\x93\x94."  # a class of another REPL
    with pytest.raises(Fail, match="AttributeError: Can't get attribute 'Gone'.*defined in another kernel's REPL"):
        kernel.op_load({"name": "context", "data_type": "pickle"}, missing_class, None)
    assert "context" not in kernel.ns


def test_pickle_is_not_a_data_type_users_are_offered():
    from rlm_harness.loaders import DATA_TYPES, check_data_type
    assert "pickle" not in DATA_TYPES
    check_data_type("pickle")
    with pytest.raises(Fail, match="use text, json, lines or csv"):
        check_data_type("yaml")


def test_rlm_begin_and_answer_through_a_kernel_process(start_kernel):
    kernel = start_kernel()
    assert kernel.call("rlm_begin") == {"id": kernel.next_id, "ok": True}
    reply = kernel.call("exec", code="answer['content'] = 'forty-two'", answer=True)
    assert reply["answer"] == {"content": "forty-two", "ready": False}
    reply = kernel.call("exec", code="FINAL_VAR('answer')\nanswer = 5", answer=True)
    assert reply["ok"] and "answer" not in reply
    refused = kernel.call("rlm_begin")
    assert (refused["ok"], refused["code"], refused["argument"]) == (False, "NAME_TAKEN", "answer")
    payload = pickle.dumps({"a": [1, 2]}, protocol=5)
    assert kernel.call("load", payload, name="context", data_type="pickle")["type"] == "dict"
    assert kernel.call("exec", code="print(context['a'])")["stdout"] == "[1, 2]\n"
