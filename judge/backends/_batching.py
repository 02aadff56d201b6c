"""Length-sorted batching with out-of-memory backoff (lm-evaluation-harness ``Collator`` style).

Pure Python: the model call is a function given by the caller, so the invariants (order
restored, every item answered once, batch halved on OOM) are tested without a model.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from typing import Any


def is_oom(exc: BaseException) -> bool:
    """True for torch's out-of-memory errors (CUDA, MPS, CPU allocator).

    ``torch.cuda.OutOfMemoryError`` subclasses RuntimeError and says "out of memory"; older
    or other allocators raise a plain RuntimeError with the same words.
    """
    if type(exc).__name__ == "OutOfMemoryError":
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def length_order(lengths: Sequence[int]) -> list[int]:
    """Indices sorted by length, longest first (stable for ties).

    Longest first so that an out-of-memory error, if any, happens on the first batch and the
    reduced batch size then holds for the rest.
    """
    return sorted(range(len(lengths)), key=lambda i: -lengths[i])


def free_memory() -> None:
    """Release what an out-of-memory error left behind before retrying smaller."""
    gc.collect()
    try:
        import torch
    except ImportError:  # the collator is usable without torch (tests with fakes)
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_batched(
    lengths: Sequence[int],
    fn: Callable[[list[int]], Sequence[Any]],
    *,
    batch_size: int,
    error_result: Callable[[str], Any],
    progress: Callable[[int], None] | None = None,
    on_oom: Callable[[int, int], None] | None = None,
) -> tuple[list[Any], int]:
    """Call ``fn`` on length-sorted batches of item indices and return results in input order.

    Parameters
    ----------
    lengths : sequence of int
        One sort key per item, usually its length in tokens; batches are formed largest
        first, so items of similar length share a batch.
    fn : callable
        ``fn(indices) -> results`` for a batch of item indices (one result per index, same
        order). May raise an out-of-memory error (see :func:`is_oom`).
    batch_size : int
        Largest number of items per call. Halved on out-of-memory and retried, down to 1; the
        reduced size is kept for the remaining batches.
    error_result : callable
        ``error_result(message)`` builds the result for an item that runs out of memory even
        alone, so one oversized prompt does not end the whole run.
    progress : callable, optional
        Called with the number of items finished after each batch.
    on_oom : callable, optional
        Called as ``on_oom(old_size, new_size)`` on every backoff (for statistics).

    Returns
    -------
    results : list
        ``results[i]`` answers item ``i``.
    batch_size : int
        The batch size in force at the end (callers keep it for the next call).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    n_items = len(lengths)
    order = length_order(lengths)
    results: list[Any] = [None] * n_items
    pos = 0
    while pos < n_items:
        idx = order[pos : pos + batch_size]
        oom_message = None
        try:
            out = list(fn(idx))
        except Exception as exc:  # only OOM is handled; anything else propagates
            if not is_oom(exc):
                raise
            oom_message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if oom_message is not None:
            # retry outside the except block so the traceback's tensors can be freed
            free_memory()
            if batch_size > 1:
                new_size = max(1, batch_size // 2)
                if on_oom is not None:
                    on_oom(batch_size, new_size)
                batch_size = new_size
                continue
            out = [error_result(f"out of memory even at batch size 1: {oom_message}")]
        if len(out) != len(idx):
            raise RuntimeError(f"batch function returned {len(out)} results for {len(idx)} items")
        for i, res in zip(idx, out, strict=True):
            results[i] = res
        pos += len(idx)
        if progress is not None:
            progress(len(idx))
    return results, batch_size
