"""rlimits and the kernel's resident size."""
import os
import _signal as signal  # the C module, as in main
import time


def rss_bytes():
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Limits:
    """rlimits set before any user code runs. Hard and soft alike, so user code cannot raise them;
    CPU time is the exception: its soft limit is re-armed per request (SIGXCPU interrupts like SIGINT)."""

    NAMES = {"data": "RLIMIT_DATA", "nofile": "RLIMIT_NOFILE", "fsize": "RLIMIT_FSIZE", "nproc": "RLIMIT_NPROC"}

    def __init__(self, config):
        import resource
        self.resource = resource
        for key, name in self.NAMES.items():
            value = config.get(key)
            if value is not None:
                kind = getattr(resource, name)
                hard = resource.getrlimit(kind)[1]
                value = value if hard == resource.RLIM_INFINITY else min(value, hard)
                resource.setrlimit(kind, (value, value))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large write fails with EFBIG instead of killing us
        self.cpu_per_request = config.get("cpu_per_request_s")

    def arm_cpu(self):
        if self.cpu_per_request:
            used = time.process_time()
            current, hard = self.resource.getrlimit(self.resource.RLIMIT_CPU)
            soft = int(used) + self.cpu_per_request
            # used time moves by whole seconds: most requests find the limit already where it must be
            if soft != current and (hard == self.resource.RLIM_INFINITY or soft <= hard):
                self.resource.setrlimit(self.resource.RLIMIT_CPU, (soft, hard))
