"""The kernel process: fds moved aside, the ready frame, then one request after another until EOF or shutdown."""
import faulthandler
import io
import os
import _signal as signal  # the C module: the signal package's enums add ~0.8 MiB to every kernel
import sys

import rlm_harness

from .callbacks import Callbacks
from .capture import Output
from .jsonwire import loads
from .kernel import Kernel
from .limits import Limits
from .protocol import PROTOCOL_VERSION, RESERVED, Channel, Chunks, Fail
from .store import prepare as prepare_store


def main():
    config = loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    limits = Limits(config.get("limits", {}))
    fd_in, fd_out, diag = os.dup(0), os.dup(1), os.dup(2)
    faulthandler.enable(os.fdopen(diag, "w", closefd=False))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "rb", closefd=False), encoding="utf-8")
    channel = Channel(fd_in, fd_out)
    output = Output()
    kernel = rlm_harness.KERNEL = Kernel(config, Callbacks(channel))
    channel.kernel = kernel

    def interrupt(signum, frame):
        if kernel.interruptible:
            raise KeyboardInterrupt(f"interrupted by signal {signum}")

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGXCPU, interrupt)
    handlers = {name[3:]: getattr(kernel, name) for name in dir(kernel) if name.startswith("op_")}
    channel.send({"ready": True, "pid": os.getpid(), "python": sys.version.split()[0], "protocol": PROTOCOL_VERSION,
                  "reserved": sorted(RESERVED)})
    while True:
        try:
            req, payload = channel.receive()
        except EOFError:
            return
        rid, op = req.get("id"), req.get("op")
        if op == "shutdown":
            channel.send({"id": rid, "ok": True})
            return
        handler = handlers.get(op)
        limits.arm_cpu()
        try:
            if handler is None:
                raise Fail("UNKNOWN_OP", f"unknown kernel operation {op!r}")
            reply = handler(req, payload, output)
            reply["id"], reply["ok"] = rid, True
            if kernel.store is not None and op in ("exec", "load", "clear"):
                # written before the reply, so that a stop right after it loses nothing it reported
                reported = reply["variables_changed"] if op == "exec" else [reply["name"]] if op == "load" else ()
                kernel.write_step(reported)
                failed = {n: kernel.not_persisted[n] for n in reported if n in kernel.not_persisted}
                if failed and op == "exec":
                    reply["not_persisted"] = {**reply.get("not_persisted", {}), **failed}
                reply["variables_unsaved"] = sorted(kernel.dirty)
        except Fail as e:
            reply = {"id": rid, "ok": False, "code": e.code, "message": e.message, "argument": e.argument}
        except MemoryError:
            reply = {"id": rid, "ok": False, "code": "OUT_OF_MEMORY", "message": "the kernel ran out of memory"}
        except BaseException as e:  # keep serving: a broken request must not end the session
            import traceback
            os.write(diag, traceback.format_exc().encode("utf-8", "replace"))
            reply = {"id": rid, "ok": False, "code": "KERNEL_ERROR", "message": f"{type(e).__name__}: {e}"}
        if isinstance(payload, Chunks):
            payload.finish()
        channel.send(reply)
        if op == "restore" and reply["ok"]:
            # its snapshots' imports, paid now (in the warm pool, or while the agent reads this reply)
            # instead of in the first steps; the yield lets the host's reader, woken by the reply, run first
            # where it shares this CPU
            os.sched_yield()
            prepare_store()
        if req.get("poll_us"):
            channel.poll(req["poll_us"] / 1e6)
