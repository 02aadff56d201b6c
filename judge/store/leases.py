"""Leases on work in progress, so that runs sharing a run store never pay twice for one call.

A runner registers in the store (:meth:`judge.store.RunStore.register_runner`) with a lease
that a background thread renews while it works, and claims the keys it is about to ask
(:meth:`judge.store.RunStore.claim`). Claims end when the answer is stored, when the runner
ends (normally, cancelled, or with an exception), or — for a runner that died without ending —
when its lease runs out (``LEASE_S`` after its last renewal), or at once when it ran on this
host and its process is gone. A process id is paired with the process's start time where the
system tells it (Linux ``/proc``), so a recycled pid does not keep dead claims alive.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from functools import cache

logger = logging.getLogger(__name__)

#: seconds a runner's claims outlive its last renewal (renewed every ``LEASE_S / 4``)
LEASE_S = 120.0
HOST = socket.gethostname()


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (Linux), else None."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ")"
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None  # field 22 overall


@cache
def _own_start_time() -> str | None:
    return _start_time(os.getpid())


def process_id() -> tuple[int, str | None]:
    """(pid, start time or None) of this process, as :func:`process_alive` checks them."""
    return os.getpid(), _own_start_time()


def process_alive(pid: int, proc: str | None = None) -> bool | None:
    """Whether process ``pid`` (started at ``proc``, if known) still runs on this host.

    None when this system cannot tell (not POSIX); then only the lease decides.
    """
    if os.name != "posix":
        return None  # os.kill(pid, 0) would terminate the process on Windows
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, under another user
    except (OSError, ValueError, OverflowError):
        return None
    if proc is not None:
        now = _start_time(pid)
        if now is not None and now != proc:
            return False  # the pid was recycled by a newer process
    return True


class Lease:
    """A runner's registration in a store, renewed in the background while it is held.

    Use as a context manager: entering registers (``owner``), leaving releases every claim
    still held and removes the registration. ``claim(keys, since)`` claims for this owner.
    """

    def __init__(self, store, lease_s: float | None = None):
        self.store = store
        self.lease_s = float(LEASE_S if lease_s is None else lease_s)
        if self.lease_s <= 0:
            raise ValueError(f"lease_s must be positive; got {lease_s}")
        self.owner: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Lease:
        self.owner = self.store.register_runner(self.lease_s)
        self._thread = threading.Thread(target=self._renew, name="judgescope-lease", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        if self.owner is not None:
            self.store.end_runner(self.owner)

    def claim(self, keys, since: float):
        """:meth:`judge.store.RunStore.claim` for this lease's owner."""
        return self.store.claim(keys, self.owner, since=since)

    def release(self, keys) -> None:
        self.store.release(self.owner, keys)

    def _renew(self) -> None:
        period = self.lease_s / 4
        while not self._stop.wait(period):
            try:
                if not self.store.renew_runner(self.owner, self.lease_s):
                    # our lease ran out (the machine slept?) and another runner dropped it:
                    # come back; calls we had claimed may be asked by another runner too
                    logger.warning(
                        "the lease of this run in %s had expired; registering again", self.store
                    )
                    self._reregister()
            except Exception as exc:  # a busy or closed store: try again next period
                logger.warning("could not renew the run-store lease: %s", exc)

    def _reregister(self) -> None:
        self.store.register_runner(self.lease_s, owner=self.owner)
