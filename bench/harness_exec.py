#!/usr/bin/env python3
"""Micro-benchmark of the harness's hottest request: an exec of `x = 1`, as rlm_execute sends it.

Starts the harness as the server does (python -I -B <dir> '<config json>', <dir> holding the bootstrap
__main__.py and the rlm_harness package), waits for its ready frame, optionally attaches a snapshot
directory (the restore request every session's kernel gets), then sends N exec requests one after another
and prints the round-trip p50/p99 and the kernel's CPU per request (from /proc/<pid>/task/*/schedstat).

    bench/harness_exec.py [-n 20000] [--store] [--python PYTHON] [--package DIR] [--profile OUT.prof]

--package runs another copy of rlm_harness (an older version, to compare in the same run).

--profile runs the kernel's request loop under cProfile and writes its stats to OUT.prof on exit.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "src", "main", "python", "rlm_harness")
FRAME_HEAD = struct.Struct(">IQ")
BOOTSTRAP = "from rlm_harness.main import main\n\nmain()\n"  # dev.rlmmcp.kernel.process.Harness.BOOTSTRAP
PROFILED = ("import cProfile, sys\nfrom rlm_harness.main import main\n"
            "profile = cProfile.Profile()\nprofile.enable()\ntry:\n    main()\nfinally:\n"
            "    profile.disable()\n    profile.dump_stats({out!r})\n")

# what dev.rlmmcp.kernel.KernelFactory sends with the server's defaults (2 GiB memory, 600 s max timeout, 2 cores)
CONFIG = {
    "memory_limit_bytes": 2 << 30,
    "cleanup_threshold": 0.8,
    "cleanup_target": 0.6,
    "output_cap": 20000,
    "disk_limit_bytes": 4 << 30,
    "allowed_imports": [],
    "blocked_imports": [],
    "limits": {"data": 5 << 30, "nofile": 4096, "fsize": 4 << 30, "cpu_per_request_s": 600 * 2 + 10},
}


def install(directory, package, profile):
    """The layout Harness.install writes: __main__.py and rlm_harness/ (copied, as the server's)."""
    with open(os.path.join(directory, "__main__.py"), "w") as f:
        f.write(PROFILED.format(out=os.path.abspath(profile)) if profile else BOOTSTRAP)
    shutil.copytree(package, os.path.join(directory, "rlm_harness"), ignore=shutil.ignore_patterns("__pycache__"))


class Kernel:
    def __init__(self, python, directory, config):
        self.proc = subprocess.Popen([python, "-I", "-B", directory, json.dumps(config)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.out = self.proc.stdout
        self.next_id = 0
        self.ready = self.read()
        assert self.ready.get("ready"), self.ready

    def read_exact(self, n):
        data = self.out.read(n)
        while len(data) < n:
            more = self.out.read(n - len(data))
            if not more:
                raise EOFError("the kernel closed its pipe")
            data += more
        return data

    def read(self):
        header_len, payload_len = FRAME_HEAD.unpack(self.read_exact(FRAME_HEAD.size))
        header = json.loads(self.read_exact(header_len))
        if payload_len:
            self.read_exact(payload_len)
        return header

    def frame(self, fields):
        # the host's field order: op, id, then the request's own
        self.next_id += 1
        body = json.dumps({"op": fields["op"], "id": self.next_id, **fields}, separators=(",", ":")).encode()
        return FRAME_HEAD.pack(len(body), 0) + body

    def call(self, **fields):
        os.write(self.proc.stdin.fileno(), self.frame(fields))
        reply = self.read()
        assert reply.get("id") == self.next_id and reply.get("ok"), reply
        return reply

    def cpu_ns(self):
        """On-CPU time of all the kernel's threads, in ns."""
        total = 0
        task = f"/proc/{self.proc.pid}/task"
        for tid in os.listdir(task):
            try:
                with open(f"{task}/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
        return total

    def close(self):
        os.write(self.proc.stdin.fileno(), self.frame({"op": "shutdown"}))
        self.proc.stdin.close()
        self.proc.wait(10)


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p))]


def run(python, package, n, store, profile, variables=0, code="x = 1"):
    with tempfile.TemporaryDirectory(prefix="rlm-harness-bench-") as tmp:
        harness = os.path.join(tmp, "harness")
        os.mkdir(harness)
        install(harness, package, profile)
        kernel = Kernel(python, harness, CONFIG)
        try:
            if store:
                snapshot = os.path.join(tmp, "snapshot")
                os.mkdir(snapshot)
                kernel.call(op="restore", dir=snapshot)
            if variables:  # a namespace a session might hold: modules, functions, values
                kernel.call(op="exec", code="import json, re, math\ndef f(a):\n    return a\n" + "".join(
                    f"v{i} = {[i] * 10!r}\n" for i in range(variables)))
            for _ in range(min(1000, n)):  # warm-up: compile cache, first-use imports
                kernel.call(op="exec", code=code)
            times = []
            cpu_before = kernel.cpu_ns()
            for _ in range(n):
                started = time.perf_counter_ns()
                kernel.call(op="exec", code=code)
                times.append(time.perf_counter_ns() - started)
            cpu = (kernel.cpu_ns() - cpu_before) / n
            last = kernel.call(op="exec", code=code)
        finally:
            kernel.close()
    times.sort()
    return {"p50_us": percentile(times, 0.5) / 1000, "p99_us": percentile(times, 0.99) / 1000,
            "kernel_cpu_us": cpu / 1000, "reply": last}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=20000, help="exec requests to time (after 1000 warm-up ones)")
    parser.add_argument("--store", action="store_true", help="attach a snapshot directory first, as sessions do")
    parser.add_argument("--python", default="/root/.pyenv/versions/3.11.7/bin/python3")
    parser.add_argument("--code", default="x = 1", help="the cell to time (x = 1 rebinds the same int object)")
    parser.add_argument("--vars", type=int, default=0, help="make this many variables (and 3 imports) first")
    parser.add_argument("--package", default=PACKAGE, help="the rlm_harness directory to run")
    parser.add_argument("--profile", help="write the kernel's cProfile stats here")
    parser.add_argument("--reply", action="store_true", help="print the last reply too")
    args = parser.parse_args()
    result = run(args.python, args.package, args.n, args.store, args.profile, args.vars, args.code)
    print(f"exec {args.code!r} ({'with' if args.store else 'without'} a snapshot store, "
          f"{args.vars} variables, n={args.n}): "
          f"p50 {result['p50_us']:.1f} us, p99 {result['p99_us']:.1f} us, "
          f"kernel CPU {result['kernel_cpu_us']:.1f} us/request")
    if args.reply:
        print(json.dumps(result["reply"]))


if __name__ == "__main__":
    main()
