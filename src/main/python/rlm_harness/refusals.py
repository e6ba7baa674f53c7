"""What the sandbox refuses, said in the error a refused call raises in user code."""
import sys

UNIX_SOCKETS = ("unix sockets are not available in the rlm-mcp sandbox: kernel code cannot connect to services "
                "on the host (socket.socketpair(), multiprocessing.Pipe() and os.pipe() work)")


def note(e):
    """A sentence to add to error e if the sandbox refused what raised it, else None: the sandbox's seccomp
    filter makes socket(AF_UNIX) fail with EACCES, which Python reports as a bare PermissionError."""
    sock = sys.modules.get("socket")
    if sock is None or not isinstance(e, PermissionError):
        return None
    init = sock.socket.__init__.__code__
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is init and tb.tb_frame.f_locals.get("family") == sock.AF_UNIX:
            return UNIX_SOCKETS
        tb = tb.tb_next
    return None
