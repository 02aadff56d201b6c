"""Where JudgeScope finds benchmark data and keeps its caches.

``JUDGESCOPE_DATA`` names the data folder; it defaults to ``../shared/data`` beside the
repository, then a per-user cache folder (where downloads go). ``JUDGESCOPE_CACHE`` names
the cache for judge runs; tests point both at temporary folders.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def user_cache_dir() -> Path:
    """Per-user cache folder of JudgeScope (judge runs; downloads go to its ``data/``).

    Returns
    -------
    Path
        ``JUDGESCOPE_CACHE`` when set (``~`` expanded); else ``$XDG_CACHE_HOME/judgescope``
        when ``XDG_CACHE_HOME`` is set, else ``~/.cache/judgescope``. Not created here.
    """
    base = os.environ.get("JUDGESCOPE_CACHE")
    if base:
        return Path(base).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "judgescope"


def data_dirs(data_dir: str | os.PathLike | None = None) -> list[Path]:
    """Folders searched for benchmark files, in order.

    Parameters
    ----------
    data_dir : path, optional
        An explicit data folder (``~`` expanded); when given it is the only folder returned.

    Returns
    -------
    list of Path
        ``[data_dir]`` when given; otherwise ``JUDGESCOPE_DATA`` (else ``../shared/data``
        beside the repository) followed by the per-user download cache,
        ``user_cache_dir() / "data"``. The folders need not exist.
    """
    if data_dir is not None:
        return [Path(data_dir).expanduser()]
    env = os.environ.get("JUDGESCOPE_DATA")
    first = Path(env).expanduser() if env else REPO_ROOT.parent / "shared" / "data"
    return [first, user_cache_dir() / "data"]


def default_data_dir() -> Path:
    """The first data folder searched when no ``data_dir`` is given.

    Returns
    -------
    Path
        ``JUDGESCOPE_DATA`` when set (``~`` expanded), else ``../shared/data`` beside the
        repository (``data_dirs()[0]``).
    """
    return data_dirs()[0]
