"""SQLite helpers of the run store: write transactions and key lists in chunks."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

#: keys per ``SELECT ... IN (...)``
CHUNK = 500


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back when anything (even Ctrl-C) escapes.

    The connection runs in autocommit mode (``isolation_level=None``) and the caller holds
    the store's lock, so the transactions are explicit and one at a time per connection.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def chunks(keys: Sequence[str]) -> Iterator[tuple[Sequence[str], str]]:
    """(chunk of ``keys``, its ``?,?,...`` placeholders), :data:`CHUNK` keys at a time."""
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        yield chunk, ",".join("?" * len(chunk))
