import pytest


def cell(k, output, code):
    return k.op_exec({"code": code}, None, output)


def test_without_a_store_the_oldest_variables_are_dropped(make_kernel):
    k, output = make_kernel(memory_limit_bytes=110_000, cleanup_threshold=0.8, cleanup_target=0.6)
    cell(k, output, "a = 'a' * 30000")
    cell(k, output, "b = 'b' * 30000")
    reply = cell(k, output, "c = 'c' * 30000")
    assert [e["name"] for e in reply["evicted"]] == ["a"]
    assert reply["evicted"][0]["spilled"] is False and "reason" not in reply["evicted"][0]
    assert "a" not in k.ns and k.total() <= 0.6 * 110_000


def test_the_variables_a_cell_used_are_kept(make_kernel):
    k, output = make_kernel(memory_limit_bytes=100_000)
    cell(k, output, "a = 'a' * 30000")
    cell(k, output, "b = 'b' * 30000")
    reply = cell(k, output, "c = 'c' * 30000 + a[:1]")
    assert [e["name"] for e in reply["evicted"]] == ["b"]


def test_repl_code_is_never_evicted(make_kernel):
    k, output = make_kernel(memory_limit_bytes=50_000)
    cell(k, output, "def f():\n    return 1")
    reply = cell(k, output, "big = 'x' * 60000")
    assert "f" in k.ns and [e["name"] for e in reply["evicted"]] == []


def test_with_a_store_variables_spill_and_come_back(make_kernel, tmp_path):
    k, output = make_kernel(memory_limit_bytes=110_000)
    k.op_restore({"dir": str(tmp_path)}, None, output)
    cell(k, output, "a = 'a' * 30000")
    cell(k, output, "b = 'b' * 30000")
    reply = cell(k, output, "c = 'c' * 30000")
    assert reply["evicted"] == [{"name": "a", "size_bytes": k.store.entries["a"]["size_bytes"],
                                 "size_human": "29.3 KB", "spilled": True}]
    assert "a" not in k.ns and k.spilled == {"a"}
    listed = {v["name"]: v for v in k.op_vars({}, None, None)["variables"]}
    assert listed["a"]["status"] == "spilled"
    reply = cell(k, output, "len(a)")
    assert reply["stdout"] == "30000\n" and reply["loaded_from_snapshot"]["names"] == ["a"]
    assert "a" not in k.spilled


def test_dynamic_lookups_bring_every_spilled_variable_back(make_kernel, tmp_path):
    k, output = make_kernel(memory_limit_bytes=100_000)
    k.op_restore({"dir": str(tmp_path)}, None, output)
    for name in "abc":
        cell(k, output, f"{name} = '{name}' * 30000")
    assert k.spilled
    reply = cell(k, output, "len(globals()['a'])")
    assert reply["stdout"] == "30000\n" and "a" in reply["loaded_from_snapshot"]["names"]


def test_what_cannot_spill_is_dropped_with_the_reason(make_kernel, tmp_path):
    k, output = make_kernel(memory_limit_bytes=100_000)
    k.op_restore({"dir": str(tmp_path)}, None, output)
    reply = cell(k, output, "import threading\nlocked = [threading.Lock(), 'x' * 30000]")
    assert reply["not_persisted"]["locked"].startswith("cannot be pickled: TypeError")
    cell(k, output, "b = 'b' * 30000")
    reply = cell(k, output, "c = 'c' * 30000")
    evicted = {e["name"]: e for e in reply["evicted"]}
    assert evicted["locked"]["spilled"] is False and evicted["locked"]["reason"].startswith("cannot be pickled")
    assert "locked" not in k.ns


@pytest.mark.parametrize("limit", [0, -1])
def test_no_limit_no_eviction(make_kernel, limit):
    k, output = make_kernel(memory_limit_bytes=limit)
    assert cell(k, output, "a = 'a' * 300000")["evicted"] == []
    assert k.memory()["percent"] == 0.0
