"""Natural order for ids shown to users: M2 before M10, worker9 before worker10."""

from __future__ import annotations

import re
from collections.abc import Iterable

_DIGITS = re.compile(r"(\d+)")


def natural_key(text) -> tuple:
    """Sort key that orders the numbers inside a string by value ("M2" before "M10").

    Parameters
    ----------
    text : object
        Converted with ``str``.

    Returns
    -------
    tuple
        Alternating (is-number, value) parts; compares across any two strings.
    """
    parts = _DIGITS.split(str(text))
    return tuple((1, int(p), "") if p.isdigit() else (0, 0, p.casefold()) for p in parts if p)


def natural_sorted(values: Iterable) -> list[str]:
    """The distinct values as strings, in natural order (see :func:`natural_key`)."""
    return sorted({str(v) for v in values}, key=natural_key)
