"""The framed pipe to the host, and what both sides agree on: the protocol version and the reserved names.

Frames (both directions): u32 header length, u64 payload length (big-endian), a UTF-8 JSON header,
then the raw payload. A payload length of STREAMED (2**64 - 1) means the payload follows as chunks,
each a u32 length and that many bytes, ended by an empty chunk: the host then need not know the
size up front, and the kernel parses each chunk while the next is on its way. Each chunk of text
ends on a whole UTF-8 character; bytes streamed from a source (S3, a URL) may split a character,
so chunks are decoded incrementally. A chunk length of ABORTED ends a stream early: its source
failed, and what was received is discarded. The host talks on the fds that were this process's stdin and stdout; before
any user code runs they are moved aside and fds 0/1/2 are re-pointed (0 at /dev/null, 1 and 2 at
capture pipes), so nothing user code prints can corrupt a frame. A request's "poll_us" asks the harness
to poll the pipe that long for the next request after its reply, before it blocks in the read.
"""
import _thread
import fcntl
import io
import os
import select
import struct
import time

from .jsonwire import dumps, loads

PROTOCOL_VERSION = 1  # the host refuses a kernel whose ready frame names another (dev.rlmmcp.kernel.protocol.Ready)
FRAME_HEAD = struct.Struct(">IQ")
CHUNK_HEAD = struct.Struct(">I")
STREAMED = 2**64 - 1
ABORTED = 2**32 - 1
RESERVED = frozenset({"llm_query", "llm_query_batched", "rlm_query", "rlm_query_batched", "FINAL", "FINAL_VAR",
                      "SHOW_VARS", "mcp", "_last_output", "_last_error", "mcp_servers", "LOADED_MCP_SERVERS"})


class Fail(Exception):
    """A request the harness refuses; becomes an error reply with a stable code."""

    def __init__(self, code, message, argument=None):
        super().__init__(message)
        self.code, self.message, self.argument = code, message, argument


class Channel:
    """The framed pipe to the host."""

    def __init__(self, fd_in, fd_out):
        for fd in (fd_in, fd_out):
            enlarge_pipe(fd)
        self.reader = io.BufferedReader(io.FileIO(fd_in, "rb", closefd=False), 1 << 16)
        self.fd_out = fd_out
        self.poller = select.poll()
        self.poller.register(fd_in, select.POLLIN)
        self.send_lock = _thread.allocate_lock()
        self.kernel = None

    def poll(self, seconds):
        """Polls the pipe for up to `seconds`, yielding the CPU between looks: the host asks for this after
        a reply when a CPU is free, since a process asleep in a read takes tens of microseconds to wake."""
        ready, clock, pause = self.poller.poll, time.perf_counter, os.sched_yield
        end = clock() + seconds
        while not ready(0) and clock() < end:
            pause()

    def _read_exact(self, n):
        data = self.reader.read(n)
        if len(data) < n:
            raise EOFError
        return data

    def receive(self):
        """The next request: its header, and its payload as bytes, None, or Chunks still on the pipe."""
        header_len, payload_len = FRAME_HEAD.unpack(self._read_exact(FRAME_HEAD.size))
        header = loads(self._read_exact(header_len).decode("utf-8", "surrogatepass"))
        if payload_len == STREAMED:
            return header, Chunks(self)
        return header, self._read_exact(payload_len) if payload_len else None

    def send(self, header, payload=b""):
        body = dumps(header).encode("utf-8", "surrogatepass")
        data = FRAME_HEAD.pack(len(body), len(payload)) + body + payload
        with self.send_lock:
            sent = os.write(self.fd_out, data)
            if sent < len(data):  # cut short by a signal: the rest
                data = memoryview(data)[sent:]
                while data:
                    data = data[os.write(self.fd_out, data):]


class Chunks:
    """A streamed payload, read chunk by chunk; finish() skips what its handler did not read.
    An interrupt never lands inside a read (that would lose the chunk boundaries): reads are shielded,
    and the host ends a stream it wants stopped with ABORTED."""

    def __init__(self, channel):
        self.channel, self.done = channel, False

    def __iter__(self):
        while not self.done:
            chunk = self._next()
            if chunk is None:
                return
            yield chunk

    def _next(self):
        kernel = self.channel.kernel
        was = kernel.interruptible if kernel else False
        if kernel:
            kernel.interruptible = False
        try:
            (n,) = CHUNK_HEAD.unpack(self.channel._read_exact(CHUNK_HEAD.size))
            if n == ABORTED:
                self.done = True
                raise Fail("TRANSFER_ABORTED", "the host stopped the transfer; nothing was stored")
            if n == 0:
                self.done = True
                return None
            return self.channel._read_exact(n)
        finally:
            if kernel:
                kernel.interruptible = was

    def finish(self):
        for _ in self:
            pass


def enlarge_pipe(fd):
    """A 64 KiB pipe costs a context switch per 64 KiB of data; ask for the largest allowed."""
    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            size = int(f.read())
    except (OSError, ValueError):
        size = 1 << 20
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)
    except (OSError, AttributeError):  # not a pipe, over the user's pipe quota, or not Linux
        pass
