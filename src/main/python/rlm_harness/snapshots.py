"""The Kernel's snapshots: what changed since the last one, spilling and loading variables, snapshot and restore."""
import time
import types

from .protocol import Fail
from .sizing import iso
from .store import NotPersisted, Store, definitions, repl_defined

PROBE_LIMIT = 8 << 20
# Before a reply, a call's changes are written up to this much (in-memory size, smallest values first)
# and for at most this long; what is left is written right after the reply, and the reply names it.
# Pickling runs at 60-400 MiB/s of in-memory size (lists of str slowest), so the write adds at most
# tens of milliseconds to a reply, where an agent's turn takes seconds.
STEP_BYTES = 8 << 20
STEP_SECONDS = 0.05
IMMUTABLE = (str, bytes, int, float, complex, bool, type(None), range)
DYNAMIC_LOOKUP = frozenset({"globals", "vars", "locals", "dir", "eval", "exec"})


class Snapshots:
    """Kernel methods for the session's snapshot directory (self.store, None without one): the names a
    snapshot must write (dirty), the variables moved out to it (spilled) and those it could not hold."""

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

    def modules(self, among=None):
        """{alias: module name} of the modules the namespace binds; among: the names to look at, when the
        others are known not to be modules (in an order of its own)."""
        ns = self.ns
        return {n: ns[n].__name__ for n in (ns if among is None else among)
                if isinstance(ns[n], types.ModuleType) and not n.startswith("__")}

    def persist(self, names, deadline=None, reported=()):
        """Writes the named live variables and commits a snapshot: ([written], {name: reason}, bytes).
        Past deadline (a perf_counter time) the names not yet written are left for a later snapshot;
        reported: names the reply being made reports, pending in the manifest while not written."""
        written, failed, total = [], {}, 0
        updated = {}
        done = names
        for i, name in enumerate(names):
            if deadline is not None and i and time.perf_counter() > deadline:
                done = names[:i]
                break
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
        finished = set(done)
        self.pending = {n for n in self.pending.union(reported)
                        if n in self.ns and n not in finished and n in self.dirty}
        modules = self.modules()
        pending = sorted(self.pending)
        if not self.store.unchanged(entries, modules, lost, pending):
            self.store.commit(entries, modules, lost, pending)
        self.dirty -= finished
        self.dirty -= {n for n in self.dirty if not self.exists(n)}
        for name in updated:
            self.not_persisted.pop(name, None)
        return written, failed, total

    def write_step(self, reported):
        """Writes what a call changed before its reply, smallest values first, within STEP_BYTES and
        STEP_SECONDS; the rest stays dirty for the snapshot the host asks for right after the reply.
        Returns the names among reported whose new value is still being written."""
        if self.store is None or not self.dirty:
            return []
        started = time.perf_counter()
        meta = self.meta
        sized = sorted((meta[n].size if n in meta else 0, n) for n in self.dirty
                       if n in self.ns and self.is_user_var(n, self.ns[n]))
        chosen, room = [], STEP_BYTES
        for size, name in sized:
            if size > room:
                break
            chosen.append(name)
            room -= size
        try:
            self.persist(chosen, started + STEP_SECONDS, reported)
        except OSError as e:  # the manifest could not be replaced: the host's snapshot tries again
            for name in reported:
                self.not_persisted.setdefault(name, f"the snapshot could not be written: {e}")
            return []
        return sorted(self.pending.intersection(reported))

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
        import _pickle as pickle  # as in store
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
                "generation": self.store.generation,
                "saved_at": iso(self.store.saved_at) if self.store.saved_at else None}

    def op_restore(self, req, payload, output):
        """Attaches the session's snapshot directory; functions, classes and imports come back now,
        other variables when code first uses them (or all now, with eager)."""
        started = time.perf_counter()
        self.store = Store(req["dir"], self.disk_limit, self.sync)
        failed = {"manifest.json": self.store.unreadable} if self.store.unreadable else {}
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
        # a stop cut these writes short: the value a reply reported is gone (an earlier one may be back)
        unwritten = list(self.store.pending)
        for name in unwritten:
            if name not in self.store.entries:
                self.lost[name] = "its value was still being written when the server stopped; make it again"
        self.track(restored, time.time())
        if req.get("eager"):
            for name in sorted(self.spilled):
                self.unspill(name)
        self.not_persisted.update(failed)
        return {"generation": self.store.generation,
                "saved_at": iso(self.store.saved_at) if self.store.saved_at else None,
                "restored": restored, "spilled": sorted(self.spilled), "failed": failed, "unwritten": unwritten,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3), "memory": self.memory()}

    def note_changes(self, code, changed, deleted, touched, user_vars):
        """Marks what the next snapshot must write; returns {name: reason} for new values it cannot hold.
        user_vars: the names of the user's variables now (identities())."""
        if changed and any(repl_defined(self.ns[n]) for n in changed):
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
            # a module is never a user variable: only the few other names can be modules
            modules = self.modules(self.ns.keys() - user_vars)
            if modules != self.store.modules:
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
