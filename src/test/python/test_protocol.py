import datetime
import json
import os
import threading

import pytest

from conftest import FRAME_HEAD, encode
from rlm_harness import protocol
from rlm_harness.protocol import ABORTED, CHUNK_HEAD, STREAMED, Channel, Chunks, Fail


@pytest.fixture
def pipes():
    """(channel, host_write_fd, host_read_fd): the harness's Channel and the host's ends of its two pipes."""
    to_kernel_r, to_kernel_w = os.pipe()
    from_kernel_r, from_kernel_w = os.pipe()
    channel = Channel(to_kernel_r, from_kernel_w)
    ours = {fd: os.fstat(fd).st_ino for fd in (to_kernel_r, to_kernel_w, from_kernel_r, from_kernel_w)}
    yield channel, to_kernel_w, from_kernel_r
    for fd, inode in ours.items():
        # a test may have closed one already, and its number been given to another file since
        try:
            if os.fstat(fd).st_ino == inode:
                os.close(fd)
        except OSError:
            pass


def read_all(fd, n):
    data = b""
    while len(data) < n:
        data += os.read(fd, n - len(data))
    return data


def test_protocol_version_and_reserved_names():
    assert protocol.PROTOCOL_VERSION == 1
    assert protocol.RESERVED == {"llm_query", "llm_query_batched", "rlm_query", "rlm_query_batched", "FINAL",
                                 "FINAL_VAR", "SHOW_VARS", "mcp", "_last_output", "_last_error", "mcp_servers",
                                 "LOADED_MCP_SERVERS"}
    assert STREAMED == 2**64 - 1 and ABORTED == 2**32 - 1


def test_fail_carries_code_message_and_argument():
    e = Fail("INVALID_ARGUMENT", "bad name", "name")
    assert (e.code, e.message, e.argument, str(e)) == ("INVALID_ARGUMENT", "bad name", "name", "bad name")
    assert Fail("X", "y").argument is None


def test_send_writes_one_frame(pipes):
    channel, _, host_in = pipes
    channel.send({"id": 1, "text": "héllo", "when": datetime.date(2024, 1, 2)}, b"\x00\x01")
    header_len, payload_len = FRAME_HEAD.unpack(read_all(host_in, FRAME_HEAD.size))
    header = json.loads(read_all(host_in, header_len).decode())
    assert header == {"id": 1, "text": "héllo", "when": "2024-01-02"}  # default=str, not ASCII-escaped
    assert payload_len == 2 and read_all(host_in, 2) == b"\x00\x01"


def test_send_keeps_lone_surrogates(pipes):
    channel, _, host_in = pipes
    channel.send({"s": "\udc80"})
    header_len, _ = FRAME_HEAD.unpack(read_all(host_in, FRAME_HEAD.size))
    assert read_all(host_in, header_len) == b'{"s":"\xed\xb2\x80"}'


def test_receive_header_and_payload(pipes):
    channel, host_out, _ = pipes
    os.write(host_out, encode({"op": "load"}, b"abc") + encode({"op": "ping"}))
    assert channel.receive() == ({"op": "load"}, b"abc")
    assert channel.receive() == ({"op": "ping"}, None)


def test_receive_at_eof_raises_eoferror(pipes):
    channel, host_out, _ = pipes
    os.write(host_out, FRAME_HEAD.pack(10, 0)[:5])
    os.close(host_out)
    with pytest.raises(EOFError):
        channel.receive()


def streamed(header, chunks, end=0):
    body = json.dumps(header).encode()
    data = FRAME_HEAD.pack(len(body), STREAMED) + body
    for chunk in chunks:
        data += CHUNK_HEAD.pack(len(chunk)) + chunk
    return data + CHUNK_HEAD.pack(end)


def test_streamed_payload_is_read_chunk_by_chunk(pipes):
    channel, host_out, _ = pipes
    os.write(host_out, streamed({"op": "load"}, [b"one", b"two"]) + encode({"op": "next"}))
    header, payload = channel.receive()
    assert header == {"op": "load"} and isinstance(payload, Chunks)
    assert list(payload) == [b"one", b"two"]
    assert list(payload) == []  # done
    assert channel.receive() == ({"op": "next"}, None)


def test_finish_skips_what_the_handler_did_not_read(pipes):
    channel, host_out, _ = pipes
    os.write(host_out, streamed({"op": "load"}, [b"a", b"b", b"c"]) + encode({"op": "after"}))
    _, payload = channel.receive()
    assert next(iter(payload)) == b"a"
    payload.finish()
    assert channel.receive()[0] == {"op": "after"}


def test_an_aborted_stream_fails_and_ends(pipes):
    channel, host_out, _ = pipes
    os.write(host_out, streamed({"op": "load"}, [b"part"], end=ABORTED) + encode({"op": "after"}))
    _, payload = channel.receive()
    chunks = iter(payload)
    assert next(chunks) == b"part"
    with pytest.raises(Fail) as failed:
        next(chunks)
    assert failed.value.code == "TRANSFER_ABORTED"
    assert payload.done
    payload.finish()
    assert channel.receive()[0] == {"op": "after"}


def test_chunk_reads_are_shielded_from_interrupts(pipes):
    channel, host_out, _ = pipes

    class Kernel:
        interruptible = True
        seen = []

    channel.kernel = Kernel()
    original = channel._read_exact

    def spy(n):
        Kernel.seen.append(channel.kernel.interruptible)
        return original(n)

    channel._read_exact = spy
    os.write(host_out, streamed({"op": "load"}, [b"x"]))
    _, payload = channel.receive()
    Kernel.seen.clear()  # the frame head was read with the kernel interruptible; the chunks must not be
    assert list(payload) == [b"x"]
    assert Kernel.seen and not any(Kernel.seen)  # never interruptible while reading a chunk
    assert channel.kernel.interruptible is True  # and restored after


def test_concurrent_sends_do_not_interleave(pipes):
    channel, _, host_in = pipes
    big = b"z" * 50000
    threads = [threading.Thread(target=channel.send, args=({"n": i}, big)) for i in range(4)]
    received = []

    def drain():
        for _ in range(4):
            header_len, payload_len = FRAME_HEAD.unpack(read_all(host_in, FRAME_HEAD.size))
            header = json.loads(read_all(host_in, header_len))
            assert read_all(host_in, payload_len) == big
            received.append(header["n"])

    reader = threading.Thread(target=drain)
    reader.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reader.join(10)
    assert sorted(received) == [0, 1, 2, 3]


def test_enlarge_pipe_ignores_what_is_not_a_pipe(tmp_path):
    fd = os.open(tmp_path / "f", os.O_CREAT | os.O_WRONLY)
    try:
        protocol.enlarge_pipe(fd)  # no error
    finally:
        os.close(fd)


def test_poll_ends_when_a_request_arrives_or_its_time_is_up(pipes):
    import time
    channel, host_w, _ = pipes
    started = time.perf_counter()
    channel.poll(0.05)
    assert time.perf_counter() - started >= 0.05
    threading.Timer(0.01, os.write, (host_w, encode({"op": "vars", "id": 1}))).start()
    started = time.perf_counter()
    channel.poll(5)
    assert time.perf_counter() - started < 2
    assert channel.receive() == ({"op": "vars", "id": 1}, None)
    os.close(host_w)
    started = time.perf_counter()
    channel.poll(5)  # the host is gone: no point waiting
    assert time.perf_counter() - started < 2
