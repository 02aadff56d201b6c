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
    results, batch_size, _ = run_budgeted(
        lengths,
        fn,
        batch_size=batch_size,
        error_result=error_result,
        progress=progress,
        on_oom=on_oom,
    )
    return results, batch_size


def run_budgeted(
    lengths: Sequence[int],
    fn: Callable[[list[int]], Sequence[Any]],
    *,
    batch_size: int,
    error_result: Callable[[str], Any],
    max_tokens: int | None = None,
    progress: Callable[[int], None] | None = None,
    on_oom: Callable[[int, int], None] | None = None,
) -> tuple[list[Any], int, int | None]:
    """:func:`run_batched` with an optional token budget per call as well as a row limit.

    A batch takes items longest first while it has at most ``batch_size`` items and its
    padded size, items x the longest ``lengths`` among them (its first), stays within
    ``max_tokens`` (a batch always takes at least one item). Short items thus fill large
    batches and long ones make small batches.

    On out-of-memory, with a token budget, a batch of 2 or more items but fewer than
    ``batch_size`` (the budget or the items ran out) sets the budget to half the padded
    tokens that failed; otherwise the row limit is halved as in :func:`run_batched`. Reduced
    limits are kept for the remaining batches, and an item that fails at batch size 1 gets
    ``error_result``. ``on_oom(old, new)`` is called for either limit. Returns
    ``(results, batch_size, max_tokens)`` with the limits in force at the end.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    n_items = len(lengths)
    order = length_order(lengths)
    results: list[Any] = [None] * n_items
    pos = 0
    while pos < n_items:
        end, widest = pos + 1, lengths[order[pos]]  # longest first: the batch's width
        while end < n_items and end - pos < batch_size:
            if max_tokens is not None and (end - pos + 1) * widest > max_tokens:
                break
            end += 1
        idx = order[pos:end]
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
            if max_tokens is not None and 1 < len(idx) < batch_size:
                # the budget bound the batch, or the items ran out: the retry gets half the
                # padded tokens that failed
                new_tokens = max(1, min(max_tokens, len(idx) * widest) // 2)
                if on_oom is not None:
                    on_oom(max_tokens, new_tokens)
                max_tokens = new_tokens
                continue
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
    return results, batch_size, max_tokens
