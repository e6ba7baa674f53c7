"""rlm-mcp kernel harness: one persistent CPython REPL driven over a framed pipe.

Frames (both directions): u32 header length, u64 payload length (big-endian), a UTF-8 JSON header,
then the raw payload. A payload length of STREAMED (2**64 - 1) means the payload follows as chunks,
each a u32 length and that many bytes, ended by an empty chunk: the host then need not know the
size up front, and the kernel parses each chunk while the next is on its way. Each chunk of text
ends on a whole UTF-8 character; bytes streamed from a source (S3, a URL) may split a character,
so chunks are decoded incrementally. A chunk length of ABORTED ends a stream early: its source
failed, and what was received is discarded. The host talks on the fds that were this process's stdin and stdout; before
any user code runs they are moved aside and fds 0/1/2 are re-pointed (0 at /dev/null, 1 and 2 at
capture pipes), so nothing user code prints can corrupt a frame.
"""
import ast
import builtins
import codecs
import csv
import datetime
import errno
import faulthandler
import fcntl
import gc
import hashlib
import io
import json
import keyword
import linecache
import mmap
import os
import pickle
import reprlib
import select
import signal
import struct
import sys
import threading
import time
import traceback
import types

FRAME_HEAD = struct.Struct(">IQ")
CHUNK_HEAD = struct.Struct(">I")
STREAMED = 2**64 - 1
ABORTED = 2**32 - 1
HARNESS_FILE = os.path.abspath(__file__)
RESERVED = frozenset({"llm_query", "llm_query_batched", "mcp", "_last_output", "_last_error", "mcp_servers",
                      "LOADED_MCP_SERVERS"})
ASYNCIO_DIR = os.path.join(os.path.dirname(os.__file__), "asyncio") + os.sep
CO_COROUTINE = 0x80  # inspect.CO_COROUTINE: code compiled with top-level await
FULL_OUTPUT_KEEP = 16 * 1024 * 1024
KERNEL = None  # the running Kernel, reachable as rlm_harness.KERNEL (its callbacks, for the host's tests)
RAW_THRESHOLD = 1 << 20
WRITE_CHUNK = 64 << 20
PROBE_LIMIT = 8 << 20
IMMUTABLE = (str, bytes, int, float, complex, bool, type(None), range)
DYNAMIC_LOOKUP = frozenset({"globals", "vars", "locals", "dir", "eval", "exec"})


class Fail(Exception):
    """A request the harness refuses; becomes an error reply with a stable code."""

    def __init__(self, code, message, argument=None):
        super().__init__(message)
        self.code, self.message, self.argument = code, message, argument


class Capture:
    """Everything written to stdout or stderr during one request, Python- or C-level."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.chunks, self.chars, self.dropped = [], 0, 0

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
        self.drain_lock = threading.Lock()
        threading.Thread(target=self._drain_forever, name="rlm-output", daemon=True).start()

    def _drain_forever(self):
        poller = select.poll()
        for pipe in self.pipes:
            poller.register(pipe.fd, select.POLLIN)
        while True:
            poller.poll()
            self.drain_now()

    def drain_now(self):
        with self.drain_lock:
            for pipe in self.pipes:
                pipe.drain()

    def reattach(self):
        sys.stdout, sys.stderr = self.streams

    def take(self):
        self.drain_now()
        return self.out.take(), self.err.take()


class Channel:
    """The framed pipe to the host."""

    def __init__(self, fd_in, fd_out):
        for fd in (fd_in, fd_out):
            enlarge_pipe(fd)
        self.reader = io.BufferedReader(io.FileIO(fd_in, "rb", closefd=False), 1 << 16)
        self.fd_out = fd_out
        self.send_lock = threading.Lock()
        self.kernel = None

    def _read_exact(self, n):
        data = self.reader.read(n)
        if len(data) < n:
            raise EOFError
        return data

    def receive(self):
        """The next request: its header, and its payload as bytes, None, or Chunks still on the pipe."""
        header_len, payload_len = FRAME_HEAD.unpack(self._read_exact(FRAME_HEAD.size))
        header = json.loads(self._read_exact(header_len))
        if payload_len == STREAMED:
            return header, Chunks(self)
        return header, self._read_exact(payload_len) if payload_len else None

    def send(self, header, payload=b""):
        body = json.dumps(header, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
        data = memoryview(FRAME_HEAD.pack(len(body), len(payload)) + body + payload)
        with self.send_lock:
            while data:
                data = data[os.write(self.fd_out, data):]


class CallbackError(RuntimeError):
    """The host refused or failed a request made from user code (llm_query, mcp): code is a stable
    upper-case word such as NOT_CONFIGURED, LIMIT_EXCEEDED or BACKEND_ERROR."""

    def __init__(self, code, message, kind=None):
        super().__init__(message)
        self.code, self.kind = code, kind


class Pending:
    """One callback request sent to the host; result() waits for (and returns or raises) its answer."""

    def __init__(self, cid, kind):
        self.cid, self.kind = cid, kind
        self.event = threading.Event()
        self.reply = None

    def set(self, reply):
        self.reply = reply
        self.event.set()

    def done(self):
        return self.event.is_set()

    def result(self, timeout=None):
        if not self.event.wait(timeout):
            raise TimeoutError(f"no answer from the host within {timeout} s")
        if self.reply.get("ok"):
            return self.reply.get("result")
        error = self.reply.get("error") or {}
        raise CallbackError(error.get("code", "ERROR"), error.get("message", "the host refused the request"),
                            self.kind)


class Callbacks:
    """Requests from user code to the host while an exec runs (frames {"cb": n, "kind", "request"}),
    answered on the same pipe in any order ({"cb": n, "ok", "result" | "error"}). A reader thread,
    started on the first request of an exec, reads the answers while the main thread runs user code;
    when the exec ends, requests still waiting are abandoned and a {"cb_close"} / {"cb_closed"}
    handshake stops the reader before the exec's reply is sent, so frames never interleave."""

    ABANDONED = {"ok": False, "error": {"code": "ABANDONED", "message": "the step ended before the host answered"}}
    HOST_GONE = {"ok": False, "error": {"code": "HOST_GONE", "message": "the host closed the kernel's pipe"}}

    def __init__(self, channel):
        self.channel = channel
        self.lock = threading.Lock()
        self.open = False
        self.reader = None
        self.pending = {}
        self.next_id = 0

    def begin(self):
        with self.lock:
            self.open = True

    def submit(self, kind, request):
        """Sends one request; returns its Pending at once."""
        with self.lock:
            if not self.open:
                raise CallbackError("NOT_RUNNING", f"{kind} requests can only be made while a step's code runs "
                                    "(not from a thread that outlives it)", kind)
            self.next_id += 1
            pending = Pending(self.next_id, kind)
            self.pending[pending.cid] = pending
            if self.reader is None:
                self.reader = threading.Thread(target=self._read, name="rlm-callbacks", daemon=True)
                self.reader.start()
        self.channel.send({"cb": pending.cid, "kind": kind, "request": request})
        return pending

    def call(self, kind, request):
        return self.submit(kind, request).result()

    def _read(self):
        while True:
            try:
                header, payload = self.channel.receive()
            except EOFError:
                self._abandon(self.HOST_GONE)
                return
            if header.get("cb_closed"):
                return
            with self.lock:
                pending = self.pending.pop(header.get("cb"), None)
            if pending is not None:
                pending.set(header)

    def _abandon(self, reply):
        with self.lock:
            waiting, self.pending = list(self.pending.values()), {}
        for pending in waiting:
            pending.set(reply)

    def end(self):
        """Closes the exec's callbacks: waiters are abandoned, the reader stopped."""
        with self.lock:
            self.open = False
            reader, self.reader = self.reader, None
        self._abandon(self.ABANDONED)
        if reader is not None and reader.is_alive():
            self.channel.send({"cb_close": True})
            reader.join()


class LLMQueryError(CallbackError):
    """llm_query or llm_query_batched failed. code: NOT_CONFIGURED, LIMIT_EXCEEDED, PROMPT_TOO_LARGE,
    DEPTH_LIMIT, TIMEOUT or BACKEND_ERROR. For a batch, answers holds the answers in order (None where a
    prompt failed) and errors the (index, code, message) of each failure."""

    def __init__(self, code, message, answers=None, errors=None):
        super().__init__(code, message, "llm")
        self.answers, self.errors = answers, errors or []


def _optional(name, value, kind, positive=False):
    if value is None:
        return None
    if not isinstance(value, kind) or isinstance(value, bool) or (positive and value < 1):
        wanted = "a positive int" if positive else kind.__name__
        raise TypeError(f"{name} must be {wanted} or None, not {value!r}")
    return value


def llm_functions(callbacks):
    """llm_query and llm_query_batched for user code: sub-LLM calls answered by the host."""

    def ask(prompts, system, max_tokens, model, **extra):
        request = {"prompts": prompts, "system": _optional("system", system, str),
                   "max_tokens": _optional("max_tokens", max_tokens, int, True),
                   "model": _optional("model", model, str)}
        request.update(extra)
        try:
            return callbacks.call("llm", request)["answers"]
        except LLMQueryError:
            raise
        except CallbackError as e:
            raise LLMQueryError(e.code, str(e)) from None

    def llm_query(prompt, *, system=None, max_tokens=None, model=None):
        """Ask a sub-LLM one prompt; returns its answer as a str. Raises LLMQueryError (.code) on failure."""
        if not isinstance(prompt, str):
            raise TypeError(f"prompt must be a str, not {type(prompt).__name__}")
        return ask([prompt], system, max_tokens, model)[0]["text"]

    def llm_query_batched(prompts, *, system=None, max_tokens=None, model=None, concurrency=None):
        """Ask a sub-LLM many prompts, run in parallel on the host (at most concurrency at once); returns the
        answers in the prompts' order. If any fails, raises LLMQueryError with .answers and .errors."""
        if isinstance(prompts, str):
            raise TypeError("prompts must be a list of str, not a str: use llm_query for one prompt")
        prompts = list(prompts)
        for i, prompt in enumerate(prompts):
            if not isinstance(prompt, str):
                raise TypeError(f"prompts[{i}] must be a str, not {type(prompt).__name__}")
        if not prompts:
            return []
        answers = ask(prompts, system, max_tokens, model, batched=True,
                      concurrency=_optional("concurrency", concurrency, int, True))
        texts = [a.get("text") for a in answers]
        errors = [(i, a["error"].get("code"), a["error"].get("message")) for i, a in enumerate(answers) if "error" in a]
        if errors:
            i, code, message = errors[0]
            raise LLMQueryError(code, f"{len(errors)} of {len(prompts)} prompts failed; prompt {i}: {message}",
                                texts, errors)
        return texts

    return llm_query, llm_query_batched


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


class ImportGuard:
    """__import__ for user code: refuses modules the server's import policy names. A guard rail
    against honest mistakes only: print.__self__.__import__('os') walks past it; the sandbox is the
    boundary. Imports made inside library modules are not affected."""

    def __init__(self):
        self.allowed, self.blocked = frozenset(), frozenset()

    def configure(self, allowed, blocked):
        self.allowed, self.blocked = frozenset(allowed), frozenset(blocked)

    def __call__(self, name, globals=None, locals=None, fromlist=(), level=0):
        top = name.partition(".")[0]
        if level == 0 and (top in self.blocked or (self.allowed and top not in self.allowed)):
            raise ImportError(
                f"import of {top!r} is refused by rlm-mcp's import policy, a guard rail against mistakes "
                f"(not a security boundary); the server's --blocked-imports / --allowed-imports set it",
                name=top)
        return builtins.__import__(name, globals, locals, fromlist, level)


class Sizer:
    """Estimated deep size of a value: exact for small containers, sampled for large ones."""

    SAMPLE = 256
    MAX_DEPTH = 6

    def size(self, obj):
        return self._size(obj, 0, set())

    def _size(self, obj, depth, seen):
        if id(obj) in seen:
            return 0
        size = sys.getsizeof(obj, 64)
        if depth >= self.MAX_DEPTH or isinstance(obj, (str, bytes, bytearray, int, float, complex, bool, type(None))):
            return size
        seen.add(id(obj))
        if isinstance(obj, dict):
            return size + self._items(list(obj.keys()), depth, seen) + self._items(list(obj.values()), depth, seen)
        if isinstance(obj, (list, tuple, set, frozenset)) or type(obj).__name__ == "deque":
            return size + self._items(obj if isinstance(obj, (list, tuple)) else list(obj), depth, seen)
        if isinstance(obj, (types.FunctionType, type, types.ModuleType)):
            return size
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            size += self._size(attrs, depth + 1, seen)
        return size

    def _items(self, items, depth, seen):
        n = len(items)
        if n <= self.SAMPLE:
            return sum(self._size(item, depth + 1, seen) for item in items)
        step = n / self.SAMPLE
        sample = sum(self._size(items[int(i * step)], depth + 1, seen) for i in range(self.SAMPLE))
        return int(sample * n / self.SAMPLE)


class VarMeta:
    __slots__ = ("created", "accessed", "size", "ident")

    def __init__(self, now, size, ident):
        self.created = self.accessed = now
        self.size, self.ident = size, ident


def iso(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).isoformat(timespec="milliseconds")


def human(n):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


PREVIEW = reprlib.Repr()
PREVIEW.maxstring, PREVIEW.maxother, PREVIEW.maxlist, PREVIEW.maxdict = 200, 200, 8, 8
PREVIEW.maxtuple = PREVIEW.maxset = PREVIEW.maxfrozenset = PREVIEW.maxdeque = 8
PREVIEW.maxlevel = 3
LONG_PREVIEW = reprlib.Repr()
LONG_PREVIEW.maxstring, LONG_PREVIEW.maxother, LONG_PREVIEW.maxlist, LONG_PREVIEW.maxdict = 1000, 1000, 20, 20
LONG_PREVIEW.maxtuple = LONG_PREVIEW.maxset = LONG_PREVIEW.maxfrozenset = LONG_PREVIEW.maxdeque = 20
LONG_PREVIEW.maxlevel = 4


def preview(value, long=False):
    try:
        return (LONG_PREVIEW if long else PREVIEW).repr(value)
    except Exception as e:  # a user-defined __repr__ may raise anything
        return f"<{type(value).__name__}: repr failed: {type(e).__name__}>"


def echo(value):
    """What an interactive prompt shows for a bare expression, bounded for huge values."""
    if isinstance(value, (str, bytes, bytearray, list, tuple, dict, set, frozenset)) and len(value) > 100_000:
        return preview(value, long=True)
    try:
        return repr(value)
    except Exception:
        return preview(value)


def describe_shape(value):
    if isinstance(value, str):
        return {"length": len(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"length": len(value)}
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        shape = {"length": len(value)}
        if isinstance(value, list) and value and isinstance(value[0], dict):
            shape["columns"] = list(value[0].keys())[:50]
        return shape
    return {}


class MCPError(RuntimeError):
    """A call to a bridged MCP server failed. code is a stable word: UNKNOWN_SERVER, SERVER_NOT_ALLOWED,
    UNKNOWN_TOOL, INVALID_ARGUMENTS, TOOL_ERROR (the tool answered isError; result holds its answer),
    SERVER_UNAVAILABLE, SERVER_ERROR, TIMEOUT, NOT_AVAILABLE."""

    def __init__(self, message, code="ERROR", result=None):
        super().__init__(message)
        self.code, self.result = code, result


class McpBridge:
    """Kernel side of code-execution mode: the mcp.runtime module and the mcp_<alias> proxies. Every call
    goes to the host as an "mcp" callback; the host decides which servers this run may reach."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.servers, self.discovered = (), ()
        self.executor = None
        self.runtime = self._modules()

    async def request(self, payload):
        import asyncio
        import concurrent.futures
        try:
            pending = self.kernel.callbacks.submit("mcp", payload)
        except CallbackError as e:
            raise MCPError(str(e), e.code) from None
        if self.executor is None:
            self.executor = concurrent.futures.ThreadPoolExecutor(32, thread_name_prefix="rlm-mcp")
        try:
            return await asyncio.get_running_loop().run_in_executor(self.executor, pending.result)
        except CallbackError as e:
            raise MCPError(str(e), e.code) from None

    async def call_tool(self, server, tool, arguments=None):
        if arguments is not None and not isinstance(arguments, dict):
            raise MCPError(f"arguments must be a dict, not {type(arguments).__name__}", "INVALID_ARGUMENTS")
        result = await self.request({"op": "call_tool", "server": server, "tool": tool, "arguments": arguments or {}})
        if isinstance(result, dict) and result.get("isError"):
            text = " ".join(c.get("text", "") for c in result.get("content") or () if isinstance(c, dict)).strip()
            raise MCPError(f"{server}.{tool} failed: {text or 'the tool reported an error'}", "TOOL_ERROR", result)
        return result

    async def list_tools(self, server):
        return await self.request({"op": "list_tools", "server": server})

    async def list_servers(self):
        return tuple(await self.request({"op": "list_servers"}))

    def describe_server(self, name):
        for server in self.servers:
            if server["name"] == name:
                return server
        raise MCPError(f"MCP server {name!r} is not loaded in this run; loaded: {', '.join(self.names()) or 'none'}",
                       "SERVER_NOT_ALLOWED")

    def names(self):
        return tuple(server["name"] for server in self.servers)

    def _modules(self):
        package = types.ModuleType("mcp", "Bridged MCP servers (rlm-mcp code-execution mode).")
        package.__path__ = []
        runtime = types.ModuleType("mcp.runtime", "Calls to the MCP servers this run may reach.")
        servers = types.ModuleType("mcp.servers", "One module per loaded MCP server, one function per tool.")
        servers.__path__ = []
        package.runtime, package.servers = runtime, servers
        runtime.MCPError = MCPError
        runtime.call_tool = self.call_tool
        runtime.list_tools = self.list_tools
        runtime.list_servers = self.list_servers
        runtime.describe_server = self.describe_server
        runtime.discovered_servers = lambda: tuple(self.discovered)
        runtime.list_loaded_server_metadata = lambda: tuple(self.servers)
        runtime.__all__ = ["MCPError", "call_tool", "list_tools", "list_servers", "describe_server",
                           "discovered_servers", "list_loaded_server_metadata"]
        self.package, self.server_modules = package, servers
        return runtime

    def install(self, spec, ns):
        """Loads this run's servers (spec: {"servers": [{name, alias, tools: [{name, alias, description,
        input_schema}]}], "discovered": [names]}) into sys.modules and the namespace, replacing the last run's."""
        self.servers, self.discovered = tuple(spec.get("servers", ())), tuple(spec.get("discovered", ()))
        for name in [n for n, v in ns.items() if isinstance(v, McpProxy)]:
            del ns[name]
        for name in [m for m in sys.modules if m.startswith("mcp.servers.")]:
            del sys.modules[name]
        self.server_modules.__all__ = []
        proxies = {}
        for server in self.servers:
            proxy = McpProxy(self, server)
            module = types.ModuleType(f"mcp.servers.{server['alias']}", f"MCP server {server['name']!r}")
            module.__all__, module.TOOLS = [], server.get("tools", [])
            module.TOOL_MAP = {tool["alias"]: tool for tool in module.TOOLS}
            for tool in module.TOOLS:
                setattr(module, tool["alias"], getattr(proxy, tool["alias"]))
                module.__all__.append(tool["alias"])
            setattr(self.server_modules, server["alias"], module)
            self.server_modules.__all__.append(server["alias"])
            sys.modules[module.__name__] = module
            proxies[server["name"]] = proxy
            ns["mcp_" + server["alias"]] = proxy
        sys.modules.update({"mcp": self.package, "mcp.runtime": self.runtime, "mcp.servers": self.server_modules})
        ns["mcp"] = self.package
        ns["mcp_servers"] = proxies
        ns["LOADED_MCP_SERVERS"] = self.names()


class McpProxy:
    """mcp_<alias>: each tool as an async method, by its alias (get-sum as get_sum) or its own name."""

    def __init__(self, bridge, server):
        self._bridge, self._name = bridge, server["name"]
        self._tools = {tool["alias"]: tool for tool in server.get("tools", ())}

    async def list_tools(self):
        return await self._bridge.list_tools(self._name)

    def __getattr__(self, alias):
        if alias.startswith("__"):
            raise AttributeError(alias)
        tool = self._tools.get(alias)
        target = tool["name"] if tool else alias
        bridge, server = self._bridge, self._name

        async def invoke(**arguments):
            return await bridge.call_tool(server, target, arguments)

        invoke.__name__ = invoke.__qualname__ = alias
        invoke.__doc__ = (tool or {}).get("description") or f"MCP tool {target} of {server}"
        return invoke

    def __dir__(self):
        return ["list_tools", *self._tools]

    def __repr__(self):
        return f"<MCP server {self._name!r}: {', '.join(self._tools) or 'no tools'}>"


def run_coroutine(coroutine):
    """Runs code compiled with top-level await to completion on a fresh event loop."""
    import asyncio
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(coroutine)
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        asyncio.set_event_loop(None)
        loop.close()


class NotPersisted(Exception):
    """A value the snapshot cannot hold; the message says why."""


def repl_defined(value):
    """A function or class made by code typed into the REPL: pickle cannot find it by reference later."""
    return isinstance(value, (types.FunctionType, type)) and getattr(value, "__module__", None) == "__main__"


def definitions(code):
    """{name: source} of a cell's top-level def, class and `name = lambda` statements."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return {}
    lines = code.splitlines(True)
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name, start = node.name, min([node.lineno] + [d.lineno for d in node.decorator_list])
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name)):
            name, start = node.targets[0].id, node.lineno
        else:
            continue
        found[name] = "".join(lines[start - 1:node.end_lineno])
    return found


def read_exact(f, n):
    data = f.read(n)
    if data is None or len(data) < n:
        buf = bytearray(data or b"")
        while len(buf) < n:
            more = f.read(n - len(buf))
            if not more:
                raise NotPersisted(f"snapshot file ends early ({len(buf)} of {n} bytes)")
            buf += more
        data = bytes(buf)
    return data


class Store:
    """A session's snapshot directory: one file per variable and manifest.json naming the current
    file of each. Files are written under a temporary name, fsynced and renamed; the manifest is
    replaced the same way, last, so a kill at any moment leaves the old snapshot or the new one."""

    MANIFEST = "manifest.json"
    BLOCK = 4096

    def __init__(self, directory, limit=0):
        self.dir = directory
        self.limit = limit  # bytes the directory may hold (0: no limit); the host kills a kernel past it
        self.entries, self.modules, self.lost, self.generation, self.saved_at = {}, {}, {}, 0, None
        try:
            with open(os.path.join(directory, self.MANIFEST), "rb") as f:
                manifest = json.load(f)
            self.entries = manifest.get("variables", {})
            self.modules = manifest.get("modules", {})
            self.lost = manifest.get("not_persisted", {})
            self.generation = int(manifest.get("generation", 0))
            self.saved_at = manifest.get("saved_at")
        except FileNotFoundError:
            pass
        self.sweep()

    def sweep(self):
        """Removes files no manifest names: left by a write that a kill cut short."""
        keep = {e["file"] for e in self.entries.values() if "file" in e} | {self.MANIFEST}
        for name in os.listdir(self.dir):
            if name not in keep:
                try:
                    os.unlink(os.path.join(self.dir, name))
                except OSError:
                    pass

    def write(self, name, value, source):
        """The manifest entry for value, its file (if any) written and synced but not yet committed."""
        entry = {"type": type(value).__name__, "saved": time.time()}
        if repl_defined(value):
            if "<locals>" in getattr(value, "__qualname__", ""):
                raise NotPersisted("made inside a function at run time; re-run the code that made it")
            if source is None:
                raise NotPersisted("its defining code was not typed as a top-level def/class/lambda in a cell")
            entry.update(kind="code", source=source)
            return entry, 0
        if type(value) is str and len(value) >= RAW_THRESHOLD:
            kind, parts = "str", [utf8_view(value)]
        elif type(value) is bytes and len(value) >= RAW_THRESHOLD:
            kind, parts = "bytes", [value]
        else:
            buffers = []
            try:
                head = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
            except Exception as e:  # any __reduce__ may raise anything
                raise NotPersisted(f"cannot be pickled: {type(e).__name__}: {e}") from None
            kind, parts = "pickle", [head] + [raw_buffer(b) for b in buffers]
            digest = hashlib.blake2b(digest_size=16)
            for part in parts:
                digest.update(part)
            entry["digest"] = digest.hexdigest()
            old = self.entries.get(name)
            if old is not None and old.get("digest") == entry["digest"]:
                return dict(old, saved=old.get("saved")), -1
        file = f"{name}.{self.generation + 1}"
        self._write_file(file, parts)
        entry.update(kind=kind, file=file, lengths=[memoryview(p).nbytes for p in parts])
        return entry, sum(entry["lengths"])

    def _write_file(self, file, parts):
        self._check_room(sum(memoryview(p).nbytes for p in parts))
        tmp = os.path.join(self.dir, "." + file + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            for part in parts:
                view = memoryview(part).cast("B")
                for off in range(0, len(view), WRITE_CHUNK):
                    chunk = view[off:off + WRITE_CHUNK]
                    while chunk:
                        chunk = chunk[os.write(fd, chunk):]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            fd = None
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        finally:
            if fd is not None:
                os.close(fd)
        os.replace(tmp, os.path.join(self.dir, file))

    def _check_room(self, nbytes):
        """OSError ENOSPC if a file of nbytes would take the directory past its limit, measured as the
        host measures it: every entry's size rounded up to 4 KiB, a hard-linked inode once."""
        if self.limit <= 0:
            return
        used, seen = 0, set()
        with os.scandir(self.dir) as entries:
            for entry in entries:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                used += max(self.BLOCK, -(-st.st_size // self.BLOCK) * self.BLOCK)
        need = max(self.BLOCK, -(-nbytes // self.BLOCK) * self.BLOCK) + 2 * self.BLOCK  # the file, the manifest
        if used + need > self.limit:
            raise OSError(errno.ENOSPC, f"No space left on device: the snapshot directory may hold "
                          f"{self.limit >> 20} MiB (--max-disk-mb), {used >> 20} MiB are used and this needs "
                          f"{nbytes >> 20} MiB more")

    def commit(self, entries, modules, lost):
        """Makes entries the snapshot: the manifest is replaced atomically; files it no longer names go.
        lost names the variables the snapshot could not hold, with the reason."""
        manifest = {"version": 1, "generation": self.generation + 1, "saved_at": time.time(),
                    "variables": entries, "modules": modules, "not_persisted": lost}
        self._sync_dir()
        tmp = os.path.join(self.dir, ".manifest.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(manifest, f, ensure_ascii=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(self.dir, self.MANIFEST))
        self._sync_dir()
        old = {e.get("file") for e in self.entries.values()} - {e.get("file") for e in entries.values()}
        self.entries, self.modules, self.lost = entries, modules, lost
        self.generation, self.saved_at = manifest["generation"], manifest["saved_at"]
        for file in old:
            if file:
                try:
                    os.unlink(os.path.join(self.dir, file))
                except OSError:
                    pass

    def _sync_dir(self):
        fd = os.open(self.dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self, name):
        entry = self.entries[name]
        kind = entry["kind"]
        if kind == "str" and entry["lengths"][0] > 0:
            # decoding straight from the page cache skips a copy: twice as fast as read() then decode
            with open(os.path.join(self.dir, entry["file"]), "rb") as f:
                with mmap.mmap(f.fileno(), entry["lengths"][0], access=mmap.ACCESS_READ) as mapped:
                    return str(mapped, "utf-8", "surrogatepass")
        with open(os.path.join(self.dir, entry["file"]), "rb", buffering=0) as f:
            parts = [read_exact(f, n) for n in entry["lengths"]]
        if kind == "str":
            return str(parts[0], "utf-8", "surrogatepass")
        if kind == "bytes":
            return parts[0]
        return pickle.loads(parts[0], buffers=parts[1:])


def utf8_view(text):
    """The UTF-8 bytes of text. CPython keeps an ASCII str's characters as exactly those bytes, so for
    one they are viewed in place (checked at both ends) instead of copied; anything else is encoded."""
    if text.isascii() and sys.implementation.name == "cpython":
        try:
            import ctypes
            n = len(text)
            start = id(text) + sys.getsizeof(text) - n - 1
            view = memoryview((ctypes.c_char * n).from_address(start)).cast("B")
            edge = min(n, 4096)
            if bytes(view[:edge]) == text[:edge].encode() and bytes(view[n - edge:]) == text[n - edge:].encode():
                return view
        except Exception:  # no ctypes here, or another layout: copy instead
            pass
    return text.encode("utf-8", "surrogatepass")


def raw_buffer(buffer):
    try:
        return buffer.raw()
    except BufferError:  # not contiguous
        return bytes(buffer)


class Kernel:
    def __init__(self, config, callbacks):
        self.callbacks = callbacks
        self.guard = ImportGuard()
        user_builtins = dict(vars(builtins))
        user_builtins["__import__"] = self.guard
        user_builtins["LLMQueryError"] = LLMQueryError
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = user_builtins
        sys.modules["__main__"] = main  # so pickle finds REPL classes and functions by reference
        self.ns = main.__dict__
        self.ns["llm_query"], self.ns["llm_query_batched"] = llm_functions(callbacks)
        self.store = None
        self.spilled = set()
        self.dirty = set()
        self.defs = {}
        self.not_persisted = {}
        self.lost = {}
        self.meta = {}
        self.sizer = Sizer()
        self.cell = 0
        self.compiled = {}
        self.interruptible = False
        self.rendered = None
        self.mcp = McpBridge(self)
        self.configure(config)

    def configure(self, config):
        self.limit = int(config.get("memory_limit_bytes", 1 << 30))
        self.high = float(config.get("cleanup_threshold", 0.8))
        self.low = float(config.get("cleanup_target", 0.6))
        self.output_cap = int(config.get("output_cap", 20000))
        self.disk_limit = int(config.get("disk_limit_bytes", getattr(self, "disk_limit", 0)))
        self.guard.configure(config.get("allowed_imports", ()), config.get("blocked_imports", ()))

    # ----- namespace bookkeeping -------------------------------------------------------------

    def user_names(self):
        return [n for n, v in self.ns.items() if self.is_user_var(n, v)]

    @staticmethod
    def is_user_var(name, value):
        return not (name.startswith("__") or name in RESERVED or isinstance(value, (types.ModuleType, McpProxy)))

    def identities(self):
        return {n: id(v) for n, v in self.ns.items() if self.is_user_var(n, v)}

    def track(self, names, now, sizes=None):
        """Notes the named variables as used now, with their sizes (from sizes where it has them)."""
        for name in names:
            value = self.ns[name]
            meta = self.meta.get(name)
            size = sizes[name] if sizes and name in sizes else self.sizer.size(value)
            if meta is None:
                self.meta[name] = VarMeta(now, size, id(value))
            else:
                meta.accessed, meta.size, meta.ident = now, size, id(value)

    def forget(self, names):
        for name in names:
            self.meta.pop(name, None)

    def total(self):
        return sum(m.size for m in self.meta.values())

    def enforce_memory(self, protected):
        """Spill least-recently-used variables to the snapshot once past the threshold, down to the
        target; without a snapshot directory, or for a value that cannot be pickled, drop them."""
        evicted = []
        if self.limit <= 0 or self.total() <= self.high * self.limit:
            return evicted
        for name, meta in sorted(self.meta.items(), key=lambda item: item[1].accessed):
            if self.total() <= self.low * self.limit:
                break
            if name in protected or repl_defined(self.ns.get(name)):
                continue
            gone = {"name": name, "size_bytes": meta.size, "size_human": human(meta.size)}
            reason = self.spill(name)
            gone["spilled"] = reason is None
            if reason is not None:
                if self.store is not None:
                    gone["reason"] = reason
                del self.ns[name]
                self.dirty.add(name)
            del self.meta[name]
            evicted.append(gone)
        if evicted:
            gc.collect()
        return evicted

    # ----- snapshots -----------------------------------------------------------------------------

    def exists(self, name):
        return name in self.spilled or (name in self.ns and self.is_user_var(name, self.ns[name]))

    def spill(self, name):
        """Moves a variable to the snapshot (written first if it changed); None, or why it could not."""
        if self.store is None:
            return "no snapshot store (the server runs without a state directory)"
        if name in self.dirty or name not in self.store.entries:
            _, failed, _ = self.persist([name])
            if name in failed:
                return failed[name]
        del self.ns[name]
        self.spilled.add(name)
        return None

    def unspill(self, name):
        value = self.store.read(name)
        self.ns[name] = value
        self.spilled.discard(name)
        self.track([name], time.time())
        return value

    def unspill_referenced(self, program):
        """Loads the spilled variables a cell uses; returns what it loaded, for the reply."""
        started, loaded, size = time.perf_counter(), [], 0
        names = set()
        for code_object in program:
            if code_object is not None:
                names |= self.referenced_names(code_object)
        if names & DYNAMIC_LOOKUP:  # the cell may reach any variable by name
            names |= self.spilled
        for name in sorted(names & self.spilled):
            try:
                self.unspill(name)
                loaded.append(name)
                size += sum(self.store.entries[name].get("lengths", ()))
            except Exception as e:  # a corrupt or unreadable file: the cell sees a NameError
                self.spilled.discard(name)
                self.not_persisted[name] = f"could not be read back from the snapshot: {type(e).__name__}: {e}"
        if not loaded:
            return None
        return {"names": loaded, "bytes": size, "duration_ms": round((time.perf_counter() - started) * 1000, 3)}

    def modules(self):
        return {n: v.__name__ for n, v in self.ns.items()
                if isinstance(v, types.ModuleType) and not n.startswith("__")}

    def persist(self, names):
        """Writes the named live variables and commits a snapshot: ([written], {name: reason}, bytes)."""
        written, failed, total = [], {}, 0
        updated = {}
        for name in names:
            try:
                entry, size = self.store.write(name, self.ns[name], self.defs.get(name))
            except NotPersisted as e:
                failed[name] = str(e)
                continue
            except OSError as e:
                failed[name] = f"the snapshot file could not be written: {e}"
                continue
            entry["size_bytes"] = self.meta[name].size if name in self.meta else self.sizer.size(self.ns[name])
            if entry.get("kind") == "code":
                entry["order"] = list(self.defs).index(name)
            updated[name] = entry
            if size >= 0:
                written.append(name)
                total += size
        entries = {n: e for n, e in self.store.entries.items()
                   if (n in self.spilled or n in self.ns) and n not in failed}
        entries.update(updated)
        for name, reason in failed.items():
            self.not_persisted[name] = reason
        lost = {n: r for n, r in self.not_persisted.items() if n in self.ns and n not in entries}
        lost.update(self.lost)
        self.store.commit(entries, self.modules(), lost)
        for name in names:
            self.dirty.discard(name)
        self.dirty -= {n for n in self.dirty if not self.exists(n)}
        for name in updated:
            self.not_persisted.pop(name, None)
        return written, failed, total

    def probe(self, name, value):
        """Why value cannot be snapshotted, found cheaply now (small values are test-pickled), or None."""
        if isinstance(value, types.ModuleType) or type(value) in IMMUTABLE:
            return None
        if repl_defined(value):
            if "<locals>" in getattr(value, "__qualname__", ""):
                return "made inside a function at run time; re-run the code that made it"
            return None if name in self.defs else (
                "its defining code was not typed as a top-level def/class/lambda in a cell")
        meta = self.meta.get(name)
        if meta is not None and meta.size > PROBE_LIMIT:
            return None
        try:
            pickle.dumps(value, protocol=5, buffer_callback=lambda b: None)
        except Exception as e:
            return f"cannot be pickled: {type(e).__name__}: {e}"
        return None

    def op_snapshot(self, req, payload, output):
        if self.store is None:
            raise Fail("INVALID_ARGUMENT", "this kernel has no snapshot directory")
        started = time.perf_counter()
        pending = sorted(self.dirty)
        live = [n for n in pending if n in self.ns and self.is_user_var(n, self.ns[n])]
        if pending or self.modules() != self.store.modules:
            written, failed, total = self.persist(live)
        else:
            written, failed, total = [], {}, 0
        return {"written": written, "unchanged": [n for n in live if n not in written and n not in failed],
                "not_persisted": dict(self.not_persisted), "bytes": total,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3),
                "generation": self.store.generation, "saved_at": iso(self.store.saved_at) if self.store.saved_at else None}

    def op_restore(self, req, payload, output):
        """Attaches the session's snapshot directory; functions, classes and imports come back now,
        other variables when code first uses them (or all now, with eager)."""
        started = time.perf_counter()
        self.store = Store(req["dir"], self.disk_limit)
        failed = {}
        for alias, module in self.store.modules.items():
            try:
                self.ns[alias] = self.guard(module, self.ns, None, ("__name__",) if "." in module else (), 0)
            except Exception as e:
                failed[alias] = f"import {module} failed: {type(e).__name__}: {e}"
        code = sorted((e.get("order", 0), n) for n, e in self.store.entries.items() if e.get("kind") == "code")
        restored = []
        for _, name in code:
            source = self.store.entries[name]["source"]
            try:
                exec(compile(source, f"<restored {name}>", "exec"), self.ns)
                self.defs[name] = source
                restored.append(name)
            except Exception as e:
                failed[name] = f"its defining code failed on restore: {type(e).__name__}: {e}"
        self.spilled = {n for n, e in self.store.entries.items() if e.get("kind") != "code"}
        self.lost = {n: r for n, r in self.store.lost.items() if n not in self.store.entries}
        self.track(restored, time.time())
        if req.get("eager"):
            for name in sorted(self.spilled):
                self.unspill(name)
        self.not_persisted.update(failed)
        return {"generation": self.store.generation,
                "saved_at": iso(self.store.saved_at) if self.store.saved_at else None,
                "restored": restored, "spilled": sorted(self.spilled), "failed": failed,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3), "memory": self.memory()}

    def memory(self, with_rss=False):
        total = self.total()
        summary = {
            "total_bytes": total,
            "total_human": human(total),
            "variable_count": len(self.meta),
            "spilled_count": len(self.spilled),
            "limit_bytes": self.limit,
            "percent": round(100.0 * total / self.limit, 2) if self.limit > 0 else 0.0,
        }
        if with_rss:
            summary["limit_human"] = human(self.limit)
            summary["rss_bytes"] = rss_bytes()
            summary["rss_human"] = human(summary["rss_bytes"])
        return summary

    # ----- requests ----------------------------------------------------------------------------

    def op_exec(self, req, payload, output):
        code = req["code"]
        cap = int(req.get("output_cap", self.output_cap))
        if "mcp" in req:
            self.mcp.install(req["mcp"], self.ns)
        program, error = self.compile_cell(code)
        loaded = self.unspill_referenced(program) if program is not None and self.spilled else None
        before = self.identities()
        started = time.perf_counter()
        if program is not None:
            output.reattach()
            self.callbacks.begin()
            try:
                error = self.run(program)
            finally:
                self.callbacks.end()
        duration = time.perf_counter() - started
        (out, out_dropped), (err, err_dropped) = output.take()
        now = time.time()
        after = self.identities()
        changed = [n for n, i in after.items() if before.get(n) != i]
        deleted = [n for n in before if n not in after]
        self.forget([n for n in self.meta if n not in after])
        touched = set(changed)
        for code_object in program or ():
            if code_object is not None:
                touched.update(n for n in self.referenced_names(code_object) if n in after)
        self.track(touched, now)
        not_persisted = self.note_changes(code, changed, deleted, touched)
        evicted = self.enforce_memory(touched)
        truncated = {}
        reply = {
            "stdout": self.clip(out, out_dropped, cap, "_last_output", "stdout", truncated),
            "stderr": self.clip(err, err_dropped, cap, "_last_error", "stderr", truncated),
            "error": error,
            "variables_changed": changed,
            "variables_deleted": deleted,
            "duration_ms": round(duration * 1000, 3),
            "evicted": evicted,
            "memory": self.memory(),
        }
        if truncated:
            reply["truncated"] = truncated
        if not_persisted:
            reply["not_persisted"] = not_persisted
        if loaded:
            reply["loaded_from_snapshot"] = loaded
        return reply

    def note_changes(self, code, changed, deleted, touched):
        """Marks what the next snapshot must write; returns {name: reason} for new values it cannot hold."""
        if any(repl_defined(self.ns[n]) for n in changed):
            found = definitions(code)
            for name in changed:
                if name in found and repl_defined(self.ns[name]):
                    self.defs.pop(name, None)
                    self.defs[name] = found[name]
        for name in deleted:
            self.defs.pop(name, None)
            self.not_persisted.pop(name, None)
        for name in changed:
            self.lost.pop(name, None)
        self.dirty.update(changed, deleted)
        if self.store is not None:
            modules = self.modules()
            self.dirty.update(n for n, m in modules.items() if self.store.modules.get(n) != m)
            self.dirty.update(n for n in self.store.modules if n not in modules)
        self.dirty.update(n for n in touched if type(self.ns[n]) not in IMMUTABLE and not repl_defined(self.ns[n]))
        reasons = {}
        for name in changed:
            reason = self.probe(name, self.ns[name])
            if reason is None:
                self.not_persisted.pop(name, None)
            else:
                self.not_persisted[name] = reasons[name] = reason
        return reasons

    def compile_cell(self, code):
        cached = self.compiled.get(code)
        if cached is not None:
            return cached, None
        self.cell += 1
        filename = f"<cell {self.cell}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        try:
            tree = ast.parse(code, filename, "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            body = compile(tree, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            tail = compile(last, filename, "eval", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT) if last is not None else None
        except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as e:
            return None, self.describe_error(e)
        program = (body, tail)
        if len(self.compiled) > 256:
            self.compiled.clear()
        self.compiled[code] = program
        return program, None

    def run(self, program):
        body, tail = program
        try:
            self.interruptible = True
            if body.co_flags & CO_COROUTINE:
                run_coroutine(eval(body, self.ns))
            else:
                exec(body, self.ns)
            if tail is not None:
                value = eval(tail, self.ns)
                if tail.co_flags & CO_COROUTINE:
                    value = run_coroutine(value)
                self.interruptible = False
                if value is not None:
                    print(echo(value))
            return None
        except BaseException as e:  # user code may raise anything, SystemExit included
            self.interruptible = False
            return self.describe_error(e)
        finally:
            self.interruptible = False

    @staticmethod
    def describe_error(e):
        frames = [] if isinstance(e, SyntaxError) else [
            f for f in traceback.extract_tb(e.__traceback__)
            if f.filename != HARNESS_FILE and not f.filename.startswith(ASYNCIO_DIR)]
        lines = ["Traceback (most recent call last):\n"] if frames else []
        lines += traceback.format_list(frames)
        lines += traceback.format_exception_only(type(e), e)
        error = {"type": type(e).__name__, "message": str(e), "traceback": "".join(lines)}
        if isinstance(e, KeyboardInterrupt):
            error["interrupted"] = True
        if isinstance(e, SyntaxError):
            error["line"] = e.lineno
        return error

    def referenced_names(self, code, depth=0):
        names = set(code.co_names) | set(code.co_varnames if depth else ())
        for const in code.co_consts:
            if isinstance(const, types.CodeType) and depth < 8:
                names |= self.referenced_names(const, depth + 1)
        for name in list(names):
            value = self.ns.get(name)
            if isinstance(value, types.FunctionType) and depth < 2:
                names |= self.referenced_names(value.__code__, depth + 1)
        return names

    def clip(self, text, dropped, cap, keep_name, stream, truncated):
        total = len(text) + dropped
        if total <= cap:
            return text
        self.ns[keep_name] = text
        head = cap * 3 // 4
        tail = cap - head
        cut = total - head - tail
        kept = f"the first {len(text):,} characters are" if dropped else "the full text is"
        marker = (
            f"\n\n[... {cut:,} of {total:,} characters cut here; {kept} in the variable {keep_name}: "
            f"print({keep_name}[{head}:{head + cap}]) shows the next part ...]\n\n"
        )
        truncated[stream] = {"total_chars": total, "shown_chars": cap, "kept_in": keep_name, "kept_chars": len(text)}
        return text[:head] + marker + (text[len(text) - tail:] if tail else "")

    def op_load(self, req, payload, output):
        name = check_name(req["name"])
        data_type = req.get("data_type", "text")
        started = time.perf_counter()
        try:
            self.interruptible = True
            if "path" in req:
                value = load_file(req["path"], data_type)
            else:
                value = parse_payload(payload, data_type)
        except KeyboardInterrupt:
            raise Fail("INTERRUPTED", f"loading {name!r} was interrupted; nothing was stored") from None
        finally:
            self.interruptible = False
        self.ns[name] = value
        self.spilled.discard(name)
        self.not_persisted.pop(name, None)
        self.dirty.add(name)
        self.track([name], time.time(), {name: loaded_size(value, data_type, self.sizer)})
        evicted = self.enforce_memory({name})
        meta = self.meta[name]
        reply = {
            "name": name,
            "type": type(value).__name__,
            "data_type": data_type,
            "size_bytes": meta.size,
            "size_human": human(meta.size),
            "preview": preview(value),
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
            "evicted": evicted,
            "memory": self.memory(),
        }
        reply.update(describe_shape(value))
        return reply

    def op_vars(self, req, payload, output):
        live = [self.var_entry(name, long=False) for name in self.user_names()]
        spilled = [self.spilled_entry(name) for name in sorted(self.spilled)]
        lost = [self.lost_entry(name) for name in sorted(self.lost) if name not in self.ns]
        return {"variables": live + spilled + lost, "memory": self.memory()}

    def lost_entry(self, name):
        return {"name": name, "status": "lost", "not_persisted": self.lost[name],
                "preview": "(not in the snapshot the session was restored from, so it is gone; make it again)"}

    def spilled_entry(self, name):
        saved = self.store.entries[name]
        entry = {"name": name, "status": "spilled", "type": saved.get("type"),
                 "size_bytes": saved.get("size_bytes", 0), "size_human": human(saved.get("size_bytes", 0)),
                 "saved": iso(saved["saved"]) if saved.get("saved") else None,
                 "preview": "(spilled to the snapshot store; code that uses it loads it back)"}
        if name in self.not_persisted:
            entry["not_persisted"] = self.not_persisted[name]
        return entry

    def var_entry(self, name, long):
        value = self.ns[name]
        meta = self.meta.get(name)
        if meta is None:
            self.track([name], time.time())
            meta = self.meta[name]
        entry = {
            "name": name,
            "status": "live",
            "type": type(value).__name__,
            "size_bytes": meta.size,
            "size_human": human(meta.size),
            "created": iso(meta.created),
            "last_accessed": iso(meta.accessed),
            "preview": preview(value, long),
        }
        entry.update(describe_shape(value))
        if name in self.not_persisted:
            entry["not_persisted"] = self.not_persisted[name]
        elif self.store is not None:
            entry["persisted"] = "pending" if name in self.dirty else "saved"
        return entry

    def op_var_info(self, req, payload, output):
        name = req["name"]
        if name in self.spilled:
            return self.spilled_entry(name)
        if name in self.lost and name not in self.ns:
            return self.lost_entry(name)
        if name not in self.ns or not self.is_user_var(name, self.ns[name]):
            raise Fail("VARIABLE_NOT_FOUND", f"no variable named {name!r}; rlm_list_vars lists them", "name")
        return self.var_entry(name, long=True)

    def op_clear(self, req, payload, output):
        if req.get("all"):
            names = self.user_names() + sorted(self.spilled)
        else:
            name = req["name"]
            if not self.exists(name):
                raise Fail("VARIABLE_NOT_FOUND", f"no variable named {name!r}; rlm_list_vars lists them", "name")
            names = [name]
        freed = sum(self.meta[n].size for n in names if n in self.meta)
        for name in names:
            if name in self.spilled:
                self.spilled.discard(name)
            else:
                del self.ns[name]
            self.defs.pop(name, None)
            self.not_persisted.pop(name, None)
        self.dirty.update(names)
        self.forget(names)
        if req.get("all"):
            self.lost.clear()
        gc.collect()
        return {"cleared": names, "freed_bytes": freed, "freed_human": human(freed), "memory": self.memory()}

    def op_get(self, req, payload, output):
        """A variable's value rendered for a model, one page of it: offset and max_chars in characters."""
        name = req["name"]
        if name in self.spilled:
            self.unspill(name)
        if name not in self.ns or not self.is_user_var(name, self.ns[name]):
            raise Fail("VARIABLE_NOT_FOUND", f"no variable named {name!r}; rlm_list_vars lists them", "var_name")
        value = self.ns[name]
        key = (name, id(value))
        if self.rendered is None or self.rendered[0] != key:
            self.rendered = (key, *self.render(value))
        _, text, form, note = self.rendered
        offset, max_chars = int(req.get("offset", 0)), int(req.get("max_chars", self.output_cap))
        page = text[offset:offset + max_chars]
        end = offset + len(page)
        reply = {"var_name": name, "type": type(value).__name__, "format": form, "total_chars": len(text),
                 "offset": offset, "returned_chars": len(page), "next_offset": end if end < len(text) else None,
                 "value": page}
        if note:
            reply["note"] = note
        if name in self.meta:
            self.meta[name].accessed = time.time()
        return reply

    RENDER_LIMIT = 64 * 1024 * 1024

    def render(self, value):
        """(text, format, note): str as itself, JSON where it serialises, else repr; huge values as a preview."""
        if isinstance(value, str):
            return value, "text", None
        if value is None or isinstance(value, (bool, int, float)):
            return repr(value), "repr", None
        size = self.sizer.size(value)
        if size > self.RENDER_LIMIT:
            return preview(value, long=True), "preview", (
                f"the value is about {human(size)}, too large to render in full; slice it in code")
        try:
            return json.dumps(value, ensure_ascii=False), "json", None
        except (TypeError, ValueError, RecursionError):
            return echo(value), "repr", None

    def op_memory(self, req, payload, output):
        return self.memory(with_rss=True)

    def op_configure(self, req, payload, output):
        self.configure(req)
        return {"memory": self.memory()}

    def op_ping(self, req, payload, output):
        return {"pid": os.getpid(), "python": sys.version.split()[0]}


def check_name(name):
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise Fail("INVALID_ARGUMENT", f"{name!r} is not a valid Python variable name", "name")
    if name.startswith("__") or name in RESERVED:
        raise Fail("INVALID_ARGUMENT", f"{name!r} is reserved by rlm-mcp; choose another name", "name")
    return name


DATA_TYPES = ("text", "json", "lines", "csv")


def check_data_type(data_type):
    if data_type not in DATA_TYPES:
        raise Fail("INVALID_ARGUMENT", f"unknown data_type {data_type!r}; use text, json, lines or csv", "data_type")


def decode(data):
    """Bytes as text, the way every load reads them: UTF-8, invalid bytes as U+FFFD, line ends kept."""
    return str(data, "utf-8", "replace")


def payload_texts(payload):
    """The payload as a sequence of str pieces (one per chunk when streamed)."""
    if payload is None:
        return []
    if isinstance(payload, Chunks):
        return decoded(payload)
    return [decode(payload)]


def decoded(chunks):
    """Each chunk as text; a character split between chunks comes whole, and bytes left incomplete at
    the end as U+FFFD, as decode() of all the bytes would give."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    for chunk in chunks:
        text = decoder.decode(chunk)
        if text:
            yield text
    text = decoder.decode(b"", True)
    if text:
        yield text


def parse_payload(payload, data_type):
    """The value of a load from inline data or a streamed source. Lines are split as each chunk
    arrives (while the host sends the next); csv reads the chunks as a file, like a file load."""
    check_data_type(data_type)
    if data_type == "lines":
        return split_lines(payload_texts(payload))
    if data_type == "csv" and isinstance(payload, Chunks):
        return read_csv(text_stream(ChunkFile(payload)))
    return parse_text("".join(payload_texts(payload)), data_type)


def parse_text(text, data_type):
    if data_type == "text":
        return text
    if data_type == "lines":
        return split_lines([text])
    if data_type == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise Fail("INVALID_DATA", f"data is not valid JSON: {e}", "data") from None
    if data_type == "csv":
        return read_csv(io.StringIO(text, newline=""))
    check_data_type(data_type)


def text_lines(text):
    """text split where "\n" or "\r\n" ends a line (a lone "\r" does not): [head, *whole lines, tail],
    at C speed. Unlike str.splitlines, nothing else (a lone \r, \x0b, \x1c, \u2028, ...) ends a line."""
    if "\r" not in text:
        return text.split("\n")
    if text.count("\r\n") == text.count("\n"):  # every line ends with "\r\n"
        return text.split("\r\n")
    parts = text.split("\n")
    last = parts.pop()
    parts = [p[:-1] if p.endswith("\r") else p for p in parts]
    parts.append(last)
    return parts


def split_lines(texts):
    """Lines of the concatenated texts: "\r\n" and "\n" both end a line; a line may span texts."""
    lines, pending = [], []
    for text in texts:
        if not text:
            continue
        if pending and text[0] == "\n" and pending[-1].endswith("\r"):
            pending[-1] = pending[-1][:-1]  # a "\r\n" cut between two texts
        parts = text_lines(text)
        if len(parts) == 1:
            pending.append(text)
            continue
        if pending:
            parts[0] = "".join(pending) + parts[0]
        tail = parts.pop()
        pending = [tail] if tail else []
        if lines:
            lines += parts
        else:
            lines = parts
    if pending:
        lines.append("".join(pending))
    return lines


class ChunkFile(io.RawIOBase):
    """A streamed payload as a read-only binary file, so that it is parsed as a file load is."""

    def __init__(self, chunks):
        self.chunks, self.left = iter(chunks), memoryview(b"")

    def readable(self):
        return True

    def readinto(self, buffer):
        while not self.left:
            chunk = next(self.chunks, None)
            if chunk is None:
                return 0
            self.left = memoryview(chunk)
        n = min(len(buffer), len(self.left))
        buffer[:n] = self.left[:n]
        self.left = self.left[n:]
        return n


def text_stream(raw):
    """A binary file as csv wants it: UTF-8 text, invalid bytes as U+FFFD, line ends untranslated."""
    return io.TextIOWrapper(io.BufferedReader(raw, 1 << 20), encoding="utf-8", errors="replace", newline="")


def read_csv(stream):
    try:
        return list(csv.DictReader(stream))
    except csv.Error as e:
        raise Fail("INVALID_DATA", f"data is not valid CSV: {e}", "data") from None


def load_file(path, data_type):
    """The value of a file load. Read as bytes and decoded in one go: a text-mode read would be
    slower, and would translate line ends, which no other load does."""
    check_data_type(data_type)
    try:
        with open(path, "rb", buffering=0) as f:
            if data_type == "csv":
                return read_csv(text_stream(f))
            data = f.read()
    except FileNotFoundError:
        raise Fail("FILE_NOT_FOUND", f"file not found: {path}", "path") from None
    except IsADirectoryError:
        raise Fail("INVALID_ARGUMENT", f"{path} is a directory, not a file", "path") from None
    except PermissionError:
        raise Fail("PERMISSION_DENIED", f"the kernel may not read {path}", "path") from None
    text = decode(data)
    del data
    return parse_text(text, data_type)


def loaded_size(value, data_type, sizer):
    """The size of a value a load has just made. Exact for lines (the list and every str, one pass at
    C speed: a sample would miss one huge line among small ones); estimated for csv and json."""
    if data_type == "lines":
        return sys.getsizeof(value) + sum(map(str.__sizeof__, value))
    return sizer.size(value)


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
            hard = self.resource.getrlimit(self.resource.RLIMIT_CPU)[1]
            soft = int(used) + self.cpu_per_request
            if hard == self.resource.RLIM_INFINITY or soft <= hard:
                self.resource.setrlimit(self.resource.RLIMIT_CPU, (soft, hard))


def main():
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    limits = Limits(config.get("limits", {}))
    fd_in, fd_out, diag = os.dup(0), os.dup(1), os.dup(2)
    faulthandler.enable(os.fdopen(diag, "w", closefd=False))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "rb", closefd=False), encoding="utf-8")
    channel = Channel(fd_in, fd_out)
    output = Output()
    global KERNEL
    sys.modules["rlm_harness"] = sys.modules[__name__]
    kernel = KERNEL = Kernel(config, Callbacks(channel))
    channel.kernel = kernel

    def interrupt(signum, frame):
        if kernel.interruptible:
            raise KeyboardInterrupt(f"interrupted by signal {signum}")

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGXCPU, interrupt)
    handlers = {name[3:]: getattr(kernel, name) for name in dir(kernel) if name.startswith("op_")}
    channel.send({"ready": True, "pid": os.getpid(), "python": sys.version.split()[0]})
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
                reply["variables_unsaved"] = sorted(kernel.dirty)
        except Fail as e:
            reply = {"id": rid, "ok": False, "code": e.code, "message": e.message, "argument": e.argument}
        except MemoryError:
            reply = {"id": rid, "ok": False, "code": "OUT_OF_MEMORY", "message": "the kernel ran out of memory"}
        except BaseException as e:  # keep serving: a broken request must not end the session
            os.write(diag, traceback.format_exc().encode("utf-8", "replace"))
            reply = {"id": rid, "ok": False, "code": "KERNEL_ERROR", "message": f"{type(e).__name__}: {e}"}
        if isinstance(payload, Chunks):
            payload.finish()
        channel.send(reply)


if __name__ == "__main__":
    main()
