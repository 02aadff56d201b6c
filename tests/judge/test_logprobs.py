"""judge.token_logprobs against a naive one-text-at-a-time forward pass on tiny offline models."""

import os
import random

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import judge  # noqa: E402
from judge.backends.base import BackendError  # noqa: E402
from judge.backends.hf import MIN_SHARED_TOKENS, HFBackend  # noqa: E402
from tests.judge.tiny_models import CPU_FLOAT32  # noqa: E402
from tests.judge.tiny_models import random_text as _text  # noqa: E402

# The references here are CPU float32 forward passes, so every backend pins its device and
# dtype ("auto" is CUDA + bf16 on a GPU machine); CUDA is checked in tests/judge/test_hf_cuda.py.


@pytest.fixture(scope="module")
def llama(model_dirs):
    return HFBackend(str(model_dirs["llama"]), batch_size=4, **CPU_FLOAT32)


@pytest.fixture(autouse=True)
def _reset(request):
    if "llama" in request.fixturenames:
        b = request.getfixturevalue("llama")
        b.batch_size, b.share_prefix, b.max_length = 4, True, None
        b.stats.clear()


def naive(backend, text, prefix=""):
    """One unpadded, uncached forward pass over BOS + prefix + text."""
    tok = backend.tokenizer
    head = [tok.bos_token_id]
    pre = tok(prefix, add_special_tokens=False)["input_ids"] if prefix else []
    ids = tok(text, add_special_tokens=False)["input_ids"]
    seq = torch.tensor([head + pre + ids])
    with torch.no_grad():
        lp = backend.model(input_ids=seq).logits[0].double().log_softmax(-1)
    k = len(head) + len(pre)
    return np.array([float(lp[k + j - 1, t]) for j, t in enumerate(ids)])


def _texts(n=9, random_state=0):
    rng = random.Random(random_state)
    return [_text(rng, 1, 20) for _ in range(n)]


def test_no_prefix_matches_naive_for_texts_of_different_lengths(llama):
    texts = _texts()
    out = judge.token_logprobs(llama, texts)
    assert len(out) == len(texts)
    lengths = set()
    for text, got in zip(texts, out, strict=True):
        want = naive(llama, text)
        assert got.shape == want.shape and got.dtype == np.float64
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
        lengths.add(len(got))
    assert len(lengths) > 3  # padding really happened
    assert llama.stats["n_shared_requests"] == 0


def test_shared_prefixes_match_naive_and_run_each_prefix_once(llama):
    rng = random.Random(1)
    contexts = [_text(rng, 20, 40) for _ in range(3)]
    texts, prefixes = [], []
    for c in contexts:
        for _ in range(4):
            texts.append(_text(rng, 1, 15))
            prefixes.append(f"Passage:\n{c}\n\nSummary: ")
    out = judge.token_logprobs(llama, texts, prefixes)
    assert llama.stats["n_shared_nodes"] == 3
    assert llama.stats["n_shared_requests"] == len(texts)
    for t, p, got in zip(texts, prefixes, out, strict=True):
        np.testing.assert_allclose(got, naive(llama, t, p), atol=1e-5, rtol=0)
    # the same without sharing: whole sequences, right-padded
    llama.share_prefix = False
    plain = judge.token_logprobs(llama, texts, prefixes)
    for a, b in zip(out, plain, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)


def test_prefix_tokens_excluded_and_same_length_with_or_without_prefix(llama):
    texts = ["the cat sat on the mat", "dog"]
    bare = judge.token_logprobs(llama, texts)
    after = judge.token_logprobs(llama, texts, ["story: very good story " * 3] * 2)
    assert [len(a) for a in bare] == [len(a) for a in after]
    assert [len(a) for a in bare] == [llama.count_tokens(t) for t in texts]
    assert not np.allclose(bare[0], after[0])  # the prefix really conditions the text
    assert all(np.all(a <= 0) for a in bare + after)


def test_mixed_shared_short_and_empty(llama):
    long_prefix = "the cat sat on the mat and the dog ran in the park " * 2
    texts = ["good story", "", "not coherent", "very", "quite good", ""]
    prefixes = [long_prefix, long_prefix, long_prefix, "a", "", ""]
    out = judge.token_logprobs(llama, texts, prefixes, batch_size=2)
    assert out[1].shape == (0,) and out[5].shape == (0,)
    for t, p, got in zip(texts, prefixes, out, strict=True):
        if t:
            np.testing.assert_allclose(got, naive(llama, t, p), atol=1e-5, rtol=0)
    assert llama.stats["n_shared_requests"] == 2  # "" texts are not run; "a" is too short
    assert len(llama.tokenizer(long_prefix)["input_ids"]) >= MIN_SHARED_TOKENS


def test_batch_size_one_and_progress(llama):
    texts = _texts(5, random_state=3)
    seen = []
    out = judge.token_logprobs(llama, texts, batch_size=1, progress=seen.append)
    assert sum(seen) == len(texts) and len(seen) == len(texts)
    assert llama.batch_size == 4  # an explicit batch size leaves the backend's alone
    for t, got in zip(texts, out, strict=True):
        np.testing.assert_allclose(got, naive(llama, t), atol=1e-5, rtol=0)


def test_bfloat16_close_to_float32(model_dirs, llama):
    bf = HFBackend(str(model_dirs["llama"]), dtype="bfloat16", device="cpu")
    texts = _texts(4, random_state=5)
    lo = judge.token_logprobs(bf, texts, ["the story: " * 4] * 4)
    hi = judge.token_logprobs(llama, texts, ["the story: " * 4] * 4)
    for a, b in zip(lo, hi, strict=True):
        assert a.dtype == np.float64 and np.all(np.isfinite(a))
        np.testing.assert_allclose(a, b, atol=0.15 * max(1.0, float(np.abs(b).max())))


def test_errors_are_clear(model_dirs, llama):
    t5 = HFBackend(str(model_dirs["t5"]), **CPU_FLOAT32)
    with pytest.raises(BackendError, match="causal"):
        judge.token_logprobs(t5, ["a text"])
    with pytest.raises(ValueError, match="one per text"):
        judge.token_logprobs(llama, ["a", "b"], ["x"])
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        judge.token_logprobs(llama, ["a", None])
    llama.max_length = 5
    with pytest.raises(BackendError, match="text 0 has .* tokens"):
        judge.token_logprobs(llama, ["the cat sat on the mat and the dog ran"])
    assert judge.token_logprobs(llama, []) == []
