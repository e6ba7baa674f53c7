import sys

import pytest

from conftest import SOURCE
from rlm_harness.guard import ImportGuard
from rlm_harness.sizing import Sizer, VarMeta, describe_shape, echo, human, iso, preview


@pytest.mark.parametrize("n, text", [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KB"), (1536, "1.5 KB"),
                                     (5 << 20, "5.0 MB"), (3 << 30, "3.0 GB"), (2 << 50, "2048.0 TB")])
def test_human(n, text):
    assert human(n) == text


def test_iso_is_utc_with_milliseconds():
    assert iso(0) == "1970-01-01T00:00:00.000+00:00"
    assert iso(1.5) == "1970-01-01T00:00:01.500+00:00"


def test_iso_writes_what_datetime_writes():
    import datetime
    import random
    rng = random.Random(7)
    moments = [0.9999996, 59.9994, 1e9 + 0.0005, 1764061200.123456, 4102444799.9999] + [
        rng.uniform(0, 4102444800) for _ in range(5000)]
    for epoch in moments:
        expected = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).isoformat(timespec="milliseconds")
        assert iso(epoch) == expected, epoch


def test_iso_leaves_datetime_unimported():
    import subprocess
    code = ("import sys; from rlm_harness.sizing import iso; iso(1.5); "
            "print('datetime' in sys.modules)")
    out = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {SOURCE!r}); {code}"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_sizer_counts_contents_deeply():
    sizer = Sizer()
    text = "x" * 10000
    assert sizer.size(text) == sys.getsizeof(text)
    assert sizer.size([text]) == sys.getsizeof([text]) + sys.getsizeof(text)
    assert sizer.size({"k": text}) >= sys.getsizeof(text) + sys.getsizeof("k")
    inner = [text]
    assert sizer.size([inner, inner]) == sizer.size([[], []]) - 2 * sys.getsizeof([]) + sizer.size(inner)  # once


def test_sizer_survives_cycles_and_objects():
    a = []
    a.append(a)
    assert Sizer().size(a) == sys.getsizeof(a)

    class Box:
        def __init__(self):
            self.payload = "y" * 5000

    assert Sizer().size(Box()) > 5000


def test_sizer_samples_large_containers():
    values = [str(i) * 10 for i in range(10000)]
    exact = sys.getsizeof(values) + sum(sys.getsizeof(v) for v in values)
    estimate = Sizer().size(values)
    assert abs(estimate - exact) / exact < 0.1


def test_var_meta():
    meta = VarMeta(5.0, 100, 42)
    assert (meta.created, meta.accessed, meta.size, meta.ident) == (5.0, 5.0, 100, 42)


def test_preview_is_bounded_and_survives_a_failing_repr():
    assert len(preview("z" * 10000)) < 250
    assert preview(list(range(100))).endswith("...]")
    assert len(preview("z" * 10000, long=True)) > 900

    class Bad:
        def __repr__(self):
            raise ValueError("no")

    assert preview(Bad()).startswith("<Bad instance at 0x")  # reprlib's own fallback

    class Worse:
        def __repr__(self):
            raise ValueError("no")

        def __getattribute__(self, name):
            raise KeyError(name)

    assert preview(Worse()) == "<Worse: repr failed: KeyError>"


def test_echo_is_repr_unless_huge():
    assert echo([1, "a"]) == "[1, 'a']"
    assert len(echo("q" * 200_000)) < 2000

    class Bad:
        def __repr__(self):
            raise RuntimeError

    assert echo(Bad()).startswith("<Bad instance at 0x")


def test_describe_shape():
    assert describe_shape("abc") == {"length": 3}
    assert describe_shape(b"ab") == {"length": 2}
    assert describe_shape([{"a": 1, "b": 2}]) == {"length": 1, "columns": ["a", "b"]}
    assert describe_shape({1: 2}) == {"length": 1}
    assert describe_shape(3) == {}


def test_import_guard_blocks_and_allows():
    guard = ImportGuard()
    assert guard("json").__name__ == "json"
    guard.configure((), ("json", "socket"))
    with pytest.raises(ImportError, match="import of 'json' is refused by rlm-mcp's import policy") as e:
        guard("json.decoder")
    assert e.value.name == "json"
    assert guard("os").__name__ == "os"
    guard.configure(("math",), ())
    assert guard("math").__name__ == "math"
    with pytest.raises(ImportError, match="'os'"):
        guard("os.path", fromlist=("join",))
