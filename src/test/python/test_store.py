import errno
import json
import os
import pickle
import subprocess
import sys
import threading

import pytest

import rlm_harness
from rlm_harness import store as store_module
from rlm_harness.store import NotPersisted, Store, definitions, read_exact, repl_defined, utf8_view


def commit(store, **values):
    entries = dict(store.entries)
    for name, value in values.items():
        entry, _ = store.write(name, value, None)
        entries[name] = entry
    store.commit(entries, {}, {})
    return entries


def test_values_round_trip_through_a_new_store(tmp_path):
    store = Store(str(tmp_path))
    commit(store, small={"a": [1, 2]}, data=b"\x00" * 10)
    again = Store(str(tmp_path))
    assert again.generation == 1 and again.saved_at is not None
    assert again.read("small") == {"a": [1, 2]} and again.read("data") == b"\x00" * 10
    assert again.entries["small"]["kind"] == "pickle" and "digest" in again.entries["small"]


def test_large_str_and_bytes_are_written_raw(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "RAW_THRESHOLD", 16)
    store = Store(str(tmp_path))
    text, blob = "é" + "x" * 100, b"y" * 100
    entries = commit(store, text=text, blob=blob, ascii="a" * 100)
    assert (entries["text"]["kind"], entries["blob"]["kind"], entries["ascii"]["kind"]) == ("str", "bytes", "str")
    assert entries["text"]["lengths"] == [len(text.encode())]
    assert (store.read("text"), store.read("blob"), store.read("ascii")) == (text, blob, "a" * 100)


def test_an_unchanged_value_is_not_written_again(tmp_path):
    store = Store(str(tmp_path))
    commit(store, v=[1, 2, 3])
    entry, size = store.write("v", [1, 2, 3], None)
    assert size == -1 and entry["file"] == store.entries["v"]["file"]
    _, size = store.write("v", [1, 2, 4], None)
    assert size > 0


def test_commit_replaces_the_manifest_and_removes_old_files(tmp_path):
    store = Store(str(tmp_path))
    commit(store, v=[1])
    first = store.entries["v"]["file"]
    commit(store, v=[2])
    assert store.generation == 2 and store.entries["v"]["file"] != first
    assert sorted(os.listdir(tmp_path)) == sorted([store.MANIFEST, store.entries["v"]["file"]])
    manifest = json.loads((tmp_path / store.MANIFEST).read_text())
    assert manifest["version"] == 1 and manifest["generation"] == 2 and set(manifest["variables"]) == {"v"}


def test_opening_a_store_sweeps_files_no_manifest_names(tmp_path):
    commit(Store(str(tmp_path)), v=[1])
    (tmp_path / ".v.2.tmp").write_bytes(b"half")
    (tmp_path / "w.7").write_bytes(b"orphan")
    store = Store(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == sorted([store.MANIFEST, store.entries["v"]["file"]])


def test_what_cannot_be_pickled_is_not_persisted(tmp_path):
    store = Store(str(tmp_path))
    with pytest.raises(NotPersisted, match="cannot be pickled: TypeError: cannot pickle '_thread.lock' object"):
        store.write("lock", threading.Lock(), None)


def test_repl_code_is_kept_as_source(tmp_path):
    ns = {"__name__": "__main__"}
    exec("def f(x):\n    return x + 1\n", ns)
    store = Store(str(tmp_path))
    entry, size = store.write("f", ns["f"], "def f(x):\n    return x + 1\n")
    assert (entry["kind"], size) == ("code", 0) and entry["source"].startswith("def f")
    with pytest.raises(NotPersisted, match="not typed as a top-level"):
        store.write("f", ns["f"], None)
    exec("def outer():\n    def inner(): pass\n    return inner\ng = outer()\n", ns)
    with pytest.raises(NotPersisted, match="made inside a function at run time"):
        store.write("g", ns["g"], "x")


def test_the_disk_limit_refuses_a_file_that_would_pass_it(tmp_path):
    store = Store(str(tmp_path), limit=64 * 1024)
    commit(store, small=b"x" * 100)
    with pytest.raises(OSError) as e:
        store.write("big", os.urandom(100 * 1024), None)
    assert e.value.errno == errno.ENOSPC and "--max-disk-mb" in str(e.value)
    assert not [n for n in os.listdir(tmp_path) if n.startswith("big")]


def test_repl_defined():
    ns = {"__name__": "__main__"}
    exec("def f(): pass\nclass C: pass\n", ns)
    assert repl_defined(ns["f"]) and repl_defined(ns["C"])
    assert not repl_defined(len) and not repl_defined(json.dumps) and not repl_defined(3)


def test_definitions_finds_top_level_defs_classes_and_lambdas():
    code = "import os\n@dec\n@dec2\ndef f():\n    return 1\n\nclass C:\n    x = 1\nsq = lambda v: v * v\na, b = 1, 2\n"
    found = definitions(code)
    assert found == {"f": "@dec\n@dec2\ndef f():\n    return 1\n", "C": "class C:\n    x = 1\n",
                     "sq": "sq = lambda v: v * v\n"}
    assert definitions("def (") == {}


def test_read_exact_reports_a_short_file(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    with open(path, "rb") as f:
        assert read_exact(f, 2) == b"ab"
        with pytest.raises(NotPersisted, match="ends early"):
            read_exact(f, 5)


def test_utf8_view_is_the_utf8_encoding():
    for text in ("plain ascii " * 1000, "ünïcode", "", "\udc80"):
        assert bytes(utf8_view(text)) == text.encode("utf-8", "surrogatepass")


def test_old_snapshots_naming_rlm_harness_still_load():
    """The single-file harness ran as the module rlm_harness: its names stay reachable there."""
    for name in ("Sizer", "VarMeta", "Store", "NotPersisted", "Kernel", "Fail", "CallbackError", "LLMQueryError",
                 "MCPError", "McpProxy", "Channel", "Chunks", "Capture", "ImportGuard", "Limits", "RESERVED",
                 "human", "preview", "definitions", "load_file", "parse_payload", "text_lines", "rss_bytes"):
        assert hasattr(rlm_harness, name), name
    assert pickle.loads(b"crlm_harness\nSizer\n.") is rlm_harness.Sizer
    meta = pickle.loads(pickle.dumps(rlm_harness.VarMeta(1.0, 2, 3)))
    assert (meta.created, meta.size, meta.ident) == (1.0, 2, 3)


def test_an_unreadable_manifest_holds_nothing_and_the_files_stay(tmp_path):
    store = Store(str(tmp_path))
    commit(store, v=[1, 2, 3])
    (tmp_path / "manifest.json").write_bytes(b"\0" * 40)  # a machine crash before the data reached the disk
    again = Store(str(tmp_path))
    assert again.entries == {} and "unreadable" in again.unreadable
    assert len(list(tmp_path.iterdir())) == 2


def test_commits_after_the_first_exchange_the_manifest_in_place(tmp_path):
    store = Store(str(tmp_path))
    for n in range(5):
        commit(store, v=[n])
    assert Store(str(tmp_path)).read("v") == [4]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "v.5"]


def test_exchange_swaps_two_files_atomically_and_reports_a_missing_one(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("new")
    b.write_text("old")
    assert store_module.exchange(str(a), str(b))
    assert (b.read_text(), a.read_text()) == ("new", "old")
    assert not store_module.exchange(str(tmp_path / "missing"), str(b))
    assert b.read_text() == "new"


def test_prepare_loads_what_snapshots_use_without_the_ctypes_package():
    root = os.path.dirname(os.path.dirname(rlm_harness.__file__))
    code = (f"import sys\nsys.path.insert(0, {root!r})\nfrom rlm_harness import store\nstore.prepare()\n"
            "print(bool(store._renameat2), '_pickle' in sys.modules, 'ctypes' in sys.modules)")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "False"]
