import os

import pytest

from rlm_harness import capture
from rlm_harness.capture import Capture, CaptureStream, FdCapture


def test_capture_collects_and_take_resets():
    c = Capture()
    c.add("a")
    c.add("bc")
    assert c.take() == ("abc", 0)
    assert c.take() == ("", 0)


def test_since_shown_gives_each_part_once_and_take_still_gives_all():
    c = Capture()
    c.add("a\n")
    assert c.since_shown() == "a\n"
    assert c.since_shown() == ""
    c.add("b\n")
    assert c.since_shown() == "b\n"
    assert c.take() == ("a\nb\n", 0)
    c.add("c")
    assert c.since_shown() == "c"


def test_capture_keeps_at_most_full_output_keep(monkeypatch):
    monkeypatch.setattr(capture, "FULL_OUTPUT_KEEP", 5)
    c = Capture()
    c.add("abc")
    c.add("defg")
    c.add("hi")
    assert c.take() == ("abcde", 4)


def test_capture_stream_writes_str_only():
    c = Capture()
    stream = CaptureStream(c, "<stdout>")
    assert stream.write("héllo") == 5
    print("x", file=stream)
    with pytest.raises(TypeError, match="must be str, not bytes"):
        stream.write(b"raw")
    assert (stream.name, stream.encoding, stream.writable(), stream.isatty()) == ("<stdout>", "utf-8", True, False)
    stream.flush()
    assert c.take() == ("héllox\n", 0)


@pytest.fixture
def spare_fd():
    fd = os.open(os.devnull, os.O_WRONLY)
    yield fd
    os.close(fd)


def test_fd_capture_drains_c_level_writes(spare_fd):
    c = Capture()
    pipe = FdCapture(spare_fd, c)
    try:
        os.write(spare_fd, "héllo\n".encode())
        pipe.drain()
        assert c.take() == ("héllo\n", 0)
        pipe.drain()  # nothing waiting: returns at once
        assert c.take() == ("", 0)
    finally:
        os.close(pipe.fd)


def test_fd_capture_joins_a_character_split_between_writes(spare_fd):
    c = Capture()
    pipe = FdCapture(spare_fd, c)
    try:
        os.write(spare_fd, b"caf\xc3")
        pipe.drain()
        os.write(spare_fd, b"\xa9 \xff")
        pipe.drain()
        assert c.take() == ("café \ufffd", 0)
    finally:
        os.close(pipe.fd)
