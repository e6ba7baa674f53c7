"""jsonwire: the harness's JSON through the C codec alone, as json.dumps / json.loads would write and read it."""
import json
import math

import pytest

from rlm_harness.jsonwire import dumps, loads

VALUES = [
    {}, [], "", 0, -7, 2**70, 1.5, -0.0, 1e300, None, True, False, "é ∑ 😀", "\udc80", "quote \" back \\ nl \n tab \t",
    {"op": "exec", "id": 3, "code": "x = 1\nprint('é')", "poll_us": 200, "nested": {"a": [1, [2, {"b": None}]]}},
    [{"name": "v", "size": 12, "preview": "[1, 2, 3]"}] * 3,
]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_writes_what_json_dumps_writes(value):
    assert dumps(value) == json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


@pytest.mark.parametrize("value", VALUES)
def test_loads_reads_back_what_json_writes(value):
    assert loads(json.dumps(value)) == value
    assert loads(json.dumps(value, indent=2)) == value


def test_what_json_has_no_type_for_is_written_as_str_and_floats_as_json_writes_them():
    assert loads(dumps({"when": b"x", "set": {1}})) == {"when": "b'x'", "set": "{1}"}
    assert dumps([math.inf, -math.inf, math.nan]) == "[Infinity,-Infinity,NaN]"
    assert [math.isinf(v) for v in loads("[Infinity, -Infinity]")] == [True, True] and math.isnan(loads("NaN"))


@pytest.mark.parametrize("text", ["", "   ", "{", '{"a": 1} x', "[1,]", "'a'", '{"a" 1}', "1 2"])
def test_loads_refuses_what_is_not_exactly_one_json_value(text):
    with pytest.raises(ValueError):
        loads(text)
