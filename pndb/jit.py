"""Kernels compiled on first use, so that a command that needs none never imports numba.

Importing numba and loading the first cached kernel take about half a second, longer than
`pndb show` needs in all. The kernels of pndb.games are declared with :func:`njit` below:
until numba is loaded each is a :class:`Kernel`; the first call of any kernel loads numba and
replaces every Kernel in every loaded module by its numba dispatcher (:func:`realise`), so
that compiled code only ever meets compiled code. Once numba is loaded, :func:`njit` is
numba's own. A process that evaluates only a handful of positions may call
:func:`interpret` first: its kernels then run as the plain Python they are written in (the
same code, so the same rules), and numba is never imported; a solve of a small game does so for
its first moment (pndb.search.QUICK_SECONDS) and calls ``interpret(False)`` when it needs its
inner solver.
"""

import functools
import sys

import numpy as np

_interpreted = False
_realised = False


class Kernel:
    """A kernel before numba is loaded: calling it runs it (as Python under :func:`interpret`,
    else compiled, after :func:`realise`)."""

    def __init__(self, py_func, options):
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.options = options
        self.dispatcher = None

    def __call__(self, *args):
        if _interpreted:
            with np.errstate(over="ignore"):  # uint64 arithmetic wraps, as compiled
                return self.py_func(*args)
        realise()
        return self.compiled()(*args)

    def compiled(self):
        """The numba dispatcher of this kernel."""
        if self.dispatcher is None:
            import numba

            self.dispatcher = numba.njit(**self.options)(self.py_func)
        return self.dispatcher


def njit(**options):
    """numba.njit(**options), deferred while numba is not loaded."""

    def declare(py_func):
        if "numba" in sys.modules:
            import numba

            return numba.njit(**options)(py_func)
        return Kernel(py_func, options)

    return declare


def realise():
    """Load numba and put every Kernel's dispatcher where the Kernel was (module globals)."""
    global _realised
    if _realised:
        return
    import numba  # noqa: F401  (from now on njit declares dispatchers at once)

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
    ``active`` false compiled again (numba loads at the next kernel call)."""
    global _interpreted
    _interpreted = active


def loaded():
    """Whether numba is loaded in this process already (interpreting the kernels gains nothing)."""
    return _realised or "numba" in sys.modules
