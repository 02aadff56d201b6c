"""The transformers backend's token budget (``batch_tokens``) and its prefilled prefix caches,
on CPU in float32: same results as one prompt at a time, every pass within the budget, and the
out-of-memory back-off on the budget."""

import os
import random

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from judge.backends.base import LabelRequest  # noqa: E402
from judge.backends.hf import HFBackend  # noqa: E402
from tests.judge.hf_cases import for_kind, logprob_matrix, pairwise_requests  # noqa: E402
from tests.judge.tiny_models import CPU_FLOAT32  # noqa: E402


@pytest.fixture(scope="module")
def backends(model_dirs):
    return {
        name: HFBackend(str(model_dirs[name]), batch_size=16, **CPU_FLOAT32)
        for name in ("llama", "llama-nochat", "t5")
    }


class Recording:
    """Wraps a model; records (rows, width) of each pass and raises a CUDA-style OOM when a
    pass has more than ``max_tokens`` padded tokens (rows x width)."""

    def __init__(self, model, max_tokens=None):
        self._model, self.max_tokens = model, max_tokens
        self.passes, self.n_oom = [], 0

    def __getattr__(self, name):
        return getattr(self._model, name)

    def __call__(self, **kwargs):
        ids = kwargs["input_ids"]
        if self.max_tokens is not None and ids.numel() > self.max_tokens:
            self.n_oom += 1
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 9.00 GiB")
        self.passes.append(tuple(ids.shape))
        return self._model(**kwargs)


def _mixed_requests(kind):
    """Pairwise groups of two contexts (short and long candidates) plus lone prompts."""
    rng = random.Random(11)
    reqs = pairwise_requests(n_contexts=2, n_candidates=5, random_state=8)
    for r in pairwise_requests(n_contexts=1, n_candidates=3, random_state=9):
        # long continuations on the same prefixes: remainders of very different lengths
        reqs.append(
            LabelRequest(prompt=r.prompt + " and so on" * rng.randint(1, 12), prefix=r.prefix)
        )
    reqs += [LabelRequest(prompt="short"), LabelRequest(prompt="the cat sat " * 9)]
    rng.shuffle(reqs)
    return for_kind(reqs, kind)


def _run(backend, reqs, *, batch_size, batch_tokens=None, share=True, model=None):
    backend.batch_size, backend.batch_tokens, backend.share_prefix = batch_size, batch_tokens, share
    backend.stats.clear()
    real = backend.model
    if model is not None:
        backend.model = model
    try:
        return logprob_matrix(backend.label_probs(reqs))
    finally:
        backend.model = real


@pytest.mark.parametrize("name", ["llama", "llama-nochat", "t5"])
@pytest.mark.parametrize("budget", [40, 200, 5000])
def test_token_budget_gives_the_one_at_a_time_results_and_bounds_every_pass(name, budget, backends):
    backend = backends[name]
    reqs = _mixed_requests(backend.kind)
    want = _run(backend, reqs, batch_size=1, share=False)
    if backend.kind == "causal":
        backend._probe_shareable()  # checked once per backend, before the recorded run
    rec = Recording(backend.model)
    got = _run(backend, reqs, batch_size=256, batch_tokens=budget, model=rec)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert backend.batch_tokens == budget and backend.stats["n_oom_backoffs"] == 0
    # every pass within the budget, or one sequence alone (longer than the budget)
    assert all(rows * width <= budget or rows == 1 for rows, width in rec.passes)
    if backend.kind == "causal":
        assert backend.stats["n_tokens_padded"] == sum(r * w for r, w in rec.passes)
    if backend.kind == "causal" and budget == 5000:
        # remainders on a cache are short: a generous budget runs them in few large passes
        assert backend.stats["n_shared_requests"] > 0
        assert max(rows for rows, _ in rec.passes) > 16


def test_shared_budgeted_equals_unshared_row_limited(backends):
    """Sharing with a budget against the existing path (no sharing, batches of 16)."""
    backend = backends["llama"]
    reqs = _mixed_requests("causal")
    want = _run(backend, reqs, batch_size=16, share=False)
    for batch_size, budget in ((16, None), (3, None), (64, 300), (256, 64)):
        got = _run(backend, reqs, batch_size=batch_size, batch_tokens=budget)
        np.testing.assert_allclose(got, want, atol=1e-5, err_msg=f"{batch_size}, {budget}")


@pytest.mark.parametrize("name", ["llama", "t5"])
@pytest.mark.parametrize("share", [False, True])
def test_oom_halves_the_token_budget_and_results_match(name, share, backends):
    backend = backends[name]
    shared = share and backend.kind == "causal"
    n_candidates = 8 if shared else 5  # 56 remainders on one context: more than the budget
    reqs = pairwise_requests(
        n_contexts=1 if shared else 2, n_candidates=n_candidates, random_state=5
    )
    reqs = for_kind(reqs, backend.kind)
    want = _run(backend, reqs, batch_size=1, share=share)
    tok = backend.tokenizer
    if shared:  # passes run the remainders after the cached prefixes
        widest = max(len(tok(r.prompt, add_special_tokens=False)["input_ids"]) for r in reqs) + 4
        limit = 4 * widest
    else:
        widest = max(len(ids) for ids in tok([r.prefix + r.prompt for r in reqs])["input_ids"])
        limit = 3 * widest
    start = 4 * limit  # binds below the row limit, and is too much for the "memory"
    rec = Recording(backend.model, max_tokens=limit)
    got = _run(backend, reqs, batch_size=256, batch_tokens=start, share=share, model=rec)
    np.testing.assert_allclose(got, want, atol=1e-5)
    # only the budget was halved, the rows limit kept
    assert rec.n_oom == backend.stats["n_oom_backoffs"] >= 1
    assert backend.batch_tokens <= start // 2 and backend.batch_size == 256
    assert all(rows * width <= limit for rows, width in rec.passes)
    if shared:
        assert backend.stats["n_shared_requests"] == len(reqs)


def test_batch_tokens_must_be_positive(model_dirs):
    with pytest.raises(ValueError, match="batch_tokens"):
        HFBackend(str(model_dirs["llama"]), batch_tokens=0, **CPU_FLOAT32)


def test_prefilled_cache_gathers_rows_like_a_plain_cache(backends):
    """One pass on several cached rows (gathered into the prefilled buffer) equals the same
    continuations run whole."""
    backend = backends["llama-nochat"]
    tok = backend.tokenizer
    heads = [tok(t)["input_ids"] for t in ("the cat sat on the mat", "a dog ran in the park ok")]
    tails = [tok(t, add_special_tokens=False)["input_ids"] for t in (" very", " it was good")]
    with torch.inference_mode():
        _, past = backend._forward(heads, want_cache=True)
        before = [(k.clone(), v.clone()) for k, v in past.layers]
        rows = [1, 0, 1, 1]
        conts = [tails[0], tails[1], tails[1], tails[0]]
        lp_cached, _ = backend._forward(conts, past=past, rows=rows)
        lp_whole, _ = backend._forward([heads[r] + c for r, c in zip(rows, conts, strict=True)])
        # one row repeated: the broadcast copy
        lp_one, _ = backend._forward([tails[1], tails[0]], past=past, rows=[0, 0])
        lp_one_whole, _ = backend._forward([heads[0] + tails[1], heads[0] + tails[0]])
    np.testing.assert_allclose(lp_cached.numpy(), lp_whole.numpy(), atol=1e-5)
    np.testing.assert_allclose(lp_one.numpy(), lp_one_whole.numpy(), atol=1e-5)
    # the stored rows were not written to by the passes on top of them
    for (k, v), (k0, v0) in zip(past.layers, before, strict=True):
        assert torch.equal(k, k0) and torch.equal(v, v0)


def test_nodes_and_requests_of_several_contexts_share_passes(backends):
    """The tree runs level-wise: first-candidate nodes of all contexts of a root pass run in
    one pass, and their requests pool across contexts (the recursion per node needed one
    node pass and one request pass per context: 8 passes here, 4 now)."""
    backend = backends["llama"]
    reqs = pairwise_requests(n_contexts=3, n_candidates=4, random_state=2)
    want = _run(backend, reqs, batch_size=1, share=False)
    backend._probe_shareable()
    rec = Recording(backend.model)
    got = _run(backend, reqs, batch_size=64, model=rec)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert backend.stats["n_shared_requests"] == len(reqs) == 36
    assert backend.stats["n_forward"] <= 5
    # one pass held the requests of more than one context (12 each)
    assert max(rows for rows, _ in rec.passes) > 12


def test_label_result_checks_and_normalises_rows_by_label_set(backends):
    """Rows are handled as blocks of equal label tokens: broken rows (NaN, all -inf) get an
    error, a -inf label is a legitimate zero, and each row keeps its own labels."""
    from judge.backends.hf.prepared import Prepared

    def item(label_ids, labels):
        return Prepared(
            ids=[1], dec=None, label_ids=label_ids, labels=labels, text="", prefix_end=None
        )

    lp = torch.log_softmax(torch.arange(40, dtype=torch.float32).reshape(4, 10) / 7, dim=1)
    lp[0, 3] = float("nan")
    lp[1, 3] = lp[1, 4] = float("-inf")
    lp[2, 3] = float("-inf")
    batch = [item((3, 4), ("A", "B"))] * 3 + [item((5, 6, 7), ("1", "2", "3"))]
    pending = backends["llama"]._label_result(lp, batch)
    # kept on the device, read once per batch after the last pass
    assert [p.row for p in pending] == [0, 1, 2, 3] and len({id(p.batch) for p in pending}) == 1
    out = pending[0].batch.read(torch)
    assert "invalid label log-probabilities" in out[0].error and out[0].probs == {}
    assert "invalid label log-probabilities" in out[1].error
    assert out[2].error is None and out[2].probs == {"A": 0.0, "B": 1.0}
    assert out[2].logprobs == {"A": float("-inf"), "B": pytest.approx(float(lp[2, 4]))}
    want = torch.softmax(lp[3, 5:8].double(), 0).tolist()
    assert list(out[3].probs) == ["1", "2", "3"]
    assert list(out[3].probs.values()) == pytest.approx(want, abs=1e-12)


def test_to_device_pins_and_does_not_block_on_cuda_only():
    from types import SimpleNamespace

    from judge.backends.hf.loading import to_device

    calls = []

    class Fake:
        def pin_memory(self):
            calls.append("pin")
            return self

        def to(self, device, non_blocking=False):
            calls.append((device.type, non_blocking))
            return self

    to_device(Fake(), SimpleNamespace(type="cuda"))
    assert calls == ["pin", ("cuda", True)]
    calls.clear()
    t = to_device(torch.arange(3), torch.device("cpu"))
    assert t.device.type == "cpu" and t.tolist() == [0, 1, 2]
