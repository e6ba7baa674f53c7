"""The import policy user code meets."""
import builtins


class ImportGuard:
    """__import__ for user code: refuses modules the server's import policy names. A guard rail
    against honest mistakes only: print.__self__.__import__('os') walks past it; the sandbox is the
    boundary. Imports made inside library modules are not affected. after_import runs after each import."""

    def __init__(self, after_import=None):
        self.allowed, self.blocked = frozenset(), frozenset()
        self.after_import = after_import

    def configure(self, allowed, blocked):
        self.allowed, self.blocked = frozenset(allowed), frozenset(blocked)

    def __call__(self, name, globals=None, locals=None, fromlist=(), level=0):
        top = name.partition(".")[0]
        if level == 0 and (top in self.blocked or (self.allowed and top not in self.allowed)):
            raise ImportError(
                f"import of {top!r} is refused by rlm-mcp's import policy, a guard rail against mistakes "
                f"(not a security boundary); the server's --blocked-imports / --allowed-imports set it",
                name=top)
        module = builtins.__import__(name, globals, locals, fromlist, level)
        if self.after_import is not None:
            self.after_import()
        return module
