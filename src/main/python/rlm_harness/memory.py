"""The Kernel's memory bookkeeping: each variable's size and last use, and eviction past the limit."""
import gc
from operator import attrgetter

from .limits import rss_bytes
from .sizing import VarMeta, human
from .store import repl_defined

SIZE = attrgetter("size")


class Memory:
    """Kernel methods: sizes of the user's variables (meta), the total against the limit, and eviction of the
    least recently used ones (spilled to the snapshot when there is one, else dropped)."""

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
        return sum(map(SIZE, self.meta.values()))

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

    def op_memory(self, req, payload, output):
        return self.memory(with_rss=True)
