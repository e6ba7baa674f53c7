"""The value of a load: inline data, a streamed payload or a file, as text, json, lines or csv; or, for
the host alone (a child RLM's context), as a pickle."""
import codecs
import io
import keyword
import sys

from .protocol import RESERVED, Chunks, Fail


def check_name(name):
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise Fail("INVALID_ARGUMENT", f"{name!r} is not a valid Python variable name", "name")
    if name.startswith("__") or name in RESERVED:
        raise Fail("INVALID_ARGUMENT", f"{name!r} is reserved by rlm-mcp; choose another name", "name")
    return name


DATA_TYPES = ("text", "json", "lines", "csv")
PICKLE = "pickle"  # what the host loads a child RLM's context as; never offered to agents


def check_data_type(data_type):
    if data_type not in DATA_TYPES and data_type != PICKLE:
        raise Fail("INVALID_ARGUMENT", f"unknown data_type {data_type!r}; use text, json, lines or csv", "data_type")


def decode(data):
    """Bytes as text, the way every load reads them: UTF-8, invalid bytes as U+FFFD, line ends kept."""
    return str(data, "utf-8", "replace")


def payload_texts(payload):
    """The payload as a sequence of str pieces (one per chunk when streamed)."""
    if payload is None:
        return []
    if isinstance(payload, Chunks):
        return decoded(payload)
    return [decode(payload)]


def decoded(chunks):
    """Each chunk as text; a character split between chunks comes whole, and bytes left incomplete at
    the end as U+FFFD, as decode() of all the bytes would give."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    for chunk in chunks:
        text = decoder.decode(chunk)
        if text:
            yield text
    text = decoder.decode(b"", True)
    if text:
        yield text


def parse_payload(payload, data_type):
    """The value of a load from inline data or a streamed source. Lines are split as each chunk
    arrives (while the host sends the next); csv reads the chunks as a file, like a file load."""
    check_data_type(data_type)
    if data_type == PICKLE:
        return unpickle(payload)
    if data_type == "lines":
        return split_lines(payload_texts(payload))
    if data_type == "csv" and isinstance(payload, Chunks):
        return read_csv(text_stream(ChunkFile(payload)))
    return parse_text("".join(payload_texts(payload)), data_type)


def parse_text(text, data_type):
    if data_type == "text":
        return text
    if data_type == "lines":
        return split_lines([text])
    if data_type == "json":
        import json  # here, not at the top: most kernels never load JSON data
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise Fail("INVALID_DATA", f"data is not valid JSON: {e}", "data") from None
    if data_type == "csv":
        return read_csv(io.StringIO(text, newline=""))
    check_data_type(data_type)


def text_lines(text):
    """text split where "\n" or "\r\n" ends a line (a lone "\r" does not): [head, *whole lines, tail],
    at C speed. Unlike str.splitlines, nothing else (a lone \r, \x0b, \x1c, \u2028, ...) ends a line."""
    if "\r" not in text:
        return text.split("\n")
    if text.count("\r\n") == text.count("\n"):  # every line ends with "\r\n"
        return text.split("\r\n")
    parts = text.split("\n")
    last = parts.pop()
    parts = [p[:-1] if p.endswith("\r") else p for p in parts]
    parts.append(last)
    return parts


def split_lines(texts):
    """Lines of the concatenated texts: "\r\n" and "\n" both end a line; a line may span texts."""
    lines, pending = [], []
    for text in texts:
        if not text:
            continue
        if pending and text[0] == "\n" and pending[-1].endswith("\r"):
            pending[-1] = pending[-1][:-1]  # a "\r\n" cut between two texts
        parts = text_lines(text)
        if len(parts) == 1:
            pending.append(text)
            continue
        if pending:
            parts[0] = "".join(pending) + parts[0]
        tail = parts.pop()
        pending = [tail] if tail else []
        if lines:
            lines += parts
        else:
            lines = parts
    if pending:
        lines.append("".join(pending))
    return lines


class ChunkFile(io.RawIOBase):
    """A streamed payload as a read-only binary file, so that it is parsed as a file load is."""

    def __init__(self, chunks):
        self.chunks, self.left = iter(chunks), memoryview(b"")

    def readable(self):
        return True

    def readinto(self, buffer):
        while not self.left:
            chunk = next(self.chunks, None)
            if chunk is None:
                return 0
            self.left = memoryview(chunk)
        n = min(len(buffer), len(self.left))
        buffer[:n] = self.left[:n]
        self.left = self.left[n:]
        return n


def text_stream(raw):
    """A binary file as csv wants it: UTF-8 text, invalid bytes as U+FFFD, line ends untranslated."""
    return io.TextIOWrapper(io.BufferedReader(raw, 1 << 20), encoding="utf-8", errors="replace", newline="")


def read_csv(stream):
    import csv
    try:
        return list(csv.DictReader(stream))
    except csv.Error as e:
        raise Fail("INVALID_DATA", f"data is not valid CSV: {e}", "data") from None


def unpickle(payload):
    """The value a pickle (bytes, or streamed chunks read as a file, never joined) holds."""
    import _pickle as pickle  # the C module: pickle.py adds re and enum (~0.6 MiB)
    try:
        if isinstance(payload, Chunks):
            return pickle.load(io.BufferedReader(ChunkFile(payload), 1 << 20))
        if hasattr(payload, "read"):
            return pickle.load(payload)
        return pickle.loads(payload or b"")
    except (MemoryError, KeyboardInterrupt):
        raise
    except Exception as e:  # a damaged pickle, or one naming a class or function this kernel does not have
        raise Fail("INVALID_DATA", f"the pickled value could not be unpickled: {type(e).__name__}: {e} (a class or "
                   "function defined in another kernel's REPL does not exist here: pass plain data)", "data") from None


def load_file(path, data_type):
    """The value of a file load. Read as bytes and decoded in one go: a text-mode read would be
    slower, and would translate line ends, which no other load does."""
    check_data_type(data_type)
    try:
        with open(path, "rb", buffering=0) as f:
            if data_type == "csv":
                return read_csv(text_stream(f))
            if data_type == PICKLE:
                return unpickle(io.BufferedReader(f, 1 << 20))
            data = f.read()
    except FileNotFoundError:
        raise Fail("FILE_NOT_FOUND", f"file not found: {path}", "path") from None
    except IsADirectoryError:
        raise Fail("INVALID_ARGUMENT", f"{path} is a directory, not a file", "path") from None
    except PermissionError:
        raise Fail("PERMISSION_DENIED", f"the kernel may not read {path}", "path") from None
    text = decode(data)
    del data
    return parse_text(text, data_type)


def loaded_size(value, data_type, sizer):
    """The size of a value a load has just made. Exact for lines (the list and every str, one pass at
    C speed: a sample would miss one huge line among small ones); estimated for csv and json."""
    if data_type == "lines":
        return sys.getsizeof(value) + sum(map(str.__sizeof__, value))
    return sizer.size(value)
