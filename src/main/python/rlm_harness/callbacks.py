"""Requests from user code to the host while an exec runs: the callback channel, llm_query and llm_query_batched.

threading (with functools and collections, ~0.8 MiB) is imported at the first callback, not by every kernel."""
import _thread


class CallbackError(RuntimeError):
    """The host refused or failed a request made from user code (llm_query, mcp): code is a stable
    upper-case word such as NOT_CONFIGURED, LIMIT_EXCEEDED or BACKEND_ERROR."""

    def __init__(self, code, message, kind=None):
        super().__init__(message)
        self.code, self.kind = code, kind


class Pending:
    """One callback request sent to the host; result() waits for (and returns or raises) its answer."""

    def __init__(self, cid, kind):
        import threading
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
        self.lock = _thread.allocate_lock()
        self.open = False
        self.reader = None
        self.pending = {}
        self.next_id = 0
        self.printed = None

    def begin(self, printed=None):
        """printed: what the step has printed since it was last asked, sent with each llm and rlm request, so
        that a step waiting on the agent's answers can show its output so far."""
        with self.lock:
            self.open = True
            self.printed = printed

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
                import threading
                self.reader = threading.Thread(target=self._read, name="rlm-callbacks", daemon=True)
                self.reader.start()
        if self.printed is not None and kind in ("llm", "rlm"):
            request = dict(request, printed=self.printed())
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


# User code meets these as the single-file harness (run as __main__) showed them: a traceback's last line
# reads "LLMQueryError: ...", naming no module of the harness.
CallbackError.__module__ = LLMQueryError.__module__ = "__main__"


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

    llm_query.__module__ = llm_query_batched.__module__ = "__main__"  # as user code always saw them
    return llm_query, llm_query_batched
