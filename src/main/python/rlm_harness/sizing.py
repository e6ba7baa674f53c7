"""How big a value is, and how it is shown: sizes, previews, echoes, shapes."""
import reprlib
import sys
import time
import types


class Sizer:
    """Estimated deep size of a value: exact for small containers, sampled for large ones."""

    SAMPLE = 256
    MAX_DEPTH = 6

    def size(self, obj):
        return self._size(obj, 0, set())

    def _size(self, obj, depth, seen):
        if id(obj) in seen:
            return 0
        size = sys.getsizeof(obj, 64)
        if depth >= self.MAX_DEPTH or isinstance(obj, (str, bytes, bytearray, int, float, complex, bool, type(None))):
            return size
        seen.add(id(obj))
        if isinstance(obj, dict):
            return size + self._items(list(obj.keys()), depth, seen) + self._items(list(obj.values()), depth, seen)
        if isinstance(obj, (list, tuple, set, frozenset)) or type(obj).__name__ == "deque":
            return size + self._items(obj if isinstance(obj, (list, tuple)) else list(obj), depth, seen)
        if isinstance(obj, (types.FunctionType, type, types.ModuleType)):
            return size
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            size += self._size(attrs, depth + 1, seen)
        return size

    def _items(self, items, depth, seen):
        n = len(items)
        if n <= self.SAMPLE:
            return sum(self._size(item, depth + 1, seen) for item in items)
        step = n / self.SAMPLE
        sample = sum(self._size(items[int(i * step)], depth + 1, seen) for i in range(self.SAMPLE))
        return int(sample * n / self.SAMPLE)


class VarMeta:
    __slots__ = ("created", "accessed", "size", "ident")

    def __init__(self, now, size, ident):
        self.created = self.accessed = now
        self.size, self.ident = size, ident


def iso(epoch):
    """As datetime's UTC isoformat(timespec="milliseconds"), without importing datetime into every kernel."""
    seconds = int(epoch)
    carry, micros = divmod(round((epoch - seconds) * 1e6), 1_000_000)  # rounded as datetime rounds
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds + carry)) + f".{micros // 1000:03d}+00:00"


def human(n):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


PREVIEW = reprlib.Repr()
PREVIEW.maxstring, PREVIEW.maxother, PREVIEW.maxlist, PREVIEW.maxdict = 200, 200, 8, 8
PREVIEW.maxtuple = PREVIEW.maxset = PREVIEW.maxfrozenset = PREVIEW.maxdeque = 8
PREVIEW.maxlevel = 3
LONG_PREVIEW = reprlib.Repr()
LONG_PREVIEW.maxstring, LONG_PREVIEW.maxother, LONG_PREVIEW.maxlist, LONG_PREVIEW.maxdict = 1000, 1000, 20, 20
LONG_PREVIEW.maxtuple = LONG_PREVIEW.maxset = LONG_PREVIEW.maxfrozenset = LONG_PREVIEW.maxdeque = 20
LONG_PREVIEW.maxlevel = 4


def preview(value, long=False):
    try:
        return (LONG_PREVIEW if long else PREVIEW).repr(value)
    except Exception as e:  # a user-defined __repr__ may raise anything
        return f"<{type(value).__name__}: repr failed: {type(e).__name__}>"


def echo(value):
    """What an interactive prompt shows for a bare expression, bounded for huge values."""
    if isinstance(value, (str, bytes, bytearray, list, tuple, dict, set, frozenset)) and len(value) > 100_000:
        return preview(value, long=True)
    try:
        return repr(value)
    except Exception:
        return preview(value)


def describe_shape(value):
    if isinstance(value, str):
        return {"length": len(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"length": len(value)}
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        shape = {"length": len(value)}
        if isinstance(value, list) and value and isinstance(value[0], dict):
            shape["columns"] = list(value[0].keys())[:50]
        return shape
    return {}
