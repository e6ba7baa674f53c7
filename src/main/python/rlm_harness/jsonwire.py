"""JSON for frames and snapshot manifests through CPython's C codec (_json) alone.

The json package imports re (and with it enum and the regex compiler): about 1 MiB in every kernel,
idle ones included, for a harness that only needs the C encoder and scanner. User code that imports
json gets the package as usual. Where _json is missing or its API differs, the package is used.
"""
try:
    import _json

    # json.dumps(value, ensure_ascii=False, default=str), as json.JSONEncoder.encode calls the C encoder
    _ENCODE = _json.make_encoder(None, str, _json.encode_basestring, None, ":", ",", False, False, True)

    class _Context:
        """What the C scanner reads from a json.JSONDecoder, with the package's defaults."""
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int

        @staticmethod
        def parse_constant(name):
            return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]

    _SCAN = _json.make_scanner(_Context())
    _ENCODE({"probe": [1, 2.5, "é", None, True]}, 0)
except (ImportError, AttributeError, TypeError):  # pragma: no cover - an interpreter without the C codec
    _ENCODE = _SCAN = None

WHITESPACE = " \t\n\r"


def dumps(value):
    """value as compact JSON text, non-ASCII kept, anything JSON has no type for written as str(value)."""
    if _ENCODE is None:
        import json
        return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))
    return "".join(_ENCODE(value, 0))


def loads(text):
    """The value of the JSON text `text` (str); ValueError if it is not exactly one JSON value."""
    if _SCAN is None:
        import json
        return json.loads(text)
    start = len(text) - len(text.lstrip(WHITESPACE))
    try:
        value, end = _SCAN(text, start)
    except StopIteration as e:
        raise ValueError(f"not JSON: expecting a value at character {e.value}") from None
    if len(text.rstrip(WHITESPACE)) != end:
        raise ValueError(f"not JSON: extra data at character {end}")
    return value
