"""Compile-time flags for every numba kernel in ``ranking``, set in one place.

Kernels are private (``_name``) and wrapped by a documented public function that checks
shapes and dtypes. ``cache=True`` keeps compiled code across starts (under ``__pycache__``).

:func:`batch_kernel` gives a ``prange`` kernel two compilations, serial and parallel, and
runs the parallel one only on batches big enough to gain from it: a ``parallel=True``
compilation costs about 3 s on a fresh install, the serial one a few tenths, and on the
small batches of a page the second core saves milliseconds (issue 11, item 11).
"""

from __future__ import annotations

import functools
import types

import numba

#: ``_nrt=True`` is explicit because numba lets a callee inherit an unset ``_nrt`` from the
#: caller being compiled: a helper that allocates, first compiled from one of the budget
#: loop's ``_nrt=False`` kernels, would otherwise fail to type ``np.empty`` (on a fresh
#: install only; a warm disk cache hides it).
FLAGS = dict(cache=True, nogil=True, fastmath=False, _nrt=True)
#: A :class:`BatchKernel` runs its parallel compilation from this estimated serial work on,
#: in nanoseconds of one core: about 20 ms, where a second core starts to save more than
#: the thread pool costs and the parallel compilation has been paid by a big batch anyway.
PARALLEL_MIN_WORK = 20_000_000
#: Every :class:`BatchKernel` made so far (``pages.shell.warmup`` compiles their parallel twins).
BATCH_KERNELS: list = []


def njit(*args, **kwargs):
    """``numba.njit`` with the project's flags; keyword arguments override them."""
    opts = {**FLAGS, **kwargs}
    if args and callable(args[0]):
        return numba.njit(**opts)(args[0])
    return numba.njit(*args, **opts)


class BatchKernel:
    """A ``prange`` kernel compiled twice: ``serial`` (``prange`` runs as ``range``) and
    ``parallel``; calling it runs ``parallel`` when ``work(*args) >= min_work``.

    Both compile lazily, so a process that only meets small batches never pays for the
    parallel compilation. They are separate functions for numba's disk cache (the parallel
    one's qualified name ends in ``__parallel``), so neither loads the other's code. Both
    give the same results: every ``prange`` iteration writes its own slots.
    """

    def __init__(self, fn, work, min_work, **opts):
        self.serial = njit(**opts)(fn)
        twin = types.FunctionType(
            fn.__code__, fn.__globals__, fn.__name__ + "__parallel", fn.__defaults__, fn.__closure__
        )
        twin.__qualname__ = fn.__qualname__ + "__parallel"
        twin.__module__ = fn.__module__
        twin.__doc__ = fn.__doc__
        self.parallel = njit(parallel=True, **opts)(twin)
        self.work = work
        self.min_work = min_work
        self.py_func = fn
        functools.update_wrapper(self, fn)
        BATCH_KERNELS.append(self)

    def compile_parallel(self) -> int:
        """Compile (or load from the disk cache) the parallel twin for every signature the
        serial one has met in this process; returns how many. For a background warm-up:
        the first big batch then finds it ready."""
        sigs = list(self.serial.signatures)
        for sig in sigs:
            self.parallel.compile(sig)
        return len(sigs)

    def pick(self, *args):
        """The dispatcher a call with ``args`` runs."""
        return self.parallel if self.work(*args) >= self.min_work else self.serial

    def __call__(self, *args):
        return self.pick(*args)(*args)


def batch_kernel(work, min_work, **opts):
    """Decorator: ``@batch_kernel(work=lambda A, *rest: A.size, min_work=10**6)`` makes a
    :class:`BatchKernel` of a ``prange`` kernel called from Python (not from other
    kernels). ``work`` estimates the serial cost of a call from its arguments."""

    def deco(fn):
        return BatchKernel(fn, work, min_work, **opts)

    return deco
