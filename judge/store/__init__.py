"""The run store: every model answer kept in SQLite so that runs resume and can be re-parsed.

One row per model call result, keyed by a sha256 over everything that changes the answer
(backend identity without secrets, template, decoding, prompt, labels, sample); runs are
recorded with their items, so a run's table can be rebuilt from the stored raw answers with
another parsing rule, without calling the model. Runs sharing a store claim the calls they
are about to make, so that no call is asked twice at once.

Modules:

- :mod:`~judge.store.keys`: the key of a call (:func:`make_key`, :func:`prompt_hash`, ...);
- :mod:`~judge.store.rows`: a stored result and a run item, and what a result is worth
  (``ok``, ``answer-error``, ``failed``: :func:`status_of`);
- :mod:`~judge.store.database`: :class:`RunStore`, the SQLite file (results, runs, exports);
- :mod:`~judge.store.claims`: runners with leases and their claims on calls;
- :mod:`~judge.store.leases`: a runner's lease, renewed in the background while it works,
  and whether a runner's process is still alive;
- :mod:`~judge.store.tables`: stored rows to the canonical comparisons and ratings tables.

The import path ``judge.store`` offers every public name.
"""

from judge.store.claims import Claim
from judge.store.database import STORE_FILE, RunStore, default_store_path, open_store
from judge.store.keys import key_base, key_from_base, make_key, prompt_hash
from judge.store.rows import (
    ANSWER_ERROR_CODES,
    RunItem,
    StoredResult,
    error_code,
    result_row,
    status_of,
)
from judge.store.tables import comparisons_from_rows, ratings_from_rows

__all__ = [
    "ANSWER_ERROR_CODES",
    "STORE_FILE",
    "Claim",
    "RunItem",
    "RunStore",
    "StoredResult",
    "comparisons_from_rows",
    "default_store_path",
    "error_code",
    "key_base",
    "key_from_base",
    "make_key",
    "open_store",
    "prompt_hash",
    "ratings_from_rows",
    "result_row",
    "status_of",
]
