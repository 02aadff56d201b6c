"""Invariants of the length-sorted, OOM-halving collator (no model needed)."""

import random

import pytest

from judge.backends._batching import is_oom, length_order, run_batched, run_budgeted


class FakeOOM(RuntimeError):
    pass


def _echo_runner(lengths, max_ok=None, fail_alone=(), calls=None):
    """fn that answers ("done", i, len) and raises OOM for batches over ``max_ok`` items."""

    def fn(idx):
        if calls is not None:
            calls.append(list(idx))
        if (max_ok is not None and len(idx) > max_ok) or any(i in fail_alone for i in idx):
            raise FakeOOM("CUDA out of memory. Tried to allocate 2.00 GiB")
        return [("done", i, lengths[i]) for i in idx]

    return fn


def test_length_order_longest_first_and_stable():
    assert length_order([3, 5, 5, 1, 4]) == [1, 2, 4, 0, 3]
    assert length_order([]) == []


@pytest.mark.parametrize("batch_size", [1, 3, 16])
def test_order_restored_every_item_once(batch_size):
    rng = random.Random(batch_size)
    lengths = [rng.randint(1, 50) for _ in range(37)]
    calls = []
    out, final = run_batched(
        lengths, _echo_runner(lengths, calls=calls), batch_size=batch_size, error_result=str
    )
    assert out == [("done", i, n) for i, n in enumerate(lengths)]
    assert final == batch_size
    flat = [i for c in calls for i in c]
    assert sorted(flat) == list(range(len(lengths)))
    assert all(len(c) <= batch_size for c in calls)
    # batches go longest first, so the first batch holds the longest items
    assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)


def test_oom_halves_until_it_fits_and_keeps_the_size():
    lengths = list(range(20))
    calls, backoffs, seen = [], [], []
    out, final = run_batched(
        lengths,
        _echo_runner(lengths, max_ok=3, calls=calls),
        batch_size=16,
        error_result=str,
        on_oom=lambda old, new: backoffs.append((old, new)),
        progress=seen.append,
    )
    assert out == [("done", i, i) for i in lengths]
    assert backoffs == [(16, 8), (8, 4), (4, 2)]
    assert final == 2
    # the failed attempts did not count as progress; every item counted once
    assert sum(seen) == len(lengths)
    assert [len(c) for c in calls[:4]] == [16, 8, 4, 2]
    assert all(len(c) <= 2 for c in calls[3:])


def test_item_that_fails_alone_gets_error_result_others_fine():
    lengths = [10, 50, 20, 30]
    out, final = run_batched(
        lengths,
        _echo_runner(lengths, fail_alone={1}),
        batch_size=4,
        error_result=lambda msg: ("error", msg),
    )
    assert out[1][0] == "error" and "batch size 1" in out[1][1] and "out of memory" in out[1][1]
    assert out[0] == ("done", 0, 10) and out[2] == ("done", 2, 20) and out[3] == ("done", 3, 30)
    assert final == 1


def test_other_errors_propagate():
    def fn(idx):
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        run_batched([1, 2], fn, batch_size=2, error_result=str)


def test_wrong_result_count_is_an_error():
    with pytest.raises(RuntimeError, match="returned 1 results for 2"):
        run_batched([1, 2], lambda idx: [0], batch_size=2, error_result=str)


def test_bad_batch_size():
    with pytest.raises(ValueError, match="batch_size"):
        run_batched([1], lambda idx: [0], batch_size=0, error_result=str)


def test_empty_input():
    assert run_batched([], lambda idx: [], batch_size=4, error_result=str) == ([], 4)


def test_is_oom_recognises_torch_errors():
    torch = pytest.importorskip("torch")
    assert is_oom(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate"))
    assert is_oom(
        RuntimeError("[enforce fail at alloc_cpu.cpp] DefaultCPUAllocator: out of memory")
    )
    assert not is_oom(RuntimeError("shape mismatch"))
    assert not is_oom(ValueError("out of memory"))


# ---------------------------------------------------------------- prefix tree (hf/prefix_cache.py)
def _naive_lcp(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_lcp2_matches_naive_loop():
    from judge.backends.hf.prefix_cache import _lcp2

    assert _lcp2([], [1]) == 0 and _lcp2([1, 2, 3], [1, 2, 3]) == 3
    assert _lcp2([1, 2, 3], [1, 2]) == 2 and _lcp2([5, 2], [1, 2]) == 0
    rng = random.Random(0)
    for _ in range(500):
        base = [rng.randint(0, 3) for _ in range(rng.randint(0, 40))]
        a = base[: rng.randint(0, len(base))] + [
            rng.randint(0, 3) for _ in range(rng.randint(0, 5))
        ]
        b = base[: rng.randint(0, len(base))] + [
            rng.randint(0, 3) for _ in range(rng.randint(0, 5))
        ]
        assert _lcp2(a, b) == _naive_lcp(a, b)


def test_split_range_builds_the_prefix_tree():
    from judge.backends.hf.prefix_cache import MIN_SHARED_TOKENS as M
    from judge.backends.hf.prefix_cache import _split_range

    # sorted neighbours' common lengths: two contexts (0-3, 4-5), a loner (6)
    lcp = [2 * M + 3, 2 * M + 2, M + 2, 3, 2 * M, 1]
    leaves, children = _split_range(0, 7, 0, lcp)
    assert leaves == [6]
    assert children == [(0, 4, M + 2), (4, 6, 2 * M)]
    # inside the first context: rows 0-2 share M more tokens (a first candidate), row 3 is a leaf
    leaves, children = _split_range(0, 4, M + 2, lcp)
    assert leaves == [3] and children == [(0, 3, 2 * M + 2)]
    # below the threshold nothing more is split off
    assert _split_range(0, 3, 2 * M + 2, lcp) == ([0, 1, 2], [])


# ---------------------------------------------------------------- token budget
def _padded(idx, sizes):
    return len(idx) * max(sizes[i] for i in idx)


@pytest.mark.parametrize("max_tokens", [1, 40, 100, 1000])
def test_token_budget_bounds_every_batch_and_fills_short_ones(max_tokens):
    rng = random.Random(max_tokens)
    lengths = [rng.randint(1, 50) for _ in range(60)]
    calls = []
    out, final, tokens = run_budgeted(
        lengths,
        _echo_runner(lengths, calls=calls),
        batch_size=64,
        max_tokens=max_tokens,
        error_result=str,
    )
    assert out == [("done", i, n) for i, n in enumerate(lengths)]
    assert (final, tokens) == (64, max_tokens)
    assert sorted(i for c in calls for i in c) == list(range(len(lengths)))
    for c in calls:
        # within the budget, or a single item larger than it
        assert len(c) == 1 or _padded(c, lengths) <= max_tokens
    if max_tokens == 100:
        # short items make larger batches than long ones
        sizes = {max(lengths[i] for i in c): len(c) for c in calls}
        assert sizes[min(sizes)] > sizes[max(sizes)]


def test_oom_halves_the_token_budget_when_it_bound_the_batch():
    lengths = [10] * 40
    calls, backoffs = [], []

    def fn(idx):
        calls.append(list(idx))
        if _padded(idx, lengths) > 60:
            raise FakeOOM("CUDA out of memory. Tried to allocate 2.00 GiB")
        return [("done", i) for i in idx]

    out, final, tokens = run_budgeted(
        lengths,
        fn,
        batch_size=32,
        max_tokens=200,
        error_result=str,
        on_oom=lambda old, new: backoffs.append((old, new)),
    )
    assert out == [("done", i) for i in range(40)]
    assert backoffs == [(200, 100), (100, 50)]  # the row limit never bound, so it stays
    assert (final, tokens) == (32, 50)
    assert [len(c) for c in calls[:3]] == [20, 10, 5]
    assert all(len(c) <= 5 for c in calls[2:])


def test_oom_halves_rows_when_they_bound_the_batch_and_lone_item_fails():
    lengths = [10, 10, 10, 10, 300]
    calls = []
    out, final, tokens = run_budgeted(
        lengths,
        _echo_runner(lengths, max_ok=2, fail_alone={4}, calls=calls),
        batch_size=4,
        max_tokens=5000,
        error_result=lambda msg: ("error", msg),
    )
    # 4 rows x 300 tokens are within the budget: the rows bound the batch and are halved,
    # down to the 300-token item alone, which fails at batch size 1
    assert out[4][0] == "error" and "batch size 1" in out[4][1]
    assert out[:4] == [("done", i, 10) for i in range(4)]
    assert (final, tokens) == (1, 5000)
    assert [len(c) for c in calls[:3]] == [4, 2, 1]


def test_token_budget_must_be_positive():
    with pytest.raises(ValueError, match="max_tokens"):
        run_budgeted([1], lambda idx: [0], batch_size=1, max_tokens=0, error_result=str)


def test_oom_on_a_last_batch_below_both_limits_halves_its_padded_tokens():
    lengths = [10] * 6  # 60 padded tokens: below the budget and the row limit
    backoffs = []
    out, final, tokens = run_budgeted(
        lengths,
        _echo_runner(lengths, max_ok=2),
        batch_size=64,
        max_tokens=1000,
        error_result=str,
        on_oom=lambda old, new: backoffs.append((old, new)),
    )
    assert out == [("done", i, 10) for i in range(6)]
    assert backoffs == [(1000, 30), (30, 15)]  # 6 -> 3 -> 1 rows per call
    assert (final, tokens) == (64, 15)
