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
    """Per-user cache folder (XDG on Linux, ~/.cache otherwise)."""
    base = os.environ.get("JUDGESCOPE_CACHE")
    if base:
        return Path(base).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "judgescope"


def data_dirs(data_dir: str | os.PathLike | None = None) -> list[Path]:
    """Folders searched for benchmark files, in order.

    An explicit ``data_dir`` wins; otherwise ``JUDGESCOPE_DATA``, else ``../shared/data``
    beside the repository; the per-user download cache comes last.
    """
    if data_dir is not None:
        return [Path(data_dir).expanduser()]
    env = os.environ.get("JUDGESCOPE_DATA")
    first = Path(env).expanduser() if env else REPO_ROOT.parent / "shared" / "data"
    return [first, user_cache_dir() / "data"]


def default_data_dir() -> Path:
    return data_dirs()[0]
