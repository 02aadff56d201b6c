"""Compile-time flags for every numba kernel in ``ranking``, set in one place.

Kernels are private (``_name``) and wrapped by a documented public function that checks
shapes and dtypes. ``cache=True`` keeps compiled code across starts (under ``__pycache__``).
"""

from __future__ import annotations

import numba

FLAGS = dict(cache=True, nogil=True, fastmath=False)


def njit(*args, **kwargs):
    """``numba.njit`` with the project's flags; keyword arguments override them."""
    opts = {**FLAGS, **kwargs}
    if args and callable(args[0]):
        return numba.njit(**opts)(args[0])
    return numba.njit(*args, **opts)
