"""Kernels compiled on first use, so that a command that needs none never imports numba.

Importing numba and loading the first cached kernel take about half a second, longer than
`pndb show` needs in all. The kernels of pndb.games are declared with :func:`njit` below:
until numba is loaded each is a :class:`Kernel`; the first call of any kernel loads numba and
replaces every Kernel in every loaded module by its numba dispatcher (:func:`realise`), so
that compiled code only ever meets compiled code. Once numba is loaded, :func:`njit` is
numba's own. A process that evaluates only a handful of positions may call
:func:`interpret` first: its kernels then run as the plain Python they are written in (the
same code, so the same rules; a primitive such as a bit count may name a plain-Python stand-in,
njit's ``python``, tested to agree with it), and numba is never imported; a solve of a small
game does so for its first moment (pndb.monitor.QUICK_SECONDS) and calls ``interpret(False)``
when it needs its inner solver.

numba's on-disk cache checks only the source file of the function it caches, but a cached
kernel holds the machine code of every kernel it calls, from other files too: after a change
to pndb/games/placement/patterns.py, a cached pndb.inner.solver.run_job would go on running
the old patterns. So the cache lives in a directory named by a digest of the sources kernels
can depend on (:func:`cache_dir`, :func:`kernel_sources`: the modules that compile and every
pndb module they import): code compiled from other sources is never loaded, and a change to
the search, the store or the CLI compiles nothing again.

What a cold cache costs (bench/cold_start.py): numba compiles a kernel once per tuple of
argument types, and a literal constant argument (``0``) is a type of its own, so a kernel that
one call site passes a constant and another a variable is compiled twice (pass
``np.int64(0)``, or a numpy constant such as kernels.IDENTITY); a variable set to a constant
before a loop that reassigns it types the call in the loop both ways. And a kernel called from
another is a library of its own, whose machine code every caller's library links in,
optimizes and compiles again, and so on up: an inlined kernel (``inline="always"``) adds no
level, but is typed and lowered again at every call site (the small helpers of Allis' rules,
called at up to 67 sites, are plain kernels that LLVM inlines; those that take arrays stay
inlined, a call would pay their reference counts). numba drops a branch on ``x is not None``
before it compiles the branch's calls only where the argument x is None: an array argument
rules out nothing (pndb.inner.frames.search_frames). A slice assignment between arrays
(``a[:n] = b``) compiles numba's shape-error message, about 5 CPU s: a loop does not.
"""

import ast
import atexit
import functools
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np


def disabled():
    """Whether NUMBA_DISABLE_JIT (an integer, as numba reads it) asks that nothing be compiled:
    the kernels then always run as their plain Python, whose uint64 arithmetic wraps as
    compiled code's does (numba's own uncompiled mode warns of every overflow). The inner
    solver, numba's alone, is refused (pndb.api.checked_game)."""
    try:
        return int(os.environ.get("NUMBA_DISABLE_JIT", "0") or "0") != 0
    except ValueError:
        return False


_interpreted = disabled()  # kernels run as Python (interpret)
_interpreting = False  # a kernel runs as Python (errstate set once, by the outermost)
_realised = False
_cache_set = False
_compile_timer = None  # numba's timer of its compiles in this process, once numba is loaded
numba_cache_dir = None  # cache_dir() as numba was given it (the sources may change while a process runs)

# Seconds a cold cache takes to compile what a solve of a family needs (the outer kernels and
# the inner search), where this machine has not compiled them before (first_compile): about the
# CPU seconds of `NUMBA_CACHE_DIR=$(mktemp -d) pndb solve qango6` (connect4:6x4) on a 2-core
# machine, see bench/cold_start.py (qango6: 102 CPU s on a heavily loaded machine, where the
# kernels of 3854f15 took 252 and 173 on a quieter one; connect4: 207 CPU s cold against 78.5
# warm, 369 and 77.5 for 3854f15 under a heavier load).
COMPILE_SECONDS = {"placement": 70, "gravity": 130}


def cache_dir():
    """Where numba caches pndb's kernels: $NUMBA_CACHE_DIR (else the user's cache directory,
    $XDG_CACHE_HOME or ~/.cache, under pndb/numba), in a subdirectory named by a digest of the
    contents of the source files kernels can depend on (kernel_sources): a change elsewhere (the
    search, the CLI, the store) compiles nothing again."""
    return str(Path(cache_base()) / sources_digest())


def cache_base():
    """The directory under which cache_dir() names its subdirectories."""
    return os.environ.get("NUMBA_CACHE_DIR") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pndb" / "numba"
    )


@functools.cache
def sources_digest():
    """The digest of the kernel sources (:func:`kernel_sources`) that names the cache directory,
    computed once per process, and kept beside the cache under a stamp of every source file's
    name, size and modification time: finding the kernel sources parses pndb's modules, about
    a CPU second that every solve, show or export process paid at its start."""
    package = Path(__file__).resolve().parent
    stamp = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        st = path.stat()
        stamp.update(f"{path.relative_to(package)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    memo = Path(cache_base()) / "digests" / stamp.hexdigest()[:32]
    try:
        known = memo.read_text()
        if len(known) == 16:
            return known
    except OSError:
        pass
    digest = hashlib.sha256()
    for path in kernel_sources(package):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    known = digest.hexdigest()[:16]
    try:  # a cache that cannot be written computes it again next time
        memo.parent.mkdir(parents=True, exist_ok=True)
        fresh = memo.with_name(f"{memo.name}.{os.getpid()}")
        fresh.write_text(known)
        os.replace(fresh, memo)
    except OSError:
        pass
    return known


def kernel_sources(package):
    """The files of the package whose contents a compiled kernel can depend on, sorted: every
    module that uses numba and every pndb module they import, transitively (a kernel freezes
    the globals it reads, and those come from its module's imports)."""
    sources = {p for p in package.rglob("*.py") if compiles(p)}
    todo = list(sources)
    while todo:
        for imported in imported_modules(todo.pop(), package):
            if imported not in sources:
                sources.add(imported)
                todo.append(imported)
    return sorted(sources)


def compiles(path):
    """Whether the module at ``path`` declares kernels: it imports numba, or uses njit (a file
    that names neither is not parsed)."""
    text = path.read_text()
    if "numba" not in text and "njit" not in text:
        return False
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "numba" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "numba":
            return True
        if isinstance(node, (ast.Name, ast.Attribute)) and getattr(node, "id", getattr(node, "attr", "")) == "njit":
            return True
    return False


def imported_modules(path, package):
    """The files of ``package`` (the pndb package) that the module at ``path`` imports,
    anywhere in it (a function's own imports too)."""
    found = set()

    def module_file(name):
        parts = name.split(".")
        if parts[0] != package.name:
            return None
        base = package.joinpath(*parts[1:])
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # from a.b import c: the module a.b, and a.b.c where c is a module of its own
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            for i in range(1, name.count(".") + 2):  # the packages on the way are run too
                file = module_file(".".join(name.split(".")[:i]))
                if file is not None:
                    found.add(file)
    return found


def writable_cache_dir():
    """:func:`cache_dir`, made; where it cannot be written, a temporary directory removed at exit,
    with one warning on stderr (numba, refused its cache directory, would write its cache files
    beside pndb's sources)."""
    path = cache_dir()
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return path
    except OSError as e:
        print(
            f"warning: cannot write pndb's kernel cache {path} ({e.strerror or e}); the kernels are "
            "compiled again in every run (set NUMBA_CACHE_DIR to a writable directory)",
            file=sys.stderr,
        )
    fallback = tempfile.mkdtemp(prefix="pndb-numba-")
    atexit.register(shutil.rmtree, fallback, ignore_errors=True)
    return fallback


def load_numba():
    """numba, with its cache directory set to :func:`writable_cache_dir` before any kernel of pndb
    is declared to it (numba reads the setting when a dispatcher is made), and a timer of its
    compiles (:func:`compile_seconds`)."""
    global _cache_set, _compile_timer, numba_cache_dir
    import numba
    from numba.core import event

    if not _cache_set:
        numba.config.CACHE_DIR = numba_cache_dir = writable_cache_dir()
        _compile_timer = event.TimingListener()
        event.register("numba:compile", _compile_timer)
        _cache_set = True
    return numba


def compile_seconds():
    """Seconds this process has spent compiling kernels (not loading them from the cache): a
    solve's clock leaves them out."""
    return _compile_timer.duration if _compile_timer is not None and _compile_timer.done else 0.0


def family(game):
    """The name of the kernels a solve of ``game`` compiles: the inner search is compiled per
    family (pndb.inner.frames.search_frames), with gravity or without."""
    return "gravity" if game.gravity else "placement"


def compiled_mark(name):
    """The file that says the cache of the current sources holds the kernels of family ``name``
    (written once a solve has compiled them: numba's own files say nothing about a family; a
    new numba compiles them again). Found without importing numba, which a quick start avoids."""
    from importlib.metadata import version

    return Path(numba_cache_dir or cache_dir()) / f"compiled-{name}-numba-{version('numba')}"


def first_compile(game):
    """About the seconds a solve of ``game`` will spend compiling kernels, or None when the
    cache holds them already: what the last compile of its family took on this machine (the
    mark of an earlier version of the sources says), else COMPILE_SECONDS."""
    mark = compiled_mark(family(game))
    if mark.exists():
        return None
    for earlier in sorted(mark.parent.parent.glob(f"*/{mark.name}"), key=lambda m: m.stat().st_mtime)[::-1]:
        try:
            return float(earlier.read_text())
        except (OSError, ValueError):
            continue
    return COMPILE_SECONDS[family(game)]


def mark_compiled(name):
    """Record that family ``name``'s kernels are in the cache (see :func:`compiled_mark`), with
    the seconds this process spent compiling (the estimate for the next version's first solve)."""
    mark = compiled_mark(name)
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        seconds = compile_seconds()  # (under a second: it found them compiled, say nothing)
        mark.write_text(f"{seconds:.0f}\n" if seconds >= 1 else "")
    except OSError:  # an unwritable cache: numba says so itself
        pass


class Kernel:
    """A kernel before numba is loaded: calling it runs it (as Python under :func:`interpret`,
    else compiled, after :func:`realise`)."""

    def __init__(self, py_func, options, python=None):
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.python = python or py_func  # what runs when interpreted
        self.options = options
        self.dispatcher = None

    def __call__(self, *args):
        global _interpreting
        if _interpreted:
            if _interpreting:  # called by a kernel: the outermost call has set the error state
                return self.python(*args)
            _interpreting = True
            try:
                with np.errstate(over="ignore"):  # uint64 arithmetic wraps, as compiled
                    return self.python(*args)
            finally:
                _interpreting = False
        realise()
        return self.compiled()(*args)

    def compiled(self):
        """The numba dispatcher of this kernel."""
        if self.dispatcher is None:
            self.dispatcher = load_numba().njit(**self.options)(self.py_func)
        return self.dispatcher


def njit(python=None, **options):
    """numba.njit(**options), deferred while numba is not loaded. ``python``: a function that
    gives the same answers in plain Python faster than the kernel's own code run as Python (a
    few primitives whose numpy-scalar arithmetic Python runs slowly), used when interpreted."""

    def declare(py_func):
        if "numba" in sys.modules:
            return load_numba().njit(**options)(py_func)
        return Kernel(py_func, options, python)

    return declare


def realise():
    """Load numba and put every Kernel's dispatcher where the Kernel was (module globals)."""
    global _realised
    if _realised:
        return
    load_numba()  # from now on njit declares dispatchers at once

    _realised = True
    for module in list(sys.modules.values()):
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict):
            continue
        for name, value in list(names.items()):
            if isinstance(value, Kernel):
                names[name] = value.compiled()


def interpret(active=True):
    """Run kernels as plain Python from now on in this process (for a few positions), or with
    ``active`` false compiled again (numba loads at the next kernel call) unless :func:`disabled`."""
    global _interpreted
    _interpreted = active or disabled()


def loaded():
    """Whether numba is loaded in this process already (interpreting the kernels gains nothing)."""
    return _realised or "numba" in sys.modules
