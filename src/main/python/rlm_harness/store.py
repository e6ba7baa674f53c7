"""A session's snapshot directory: one file per variable and a manifest, written crash-safely."""
import _ast as ast  # the C module: the ast package adds ~0.2 MiB to every kernel
import errno
import os
import sys
import time
import types

from .jsonwire import dumps, loads

RAW_THRESHOLD = 1 << 20
TRANSFER_DIR = ".transfer"  # contexts on their way to child RLMs (children); never a variable's file
WRITE_CHUNK = 64 << 20
RENAME_EXCHANGE = 2  # renameat2(2)
_renameat2 = None  # looked up on first use; False where the system has none


class NotPersisted(Exception):
    """A value the snapshot cannot hold; the message says why."""


def repl_defined(value):
    """A function or class made by code typed into the REPL: pickle cannot find it by reference later."""
    return isinstance(value, (types.FunctionType, type)) and getattr(value, "__module__", None) == "__main__"


def definitions(code):
    """{name: source} of a cell's top-level def, class and `name = lambda` statements."""
    try:
        tree = compile(code, "<cell>", "exec", ast.PyCF_ONLY_AST)
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
    file of each. A variable's file has a name no manifest uses yet; the manifest is written under a
    temporary name and renamed over the old one, last, so a kill at any moment leaves the old snapshot
    or the new one. A process that dies
    loses nothing it had written (the page cache survives it), so files are fsynced only with sync,
    which guards against a machine's crash or power loss as well (--durable-replies)."""

    MANIFEST = "manifest.json"
    BLOCK = 4096

    def __init__(self, directory, limit=0, sync=False):
        self.dir = directory
        self.limit = limit  # bytes the directory may hold (0: no limit); the host kills a kernel past it
        self.sync = sync
        self.entries, self.modules, self.lost, self.generation, self.saved_at = {}, {}, {}, 0, None
        self.pending = []  # names a reply reported whose new value was still being written
        self.unreadable = None  # why the manifest could not be read, if it could not
        try:
            with open(os.path.join(directory, self.MANIFEST), "rb") as f:
                manifest = loads(f.read().decode("utf-8"))
            self.entries = manifest.get("variables", {})
            self.modules = manifest.get("modules", {})
            self.lost = manifest.get("not_persisted", {})
            self.generation = int(manifest.get("generation", 0))
            self.saved_at = manifest.get("saved_at")
            self.pending = manifest.get("pending", [])
        except FileNotFoundError:
            pass
        except ValueError as e:  # cut short by a machine crash, with no fsync: the files stay for a person to look at
            self.unreadable = f"the snapshot's manifest is unreadable ({e}); it holds no variable"
            return
        self.sweep()

    def sweep(self):
        """Removes files no manifest names: left by a write that a kill cut short. The transfer directory
        stays (this kernel has no transfer under way yet); the files a dead kernel left in it go."""
        keep = {e["file"] for e in self.entries.values() if "file" in e} | {self.MANIFEST}
        for name in os.listdir(self.dir):
            if name == TRANSFER_DIR:
                self._sweep_transfers()
            elif name not in keep:
                try:
                    os.unlink(os.path.join(self.dir, name))
                except OSError:
                    pass

    def _sweep_transfers(self):
        directory = os.path.join(self.dir, TRANSFER_DIR)
        try:
            names = os.listdir(directory)
        except OSError:  # not a directory the harness made
            return
        for name in names:
            try:
                os.unlink(os.path.join(directory, name))
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
            import _pickle as pickle  # the C module: pickle.py adds re and enum (~0.6 MiB)
            blake2b = _blake2b()
            buffers = []
            try:
                head = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
            except Exception as e:  # any __reduce__ may raise anything
                raise NotPersisted(f"cannot be pickled: {type(e).__name__}: {e}") from None
            kind, parts = "pickle", [head] + [raw_buffer(b) for b in buffers]
            digest = blake2b(digest_size=16)
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
        """Writes the file under its final name: no manifest names it until commit, and a file a kill
        cut short is named by none (sweep removes it), so it needs no temporary name and no rename."""
        self.check_room(sum(memoryview(p).nbytes for p in parts))
        path = os.path.join(self.dir, file)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            for part in parts:
                view = memoryview(part).cast("B")
                for off in range(0, len(view), WRITE_CHUNK):
                    chunk = view[off:off + WRITE_CHUNK]
                    while chunk:
                        chunk = chunk[os.write(fd, chunk):]
            if self.sync:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            fd = None
            try:
                os.unlink(path)
            except OSError:
                pass
            raise
        finally:
            if fd is not None:
                os.close(fd)

    def check_room(self, nbytes):
        """OSError ENOSPC if a file of nbytes would take the directory past its limit, measured as the
        host measures it: every entry's size rounded up to 4 KiB, a hard-linked inode once, and the
        files of the transfer directory (contexts on their way to child RLMs) too."""
        if self.limit <= 0:
            return
        used, seen = 0, set()
        directories = [self.dir]
        while directories:
            with os.scandir(directories.pop()) as entries:
                for entry in entries:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if (st.st_dev, st.st_ino) in seen:
                        continue
                    seen.add((st.st_dev, st.st_ino))
                    used += max(self.BLOCK, -(-st.st_size // self.BLOCK) * self.BLOCK)
                    if entry.name == TRANSFER_DIR and entry.is_dir(follow_symlinks=False):
                        directories.append(entry.path)
        need = max(self.BLOCK, -(-nbytes // self.BLOCK) * self.BLOCK) + 2 * self.BLOCK  # the file, the manifest
        if used + need > self.limit:
            raise OSError(errno.ENOSPC, f"No space left on device: the snapshot directory may hold "
                          f"{self.limit >> 20} MiB (--max-disk-mb), {used >> 20} MiB are used and this needs "
                          f"{nbytes >> 20} MiB more")

    def unchanged(self, entries, modules, lost, pending):
        """Whether committing these would write the manifest it already has."""
        return (entries == self.entries and modules == self.modules and lost == self.lost
                and pending == self.pending)

    def commit(self, entries, modules, lost, pending=()):
        """Makes entries the snapshot: the manifest is replaced atomically; files it no longer names go.
        lost names the variables the snapshot could not hold, with the reason; pending those a reply
        reported whose new value is still being written (an earlier one, or none, is in entries)."""
        pending = sorted(pending)
        manifest = {"version": 1, "generation": self.generation + 1, "saved_at": time.time(),
                    "variables": entries, "modules": modules, "not_persisted": lost, "pending": pending}
        if self.sync:
            self._sync_dir()
        tmp = os.path.join(self.dir, ".manifest.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            data = dumps(manifest).encode("utf-8")
            while data:
                data = data[os.write(fd, data):]
            if self.sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        path = os.path.join(self.dir, self.MANIFEST)
        if self.sync or not self.generation or not exchange(tmp, path):
            os.replace(tmp, path)
        else:
            os.unlink(tmp)  # the manifest it replaced
        if self.sync:
            self._sync_dir()
        old = {e.get("file") for e in self.entries.values()} - {e.get("file") for e in entries.values()}
        self.entries, self.modules, self.lost, self.pending = entries, modules, lost, pending
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
            import mmap
            with open(os.path.join(self.dir, entry["file"]), "rb") as f:
                with mmap.mmap(f.fileno(), entry["lengths"][0], access=mmap.ACCESS_READ) as mapped:
                    return str(mapped, "utf-8", "surrogatepass")
        with open(os.path.join(self.dir, entry["file"]), "rb", buffering=0) as f:
            parts = [read_exact(f, n) for n in entry["lengths"]]
        if kind == "str":
            return str(parts[0], "utf-8", "surrogatepass")
        if kind == "bytes":
            return parts[0]
        import _pickle as pickle
        return pickle.loads(parts[0], buffers=parts[1:])


def prepare():
    """Loads what writing snapshots uses (the pickler, the digest, renameat2): some 3 ms of imports, which
    a kernel given a snapshot directory pays right after answering for it rather than in its first steps.
    A kernel without one never loads them."""
    import _pickle  # noqa: F401 (the C module, as Store.write imports it)
    _blake2b()
    _lookup_renameat2()


def _blake2b():
    try:
        from _blake2 import blake2b  # hashlib.blake2b itself: hashlib would map OpenSSL's libcrypto too
    except ImportError:
        from hashlib import blake2b
    return blake2b


def _lookup_renameat2():
    """libc's renameat2, or False. Built on _ctypes itself: the ctypes package costs three times as long
    to import (about 3 ms) and half as much memory again, for the one function used here."""
    global _renameat2
    if _renameat2 is None:
        try:
            import _ctypes

            class Int(_ctypes._SimpleCData):
                _type_ = "i"

            class Function(_ctypes.CFuncPtr):
                _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
                _restype_ = Int

            class Libc:
                _handle = _ctypes.dlopen(None)

            _renameat2 = Function(("renameat2", Libc))
        except (ImportError, OSError, AttributeError):
            _renameat2 = False
    return _renameat2


def exchange(a, b):
    """Swaps two paths atomically (renameat2 RENAME_EXCHANGE); False where the system cannot. Renaming
    a freshly written file over another makes ext4 (auto_da_alloc) start writing its data out at once,
    which costs about a millisecond per snapshot on a busy disk; an exchange does not."""
    renameat2 = _lookup_renameat2()
    if not renameat2:
        return False
    return renameat2(-100, os.fsencode(a), -100, os.fsencode(b), RENAME_EXCHANGE) == 0  # AT_FDCWD


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
