"""The source lines of the cells, for linecache, where tracebacks, warnings and inspect look for them."""
import sys


class CellSources:
    """linecache imports tokenize and with it re and enum (~1 MiB in every kernel), so the harness does not
    import it: a cell's lines wait here until something has (a traceback, user code), then move there."""

    def __init__(self):
        self.waiting = {}

    def add(self, filename, code):
        self.waiting[filename] = (len(code), None, code.splitlines(True), filename)
        self.share()

    def share(self):
        if self.waiting:
            cache = getattr(sys.modules.get("linecache"), "cache", None)
            if cache is not None:
                cache.update(self.waiting)
                self.waiting.clear()
