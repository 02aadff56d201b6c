"""Dataset tokens: a short string per live :class:`Dataset` object and revision, by which the
service layer's caches hash a dataset argument (``hash_funcs={Dataset: token}``).

The bottom of the shell: it needs no Streamlit session, so tests and benchmarks call the
cached services with a plain :class:`Dataset`; :func:`bump` gives a dataset a new revision
(an upload changed in place), so cached results of the old one are no longer found.
"""

from __future__ import annotations

import threading
import uuid
import weakref

from data.schema import Dataset

# Server-wide [weak reference, token, revision] per live Dataset object, by id: cached results are
# keyed by token and revision (:func:`token`), so two sessions that load the same
# (cache_resource'd) benchmark share them, two uploads that happen to have the same file name
# never do, and :func:`bump` drops them. Weak references: a dead object's id may be reused.
# (A WeakKeyDictionary would need Dataset to be hashable, which a mutable dataclass is not.)
_tokens: dict[int, list] = {}
_tokens_lock = threading.Lock()


def _entry(ds: Dataset) -> list:
    """[weak reference, token, revision] of ``ds``, made on first use (hold the lock)."""
    entry = _tokens.get(id(ds))
    if entry is not None and entry[0]() is ds:
        return entry
    for k in [k for k, (ref, _, _) in _tokens.items() if ref() is None]:
        del _tokens[k]
    entry = [weakref.ref(ds), uuid.uuid4().hex[:12], 0]
    _tokens[id(ds)] = entry
    return entry


def token(ds: Dataset) -> str:
    """A short string that identifies the object ``ds`` and its revision.

    The service layer's caches hash a :class:`Dataset` argument by it
    (``hash_funcs={Dataset: token}``): the same object gives the same string in every
    session (no table is hashed), another object (a new upload, a reloaded file) another
    one, and :func:`bump` gives a new revision. Needs no Streamlit session, so tests and
    benchmarks call the cached services with a plain :class:`Dataset`.
    """
    with _tokens_lock:
        _, tok, revision = _entry(ds)
    return f"{tok}.{revision}"


def bump(ds: Dataset) -> None:
    """Give ``ds`` a new revision: results cached under its old token are not found again."""
    with _tokens_lock:
        _entry(ds)[2] += 1
