"""rlm_query and rlm_query_batched: child RLMs, each run by the host with a kernel and a loop of its own.

A child's context goes to the host as a pickle (protocol 5). Where the kernel has a writable snapshot
directory, the pickle is a file in its .transfer directory, named in the request relative to that
directory: the host hands the file to the child's kernel without holding a copy. Without one the pickle
goes inline, base64 in the request, up to INLINE_LIMIT. The files go when the request is answered.

At the depth limit the host answers {"depth_limit": true}: the call is then an llm_query ("llm" request) of
the prompt with the context's value as text, under the same checks and counts as llm_query."""
import errno
import os

from .callbacks import CallbackError, _optional
from .sizing import echo, human
from .store import TRANSFER_DIR
INLINE_LIMIT = 64 << 20
PREVIEW_CHARS = 300
NO_ROOM = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


class RLMQueryError(CallbackError):
    """rlm_query failed. code: a stable upper-case word, e.g. NOT_CONFIGURED, LIMIT_EXCEEDED, BUDGET_EXCEEDED,
    CONTEXT_NOT_PICKLABLE, CONTEXT_TOO_LARGE, CHILD_FAILED, TIMEOUT or BACKEND_ERROR."""

    def __init__(self, code, message):
        super().__init__(code, message, "rlm")


RLMQueryError.__module__ = "__main__"  # as LLMQueryError: a traceback's last line names no harness module


def describe(value):
    """What the child's prompt says of its context: type, length (or None) and a preview."""
    try:
        length = len(value)
    except Exception:  # no len(), or a __len__ that raises
        length = None
    if not isinstance(length, int):
        length = None
    if isinstance(value, str):
        shown = value[:PREVIEW_CHARS]
    else:
        shown = echo(value)[:PREVIEW_CHARS]
    return {"type": type(value).__name__, "length": length, "preview": shown}


def pickled(value):
    """value as a protocol 5 pickle; RLMQueryError CONTEXT_NOT_PICKLABLE naming its type and the fix."""
    import _pickle as pickle  # the C module, as in store
    try:
        return pickle.dumps(value, protocol=5)
    except MemoryError:
        raise
    except Exception as e:  # any __reduce__ may raise anything
        kind = type(value).__name__
        raise RLMQueryError("CONTEXT_NOT_PICKLABLE",
                            f"the context (a {kind}) cannot be pickled to go to the child: {type(e).__name__}: {e}. "
                            "Pass plain data (str, bytes, numbers, lists, dicts, tuples of them), or convert it "
                            "first, e.g. str(context) or a list of its items") from None


class Transfer:
    """The contexts of one request, packed; close() removes the files it wrote, whatever happened."""

    def __init__(self, store):
        self.store = store  # the kernel's snapshot Store, or None
        self.files = []
        self.inline = 0

    def pack(self, value):
        if value is None:
            return None
        data = pickled(value)
        entry = {"bytes": len(data)}
        if self.store is not None:
            entry["file"] = self.write(data)
        else:
            self.inline += len(data)
            if self.inline > INLINE_LIMIT:
                raise RLMQueryError("CONTEXT_TOO_LARGE",
                                    f"the contexts come to {human(self.inline)} pickled; without a snapshot "
                                    f"directory they go inline, at most {human(INLINE_LIMIT)} per call. Pass a "
                                    "smaller context (a slice, or only the part the child needs), or run the "
                                    "server with a state directory, where contexts of any size move as files")
            import binascii  # the C module: base64 adds re and struct
            entry["inline"] = binascii.b2a_base64(data, newline=False).decode("ascii")
        del data
        entry.update(describe(value))
        return entry

    def write(self, data):
        directory = os.path.join(self.store.dir, TRANSFER_DIR)
        name = os.urandom(16).hex() + ".pkl"
        path = os.path.join(directory, name)
        try:
            os.makedirs(directory, 0o700, exist_ok=True)
            self.store.check_room(len(data))
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            self.files.append(path)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view[:64 << 20]):]
            finally:
                os.close(fd)
        except OSError as e:
            if e.errno in NO_ROOM:
                raise RLMQueryError("CONTEXT_TOO_LARGE",
                                    f"the context ({human(len(data))} pickled) does not fit in the session's "
                                    f"snapshot directory: {e.strerror or e}. Pass a smaller context (a slice, or "
                                    "only the part the child needs), delete large variables, or raise "
                                    "--max-disk-mb") from None
            raise RLMQueryError("TRANSFER_FAILED", f"the context could not be written for the child: {e}") from None
        return TRANSFER_DIR + "/" + name

    def close(self):
        files, self.files = self.files, []
        for path in files:
            try:
                os.unlink(path)
            except OSError:
                pass


def failure(code, message):
    """A failed child's place in a batch's answers."""
    return f"[rlm_query failed: {code}: {message}]"


def as_text(value):
    """A context's value as a prompt holds it: a str as itself, bytes decoded (UTF-8), JSON where it
    serialises, else its repr."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    import json  # here, not at the top: see jsonwire
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def at_depth_limit(callbacks, prompts, contexts, request):
    """rlm_query where the host said the depth limit is reached: an llm_query of each prompt with its
    context's value as text, under llm_query's checks and counts (a refusal of the whole request raises
    CallbackError as the "rlm" request's would)."""
    texts = [p if c is None else f"{p}\n\nThe context:\n{as_text(c)}" for p, c in zip(prompts, contexts)]
    return callbacks.call("llm", {"prompts": texts, "system": None, "max_tokens": None, "model": request["model"],
                                  "concurrency": request["concurrency"], "batched": request["batched"]})["answers"]


def rlm_functions(callbacks, store):
    """rlm_query and rlm_query_batched for user code; store() is the kernel's snapshot Store or None."""

    def ask(prompts, contexts, model, max_iterations, concurrency, batched):
        request = {"prompts": prompts, "contexts": None, "model": _optional("model", model, str),
                   "max_iterations": _optional("max_iterations", max_iterations, int, True),
                   "concurrency": _optional("concurrency", concurrency, int, True), "batched": batched}
        transfer = Transfer(store())
        try:
            request["contexts"] = [transfer.pack(c) for c in contexts]
            reply = callbacks.call("rlm", request)
        finally:
            transfer.close()
        if reply.get("depth_limit"):
            return at_depth_limit(callbacks, prompts, contexts, request)
        return reply["answers"]

    def rlm_query(prompt, context=None, *, model=None, max_iterations=None):
        """Ask a child RLM: a kernel of its own with `context` (any picklable value) as its variable
        `context`, and a loop of its own that may call llm_query and rlm_query in turn (at the depth limit:
        an llm_query of the prompt with the context's value as text). Returns its answer as a str; raises
        RLMQueryError (.code) on failure."""
        if not isinstance(prompt, str):
            raise TypeError(f"prompt must be a str, not {type(prompt).__name__}")
        try:
            answer = ask([prompt], [context], model, max_iterations, None, False)[0]
        except RLMQueryError:
            raise
        except CallbackError as e:
            raise RLMQueryError(e.code, str(e)) from None
        if "error" in answer:
            error = answer["error"]
            raise RLMQueryError(error.get("code", "ERROR"), error.get("message", "the child RLM failed"))
        return answer["text"]

    def rlm_query_batched(prompts, contexts=None, *, model=None, max_iterations=None, concurrency=None):
        """Ask many child RLMs, run in parallel on the host (at most concurrency at once); contexts: None,
        or a list as long as prompts (items may be None). Returns the answers in the prompts' order; a
        failed child gives "[rlm_query failed: CODE: message]" in its place."""
        if isinstance(prompts, str):
            raise TypeError("prompts must be a list of str, not a str: use rlm_query for one prompt")
        prompts = list(prompts)
        for i, prompt in enumerate(prompts):
            if not isinstance(prompt, str):
                raise TypeError(f"prompts[{i}] must be a str, not {type(prompt).__name__}")
        if contexts is None:
            contexts = [None] * len(prompts)
        elif not isinstance(contexts, (list, tuple)):
            raise TypeError(f"contexts must be a list as long as prompts (items may be None) or None, "
                            f"not {type(contexts).__name__}")
        elif len(contexts) != len(prompts):
            raise ValueError(f"contexts has {len(contexts)} items and prompts {len(prompts)}: give one context "
                             "per prompt (None where a child needs none), or contexts=None")
        if not prompts:
            return []
        try:
            answers = ask(prompts, list(contexts), model, max_iterations, concurrency, True)
        except RLMQueryError:
            raise  # a context that cannot go: nothing was sent
        except CallbackError as e:  # the host refused the whole request: every child failed alike
            return [failure(e.code, str(e))] * len(prompts)
        return [a["text"] if "text" in a else failure(a["error"].get("code", "ERROR"), a["error"].get("message", ""))
                for a in answers]

    rlm_query.__module__ = rlm_query_batched.__module__ = "__main__"  # as user code sees llm_query
    return rlm_query, rlm_query_batched
