"""Puts the harness package (src/main/python) on sys.path, and helps tests speak its framed protocol."""
import json
import os
import shutil
import struct
import subprocess
import sys

import pytest

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "main", "python")
SOURCE = os.path.normpath(SOURCE)
if SOURCE not in sys.path:
    sys.path.insert(0, SOURCE)

FRAME_HEAD = struct.Struct(">IQ")
BOOTSTRAP = "from rlm_harness.main import main\n\nmain()\n"  # what dev.rlmmcp.kernel.process.Harness writes


def encode(header, payload=b""):
    body = json.dumps(header).encode()
    return FRAME_HEAD.pack(len(body), len(payload)) + body + payload


def read_frame(stream):
    head = stream.read(FRAME_HEAD.size)
    if len(head) < FRAME_HEAD.size:
        raise EOFError("the kernel closed its pipe")
    header_len, payload_len = FRAME_HEAD.unpack(head)
    header = json.loads(stream.read(header_len))
    return header, stream.read(payload_len) if payload_len else b""


class KernelProcess:
    """The harness run as the host runs it (python -I -B <dir> <config>), spoken to in frames."""

    def __init__(self, directory, config=None, cwd=None):
        self.proc = subprocess.Popen([sys.executable, "-I", "-B", str(directory), json.dumps(config or {})],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=cwd)
        self.next_id = 0
        self.ready, _ = read_frame(self.proc.stdout)

    def send(self, header, payload=b""):
        self.proc.stdin.write(encode(header, payload))
        self.proc.stdin.flush()

    def receive(self):
        return read_frame(self.proc.stdout)[0]

    def call(self, op, payload=b"", **fields):
        self.next_id += 1
        self.send(dict(fields, id=self.next_id, op=op), payload)
        reply = self.receive()
        assert reply["id"] == self.next_id
        return reply

    def close(self):
        if self.proc.poll() is None:
            try:
                self.call("shutdown")
            except (EOFError, BrokenPipeError, OSError):
                pass
        try:
            self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                stream.close()


@pytest.fixture
def harness_dir(tmp_path):
    """The layout Harness.install makes: the package and a bootstrap __main__.py beside it."""
    directory = tmp_path / "harness-test"
    shutil.copytree(os.path.join(SOURCE, "rlm_harness"), directory / "rlm_harness",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (directory / "__main__.py").write_text(BOOTSTRAP)
    return directory


@pytest.fixture
def start_kernel(harness_dir, tmp_path):
    """start_kernel(config=None) -> a KernelProcess, shut down after the test."""
    started = []

    def start(config=None, cwd=None):
        kernel = KernelProcess(harness_dir, config, cwd or tmp_path)
        started.append(kernel)
        return kernel

    yield start
    for kernel in started:
        kernel.close()


class FakeOutput:
    """Output without touching fds 1 and 2: user code's print() goes to a Capture during the request."""

    def __init__(self):
        from rlm_harness.capture import Capture, CaptureStream
        self.out, self.err = Capture(), Capture()
        self.streams = (CaptureStream(self.out, "<stdout>"), CaptureStream(self.err, "<stderr>"))
        self.saved = None

    def reattach(self):
        self.saved = (sys.stdout, sys.stderr)
        sys.stdout, sys.stderr = self.streams

    def take(self):
        if self.saved is not None:
            sys.stdout, sys.stderr = self.saved
            self.saved = None
        return self.out.take(), self.err.take()

    def printed(self):
        return self.out.since_shown()


@pytest.fixture
def make_kernel():
    """make_kernel(**config) -> (Kernel, FakeOutput), in this process; sys.modules is put back afterwards."""
    from rlm_harness.callbacks import Callbacks
    from rlm_harness.kernel import Kernel
    saved = dict(sys.modules)

    def make(**config):
        output = FakeOutput()
        return Kernel(config, Callbacks(None)), output

    yield make
    for name in [n for n in sys.modules if n not in saved]:
        del sys.modules[name]
    sys.modules.update(saved)
