"""What user code writes to stdout and stderr, Python- or C-level, collected per request."""
import _thread  # not threading, which adds ~0.8 MiB to every kernel
import codecs
import io
import os
import select
import sys

FULL_OUTPUT_KEEP = 16 * 1024 * 1024
PRINTED_KEEP = 100_000  # the host shows far less of a step's output so far


class Capture:
    """Everything written to stdout or stderr during one request, Python- or C-level."""

    def __init__(self):
        self.lock = _thread.allocate_lock()
        self.reset()

    def reset(self):
        self.chunks, self.chars, self.dropped, self.shown = [], 0, 0, 0

    def since_shown(self):
        """What was written since the last call (the whole request's output the first time); the request's
        reply still carries all of it."""
        with self.lock:
            if self.chars == self.shown:
                return ""
            text, self.shown = "".join(self.chunks)[self.shown:], self.chars
        return text if len(text) <= PRINTED_KEEP else "[...]" + text[-PRINTED_KEEP:]

    def add(self, text):
        with self.lock:
            room = FULL_OUTPUT_KEEP - self.chars
            if room >= len(text):
                self.chunks.append(text)
                self.chars += len(text)
            else:
                if room > 0:
                    self.chunks.append(text[:room])
                    self.chars += room
                self.dropped += len(text) - max(room, 0)

    def take(self):
        with self.lock:
            if not self.chunks and not self.dropped:  # most requests print nothing
                return "", 0
            text, dropped = "".join(self.chunks), self.dropped
            self.reset()
        return text, dropped


class CaptureStream(io.TextIOBase):
    """sys.stdout / sys.stderr for user code."""

    def __init__(self, capture, name):
        self.capture, self._name = capture, name

    @property
    def name(self):
        return self._name

    @property
    def encoding(self):
        return "utf-8"

    def writable(self):
        return True

    def isatty(self):
        return False

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.capture.add(text)
        return len(text)

    def flush(self):
        pass


class FdCapture:
    """Drains the pipe behind fd 1 or fd 2 into a Capture (C-level writes, child processes)."""

    def __init__(self, fd, capture):
        read_end, write_end = os.pipe()
        os.dup2(write_end, fd)
        os.close(write_end)
        os.set_blocking(read_end, False)
        self.fd, self.capture = read_end, capture
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def drain(self):
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                return
            self.capture.add(self.decoder.decode(chunk))


class Output:
    """stdout and stderr of the running request."""

    def __init__(self):
        self.out, self.err = Capture(), Capture()
        self.streams = (CaptureStream(self.out, "<stdout>"), CaptureStream(self.err, "<stderr>"))
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__ = self.streams
        self.pipes = [FdCapture(1, self.out), FdCapture(2, self.err)]
        self.drain_lock = _thread.allocate_lock()
        # what drain_now asks, in one syscall, before reading: most requests print nothing at the C level
        self.ready = select.poll()
        for pipe in self.pipes:
            self.ready.register(pipe.fd, select.POLLIN)
        _thread.start_new_thread(self._drain_forever, ())

    def _drain_forever(self):
        poller = select.poll()
        for pipe in self.pipes:
            poller.register(pipe.fd, select.POLLIN)
        while True:
            poller.poll()
            self.drain_now()

    def drain_now(self):
        with self.drain_lock:
            if not self.ready.poll(0):
                return
            for pipe in self.pipes:
                pipe.drain()

    def reattach(self):
        sys.stdout, sys.stderr = self.streams

    def take(self):
        self.drain_now()
        return self.out.take(), self.err.take()

    def printed(self):
        """stdout written since the last call, for a request that may keep the step waiting on the agent."""
        self.drain_now()
        return self.out.since_shown()
