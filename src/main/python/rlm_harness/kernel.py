"""The Kernel: the user namespace and the requests (op_*) on it; memory and snapshots add theirs."""
import _ast as ast  # the C module: the ast package adds ~0.2 MiB to every kernel
import builtins
import gc
import os
import sys
import time
import types

from . import answers
from .callbacks import LLMQueryError, llm_functions
from .children import RLMQueryError, rlm_functions
from .guard import ImportGuard
from .loaders import check_name, load_file, loaded_size, parse_payload
from .mcp import McpBridge, McpProxy, run_coroutine
from .memory import Memory
from . import refusals
from .protocol import RESERVED, Fail
from .sizing import Sizer, describe_shape, echo, human, iso, preview
from .snapshots import Snapshots
from .sources import CellSources

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep  # frames in here are not the user's
ASYNCIO_DIR = os.path.join(os.path.dirname(os.__file__), "asyncio") + os.sep
CO_COROUTINE = 0x80  # inspect.CO_COROUTINE: code compiled with top-level await


class Kernel(Memory, Snapshots):
    """The user's namespace (__main__) and the requests on it: each op_<name>(req, payload, output) answers
    the request {"op": name} with a reply dict or raises Fail. Memory and Snapshots hold the rest."""

    def __init__(self, config, callbacks):
        self.callbacks = callbacks
        self.sources = CellSources()
        self.guard = ImportGuard(self.sources.share)
        user_builtins = dict(vars(builtins))
        user_builtins["__import__"] = self.guard
        user_builtins["LLMQueryError"] = LLMQueryError
        user_builtins["RLMQueryError"] = RLMQueryError
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = user_builtins
        sys.modules["__main__"] = main  # so pickle finds REPL classes and functions by reference
        self.ns = main.__dict__
        self.ns["llm_query"], self.ns["llm_query_batched"] = llm_functions(callbacks)
        self.ns["rlm_query"], self.ns["rlm_query_batched"] = rlm_functions(
            callbacks, lambda: self.store or self.handover)
        self.ns["FINAL"], self.ns["FINAL_VAR"], self.ns["SHOW_VARS"] = answers.answer_functions(self)
        self.store = None
        self.handover = None  # a kernel kept in memory only: where its contexts for children go
        self.spilled = set()
        self.dirty = set()
        self.pending = set()
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
        self.sync = bool(config.get("sync_snapshots", getattr(self, "sync", False)))
        self.guard.configure(config.get("allowed_imports", ()), config.get("blocked_imports", ()))

    # ----- namespace bookkeeping -------------------------------------------------------------

    def user_names(self):
        return [n for n, v in self.ns.items() if self.is_user_var(n, v)]

    @staticmethod
    def is_user_var(name, value):
        return not (name.startswith("__") or name in RESERVED or isinstance(value, (types.ModuleType, McpProxy)))

    def identities(self):
        # is_user_var, inlined: this runs twice per exec over the whole namespace
        skip = (types.ModuleType, McpProxy)
        return {n: id(v) for n, v in self.ns.items()
                if not (n.startswith("__") or n in RESERVED or isinstance(v, skip))}

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
            self.callbacks.begin(output.printed)
            try:
                error = self.run(program)
            finally:
                self.callbacks.end()
        duration = time.perf_counter() - started
        (out, out_dropped), (err, err_dropped) = output.take()
        now = time.time()
        after = self.identities()
        # a cell that binds no name (or rebinds one to the same object) leaves the two equal: no walk then
        changed = [] if after == before else [n for n, i in after.items() if before.get(n) != i]
        # the walks for deleted and forgotten names only when some name is gone (the <= tests allocate nothing)
        deleted = [] if before.keys() <= after.keys() else [n for n in before if n not in after]
        if not self.meta.keys() <= after.keys():
            self.forget([n for n in self.meta if n not in after])
        touched = set(changed)
        for code_object in program or ():
            if code_object is not None:
                touched.update(n for n in self.referenced_names(code_object) if n in after)
        self.track(touched, now)
        not_persisted = self.note_changes(code, changed, deleted, touched, after.keys())
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
        if req.get("answer"):
            answer = answers.reported(self.ns.get(answers.ANSWER))
            if answer is not None:
                reply["answer"] = answer
        return reply

    def compile_cell(self, code):
        cached = self.compiled.get(code)
        if cached is not None:
            return cached, None
        self.cell += 1
        filename = f"<cell {self.cell}>"
        self.sources.add(filename, code)
        try:
            tree = compile(code, filename, "exec", ast.PyCF_ONLY_AST)
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

    def describe_error(self, e):
        import traceback
        self.sources.share()
        frames = [] if isinstance(e, SyntaxError) else [
            f for f in traceback.extract_tb(e.__traceback__)
            if not f.filename.startswith((PACKAGE_DIR, ASYNCIO_DIR))]
        lines = ["Traceback (most recent call last):\n"] if frames else []
        lines += traceback.format_list(frames)
        lines += traceback.format_exception_only(type(e), e)
        error = {"type": type(e).__name__, "message": str(e), "traceback": "".join(lines)}
        refused = refusals.note(e)
        if refused:
            error["message"] += f" ({refused})"
            error["traceback"] += f"note: {refused}\n"

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
        import json  # here, not at the top: see jsonwire
        try:
            return json.dumps(value, ensure_ascii=False), "json", None
        except (TypeError, ValueError, RecursionError):
            return echo(value), "repr", None

    def op_rlm_begin(self, req, payload, output):
        """An RLM's loop starts on this kernel: `answer` is (re)set to an empty answer, unless the name holds
        something else, which the loop must not overwrite."""
        name = answers.ANSWER
        if name in self.spilled:
            self.unspill(name)
        if name in self.ns and not answers.is_answer(self.ns[name]):
            raise Fail("NAME_TAKEN", f"the variable {name!r} (a {type(self.ns[name]).__name__}) is where an RLM "
                       f"writes its answer; rename it (e.g. my_{name} = {name}; del {name}) and try again", name)
        self.ns[name] = answers.fresh()
        self.not_persisted.pop(name, None)
        self.lost.pop(name, None)
        self.dirty.add(name)
        self.track([name], time.time())
        return {}

    def op_detach(self, req, payload, output):
        """This kernel keeps its variables in memory only (a child RLM's): no snapshot is written, and
        the directory it may write (req["dir"]) only holds the contexts it hands to its own children."""
        from .store import Store
        self.store = None
        self.dirty.clear()
        self.pending.clear()
        self.handover = Store(req["dir"], self.disk_limit, False)
        return {}

    def op_configure(self, req, payload, output):
        self.configure(req)
        return {"memory": self.memory()}

    def op_ping(self, req, payload, output):
        return {"pid": os.getpid(), "python": sys.version.split()[0]}
