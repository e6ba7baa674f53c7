import sys

import pytest

from rlm_harness.loaders import (check_name, decode, decoded, load_file, loaded_size, parse_payload, parse_text,
                                 split_lines, text_lines)
from rlm_harness.protocol import Chunks, Fail
from rlm_harness.sizing import Sizer


class ListChunks(Chunks):
    """A streamed payload already in memory."""

    def __init__(self, chunks):
        self.chunks, self.done = chunks, False

    def __iter__(self):
        yield from self.chunks
        self.done = True


@pytest.mark.parametrize("text, parts", [
    ("a\nb\n", ["a", "b", ""]),
    ("a\r\nb", ["a", "b"]),
    ("a\rb\nc", ["a\rb", "c"]),
    ("a\r\nb\nc\r", ["a", "b", "c\r"]),
    ("x\u2028y\x0bz", ["x\u2028y\x0bz"]),
])
def test_text_lines_splits_on_lf_and_crlf_only(text, parts):
    assert text_lines(text) == parts


def test_split_lines_joins_lines_across_pieces():
    assert split_lines(["ab", "c\nd", "e\r", "\nf", ""]) == ["abc", "de", "f"]
    assert split_lines(["a\n"]) == ["a"]
    assert split_lines([]) == []


def test_decode_replaces_invalid_bytes_and_keeps_line_ends():
    assert decode(b"a\r\nb\xff") == "a\r\nb\ufffd"


def test_decoded_joins_characters_split_between_chunks():
    assert "".join(decoded([b"caf\xc3", b"\xa9!", b"\xe2\x82"])) == "café!\ufffd"


@pytest.mark.parametrize("name, message", [
    ("1x", "'1x' is not a valid Python variable name"),
    ("class", "'class' is not a valid Python variable name"),
    (5, "5 is not a valid Python variable name"),
    ("llm_query", "'llm_query' is reserved by rlm-mcp; choose another name"),
    ("__x", "'__x' is reserved by rlm-mcp; choose another name"),
])
def test_check_name(name, message):
    with pytest.raises(Fail) as e:
        check_name(name)
    assert (e.value.code, e.value.message, e.value.argument) == ("INVALID_ARGUMENT", message, "name")


def test_check_name_accepts_an_identifier():
    assert check_name("data_1") == "data_1"


def test_parse_text_by_type():
    assert parse_text("a\r\nb", "text") == "a\r\nb"
    assert parse_text("a\r\nb", "lines") == ["a", "b"]
    assert parse_text('{"a": [1]}', "json") == {"a": [1]}
    assert parse_text("x,y\r\n1,2\n", "csv") == [{"x": "1", "y": "2"}]


def test_invalid_json_and_unknown_type_fail():
    with pytest.raises(Fail) as e:
        parse_text("{", "json")
    assert e.value.code == "INVALID_DATA" and e.value.message.startswith("data is not valid JSON:")
    with pytest.raises(Fail) as e:
        parse_payload(b"x", "yaml")
    assert (e.value.code, e.value.argument) == ("INVALID_ARGUMENT", "data_type")
    assert e.value.message == "unknown data_type 'yaml'; use text, json, lines or csv"


def test_parse_payload_inline_and_streamed():
    assert parse_payload(None, "text") == ""
    assert parse_payload(b"a\nb", "lines") == ["a", "b"]
    assert parse_payload(ListChunks([b"a\r", b"\nb\xc3", b"\xa9"]), "lines") == ["a", "bé"]
    assert parse_payload(ListChunks([b"x,y\n1", b",2\n"]), "csv") == [{"x": "1", "y": "2"}]
    assert parse_payload(ListChunks([b'{"k"', b": 1}"]), "json") == {"k": 1}
    assert parse_payload(ListChunks([b"t\xe2", b"\x82\xac"]), "text") == "t€"


def test_load_file(tmp_path):
    path = tmp_path / "data.txt"
    path.write_bytes(b"one\r\ntwo\n\xff")
    assert load_file(str(path), "text") == "one\r\ntwo\n\ufffd"
    assert load_file(str(path), "lines") == ["one", "two", "\ufffd"]
    (tmp_path / "d.csv").write_bytes(b"a,b\n1,\xc3\xa9\n")
    assert load_file(str(tmp_path / "d.csv"), "csv") == [{"a": "1", "b": "é"}]


def test_load_file_failures(tmp_path):
    cases = [(str(tmp_path / "none"), "FILE_NOT_FOUND", f"file not found: {tmp_path / 'none'}"),
             (str(tmp_path), "INVALID_ARGUMENT", f"{tmp_path} is a directory, not a file")]
    for path, code, message in cases:
        with pytest.raises(Fail) as e:
            load_file(path, "text")
        assert (e.value.code, e.value.message, e.value.argument) == (code, message, "path")


def test_loaded_size_is_exact_for_lines():
    lines = ["a" * 10, "b" * 1000]
    assert loaded_size(lines, "lines", Sizer()) == sys.getsizeof(lines) + sum(sys.getsizeof(s) for s in lines)
    assert loaded_size({"a": 1}, "json", Sizer()) == Sizer().size({"a": 1})
