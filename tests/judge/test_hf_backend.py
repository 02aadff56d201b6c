"""The transformers backend on tiny random-weight T5 and Llama models saved to disk (offline)."""

import os
import random
import subprocess
import sys

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from judge.backends.base import (  # noqa: E402
    BackendError,
    Decoding,
    GenerateRequest,
    LabelRequest,
)
from judge.backends.hf import HFBackend  # noqa: E402
from tests.judge.hf_cases import (  # noqa: E402
    for_kind,
    gen_requests,
    logprob_matrix,
    pairwise_requests,
    prob_matrix,
)
from tests.judge.tiny_models import CPU_FLOAT32  # noqa: E402

# Every backend here is checked against a CPU float32 computation (a direct forward pass,
# another batch size, no sharing), so each pins device and dtype: "auto" would pick CUDA and
# bf16 on a GPU machine. The same invariants on CUDA: tests/judge/test_hf_cuda.py.


@pytest.fixture(scope="module")
def llama(model_dirs):
    return HFBackend(str(model_dirs["llama"]), batch_size=16, **CPU_FLOAT32)


@pytest.fixture(scope="module")
def llama_nochat(model_dirs):
    return HFBackend(str(model_dirs["llama-nochat"]), batch_size=16, **CPU_FLOAT32)


@pytest.fixture(scope="module")
def t5(model_dirs):
    return HFBackend(str(model_dirs["t5"]), batch_size=16, **CPU_FLOAT32)


def _reset(backend):
    backend.batch_size, backend.share_prefix = 16, True
    backend.answer_prefix = ""
    backend.stats.clear()
    return backend


def _backend(request, name):
    """A module-scoped backend by name, reset to batch size 16, sharing on, empty statistics."""
    return _reset(request.getfixturevalue(name))


@pytest.fixture(autouse=True)
def _fresh_state(request):
    for name in ("llama", "llama_nochat", "t5"):
        if name in request.fixturenames:
            _reset(request.getfixturevalue(name))


# ---------------------------------------------------------------- loading and settings
def test_loads_and_describes(llama, t5, model_dirs):
    from judge.backends.base import Backend

    assert isinstance(llama, Backend) and isinstance(t5, Backend)
    assert llama.kind == "causal" and t5.kind == "seq2seq"
    assert llama.dtype == torch.float32 and llama.device.type == "cpu"
    assert llama.use_chat_template is True and t5.use_chat_template is False
    assert llama.model_id == "tiny-llama"
    d = llama.describe()
    assert d["backend"] == "hf" and d["kind"] == "causal" and d["dtype"] == "float32"
    assert d["path"] == str(model_dirs["llama"])
    assert "batch_size" not in d
    assert not llama.model.training


def test_count_tokens(llama):
    ids = llama.tokenizer("Summary A or Summary B", add_special_tokens=False)["input_ids"]
    assert llama.count_tokens("Summary A or Summary B") == len(ids) > 0


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(BackendError, match="cannot load .*no-such-org/no-such-model"):
        HFBackend("no-such-org/no-such-model", **CPU_FLOAT32)
    with pytest.raises(BackendError, match="no folder at that path"):
        HFBackend(str(tmp_path / "nothing-here"), **CPU_FLOAT32)
    with pytest.raises(BackendError, match="cannot load the configuration"):
        HFBackend(str(tmp_path), **CPU_FLOAT32)  # a folder without config.json


def test_not_a_language_model_is_a_clear_error(tmp_path):
    from transformers import ViTConfig

    ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2).save_pretrained(tmp_path)
    with pytest.raises(BackendError, match="not a causal language model"):
        HFBackend(str(tmp_path), **CPU_FLOAT32)


def test_bad_settings(model_dirs):
    with pytest.raises(ValueError, match="kind"):
        HFBackend(str(model_dirs["llama"]), kind="encoder", **CPU_FLOAT32)
    with pytest.raises(ValueError, match="dtype"):
        HFBackend(str(model_dirs["llama"]), device="cpu", dtype="int3")
    with pytest.raises(BackendError, match="no chat template"):
        HFBackend(str(model_dirs["llama-nochat"]), use_chat_template=True, **CPU_FLOAT32)


def test_import_does_not_pull_torch():
    code = "import sys, judge.backends.hf; print('torch' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=os.getcwd()
    )
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- label probabilities
def _direct_causal_logprobs(backend, text, add_special_tokens, label_tokens):
    """Reference: one unpadded forward pass of the prompt, log-softmax at the last position."""
    tok = backend.tokenizer
    ids = tok(text, add_special_tokens=add_special_tokens, return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        logits = backend.model(input_ids=ids).logits[0, -1].double()
    lp = torch.log_softmax(logits, -1)
    return [float(lp[tok.convert_tokens_to_ids(t)]) for t in label_tokens]


def test_causal_chat_matches_direct_forward_and_normalises(llama):
    prompts = ["Which Summary is more coherent?", "the cat sat on the mat"]
    res = llama.label_probs([LabelRequest(prompt=p) for p in prompts])
    for p, r in zip(prompts, res, strict=True):
        text = llama.tokenizer.apply_chat_template(
            [{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True
        )
        # after the generation prompt's newline the label is the bare "A" token
        want = _direct_causal_logprobs(llama, text, False, ["A", "B"])
        np.testing.assert_allclose([r.logprobs["A"], r.logprobs["B"]], want, atol=1e-5)
        assert sum(r.probs.values()) == pytest.approx(1.0, abs=1e-12)
        pa = np.exp(want[0]) / (np.exp(want[0]) + np.exp(want[1]))
        assert r.probs["A"] == pytest.approx(pa, abs=1e-6)
        assert all(v < 0 for v in r.logprobs.values())
    assert res[0].probs["A"] != pytest.approx(res[1].probs["A"], abs=1e-3)


def test_answer_prefix_goes_after_generation_prompt(llama):
    llama.answer_prefix = "Answer:"
    (r,) = llama.label_probs([LabelRequest(prompt="Which Summary is better?")])
    text = llama.tokenizer.apply_chat_template(
        [{"role": "user", "content": "Which Summary is better?"}],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert text.endswith("<|assistant|>\n")
    # after "Answer:" the label is the space-prefixed token " A" (ĠA)
    want = _direct_causal_logprobs(llama, text + "Answer:", False, ["ĠA", "ĠB"])
    np.testing.assert_allclose([r.logprobs["A"], r.logprobs["B"]], want, atol=1e-5)


def test_causal_without_chat_template(llama_nochat):
    assert llama_nochat.use_chat_template is False
    llama_nochat.answer_prefix = "Answer:"
    (r,) = llama_nochat.label_probs([LabelRequest(prompt="Which is better, A or B?")])
    want = _direct_causal_logprobs(
        llama_nochat, "Which is better, A or B?\nAnswer:", True, ["ĠA", "ĠB"]
    )
    np.testing.assert_allclose([r.logprobs["A"], r.logprobs["B"]], want, atol=1e-5)


def test_seq2seq_primed_decoder_matches_direct_forward(t5):
    prompts = ["Passage: the cat sat. Summary A: cat. Summary B: dog. Which?", "a dog ran"]
    res = t5.label_probs([LabelRequest(prompt=p, decoder_prefix="Summary") for p in prompts])
    tok = t5.tokenizer
    for p, r in zip(prompts, res, strict=True):
        enc = tok(p, return_tensors="pt")["input_ids"]
        assert int(enc[0, -1]) == tok.eos_token_id  # T5-style: encoder input ends with </s>
        dec = torch.tensor(
            [[t5.model.config.decoder_start_token_id, tok.convert_tokens_to_ids("Summary")]]
        )
        with torch.inference_mode():
            logits = t5.model(input_ids=enc, decoder_input_ids=dec).logits[0, -1].double()
        lp = torch.log_softmax(logits, -1)
        want = [float(lp[tok.convert_tokens_to_ids(t)]) for t in ("ĠA", "ĠB")]
        np.testing.assert_allclose([r.logprobs["A"], r.logprobs["B"]], want, atol=1e-5)
        assert sum(r.probs.values()) == pytest.approx(1.0, abs=1e-12)


def test_score_labels_for_geval(llama, t5):
    labels = ("1", "2", "3", "4", "5")
    for backend in (llama, t5):
        res = backend.label_probs([LabelRequest(prompt="Score the story.", labels=labels)])
        assert set(res[0].probs) == set(labels)
        assert sum(res[0].probs.values()) == pytest.approx(1.0)
        expected = sum(int(k) * v for k, v in res[0].probs.items())
        assert 1.0 <= expected <= 5.0


@pytest.mark.parametrize("backend_name", ["llama", "t5"])
def test_multi_token_label_fails_before_any_work(backend_name, request):
    backend = _backend(request, backend_name)
    reqs = [LabelRequest(prompt="x"), LabelRequest(prompt="y", labels=("A", "Summarily"))]
    with pytest.raises(
        BackendError, match=r"label 'Summarily' is not a single known token.*tokens"
    ):
        backend.label_probs(reqs)
    assert backend.stats["n_forward"] == 0
    with pytest.raises(BackendError, match="distinct"):
        backend.label_probs([LabelRequest(prompt="x", labels=("A", "A"))])


def test_too_long_prompt_gets_error_result(model_dirs):
    backend = HFBackend(str(model_dirs["llama"]), max_length=20, **CPU_FLOAT32)
    res = backend.label_probs([LabelRequest(prompt="the cat " * 30), LabelRequest(prompt="hi")])
    assert res[0].error and "max_length=20" in res[0].error and res[0].probs == {}
    assert res[1].error is None and sum(res[1].probs.values()) == pytest.approx(1.0)


def test_empty_request_list(llama):
    assert llama.label_probs([]) == [] and llama.generate([]) == []


# ---------------------------------------------------------------- batching invariants
@pytest.mark.parametrize("backend_name", ["llama", "llama_nochat", "t5"])
def test_batch_sizes_and_shuffling_give_identical_results(backend_name, request):
    backend = _backend(request, backend_name)
    backend.share_prefix = False
    reqs = pairwise_requests(n_contexts=2, n_candidates=4, random_state=1)
    reqs += [LabelRequest(prompt="short"), LabelRequest(prompt="Summary")]
    reqs = for_kind(reqs, backend.kind)
    by_size = {}
    for size in (1, 3, 16):
        backend.batch_size = size
        by_size[size] = logprob_matrix(backend.label_probs(reqs))
    np.testing.assert_allclose(by_size[3], by_size[1], atol=1e-5)
    np.testing.assert_allclose(by_size[16], by_size[1], atol=1e-5)
    # prompts differ, so equal rows would mean a broken order, not a match
    assert np.unique(by_size[1][:, 0].round(6)).size > len(reqs) // 2

    perm = np.random.default_rng(0).permutation(len(reqs))
    shuffled = logprob_matrix(backend.label_probs([reqs[i] for i in perm]))
    np.testing.assert_allclose(shuffled, by_size[1][perm], atol=1e-5)


def test_progress_counts_every_request(llama):
    seen = []
    reqs = pairwise_requests(n_contexts=1, n_candidates=4) + [LabelRequest(prompt="alone")]
    llama.label_probs(reqs, progress=seen.append)
    assert sum(seen) == len(reqs)


# ---------------------------------------------------------------- shared prefixes
@pytest.mark.parametrize("backend_name", ["llama", "llama_nochat"])
@pytest.mark.parametrize("split_in_word", [False, True])
def test_shared_prefix_equals_no_sharing(backend_name, split_in_word, request):
    backend = _backend(request, backend_name)
    reqs = pairwise_requests(
        n_contexts=3, n_candidates=5, random_state=2, split_in_word=split_in_word
    )
    # requests without a prefix and a lone prefix mix with the groups
    reqs += [
        LabelRequest(prompt="no prefix here"),
        LabelRequest(prompt=" B?", prefix="lonely A or"),
    ]
    random.Random(3).shuffle(reqs)

    backend.share_prefix = False
    backend.batch_size = 1
    plain = logprob_matrix(backend.label_probs(reqs))
    plain_tokens = backend.stats["n_tokens_computed"]

    backend.stats.clear()
    backend.share_prefix = True
    for size in (16, 3):
        backend.batch_size = size
        shared = backend.label_probs(reqs)
        np.testing.assert_allclose(logprob_matrix(shared), plain, atol=1e-4)
        np.testing.assert_allclose(
            prob_matrix(shared), np.exp(plain) / np.exp(plain).sum(1, keepdims=True), atol=1e-4
        )
    # every grouped request ran on a cache; 3 contexts x 5 first candidates were declared
    assert backend.stats["n_shared_requests"] == 2 * 3 * 20
    assert backend.stats["n_prefix_groups"] == 2 * 15
    # one node per context and one per first candidate (at least)
    assert backend.stats["n_shared_nodes"] >= 2 * (3 + 15)
    assert backend.stats["n_tokens_computed"] < 0.5 * 2 * plain_tokens
    if split_in_word:
        assert backend.stats["n_prefix_boundary_mismatch"] > 0
    else:
        assert backend.stats["n_prefix_boundary_mismatch"] == 0


def test_context_only_prefix_still_shares_first_candidate(llama):
    """With prefix = context (the runner's default split) the tree finds the candidate level."""
    reqs = pairwise_requests(n_contexts=2, n_candidates=6, random_state=6)
    context_only = [
        LabelRequest(
            prompt=r.prefix.split("\n\nSummary A:")[1] + r.prompt,
            prefix=r.prefix.split("\n\nSummary A:")[0] + "\n\nSummary A:",
        )
        for r in reqs
    ]
    assert [c.prefix + c.prompt for c in context_only] == [r.prefix + r.prompt for r in reqs]
    shared = logprob_matrix(llama.label_probs(context_only))
    stats = dict(llama.stats)
    llama.share_prefix = False
    plain = logprob_matrix(llama.label_probs(reqs))
    np.testing.assert_allclose(shared, plain, atol=1e-4)
    assert stats["n_prefix_groups"] == 2
    assert stats["n_shared_nodes"] >= 2 * (1 + 6)
    assert stats["n_shared_requests"] == len(reqs)


def test_shared_prefix_cache_is_not_mutated_between_batches(llama):
    """Continuations of one group in several batches must all see the same prefix."""
    reqs = pairwise_requests(n_contexts=1, n_candidates=6, random_state=4)
    llama.batch_size = 2
    shared = logprob_matrix(llama.label_probs(reqs))
    llama.share_prefix = False
    plain = logprob_matrix(llama.label_probs(reqs))
    np.testing.assert_allclose(shared, plain, atol=1e-4)


# ---------------------------------------------------------------- out of memory
class OOMAbove:
    """Wraps a model; raises CUDA-style OOM when a forward pass has more than ``max_rows`` rows."""

    def __init__(self, model, max_rows, max_tokens=None):
        self._model, self.max_rows, self.max_tokens = model, max_rows, max_tokens
        self.batch_rows = []

    def __getattr__(self, name):
        return getattr(self._model, name)

    def __call__(self, **kwargs):
        ids = kwargs.get("input_ids")
        if ids is None:
            ids = kwargs["decoder_input_ids"]
        too_long = self.max_tokens is not None and ids.shape[1] > self.max_tokens
        if ids.shape[0] > self.max_rows or too_long:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 9.00 GiB")
        self.batch_rows.append(ids.shape[0])
        return self._model(**kwargs)


@pytest.mark.parametrize("backend_name", ["llama", "t5"])
@pytest.mark.parametrize("share", [False, True])
def test_oom_halves_batch_and_results_match(backend_name, share, request):
    backend = _backend(request, backend_name)
    reqs = pairwise_requests(n_contexts=2, n_candidates=5, random_state=5)
    reqs = for_kind(reqs, backend.kind)
    backend.share_prefix = share
    backend.batch_size = 1
    want = logprob_matrix(backend.label_probs(reqs))

    real = backend.model
    fake = OOMAbove(real, max_rows=3)
    backend.model, backend.batch_size = fake, 16
    backend.stats.clear()
    try:
        got = logprob_matrix(backend.label_probs(reqs))
    finally:
        backend.model = real
    np.testing.assert_allclose(got, want, atol=1e-4)
    assert backend.batch_size == 2  # 16 -> 8 -> 4 -> 2, and kept
    assert backend.stats["n_oom_backoffs"] == 3
    assert max(fake.batch_rows) <= 3


def test_oom_at_batch_size_one_is_an_error_result(llama):
    llama.share_prefix = False
    reqs = [LabelRequest(prompt="the cat " * 40), LabelRequest(prompt="short one")]
    real = llama.model
    llama.model = OOMAbove(real, max_rows=16, max_tokens=30)
    try:
        res = llama.label_probs(reqs)
    finally:
        llama.model = real
    assert res[0].probs == {} and "out of memory" in res[0].error
    assert res[1].error is None and sum(res[1].probs.values()) == pytest.approx(1.0)


# ---------------------------------------------------------------- generation
@pytest.mark.parametrize("backend_name", ["llama", "t5"])
def test_generate_reproducible_and_independent_of_batching(backend_name, request):
    backend = _backend(request, backend_name)
    reqs = gen_requests()
    backend.batch_size = 1
    one = backend.generate(reqs)
    backend.batch_size = 16
    many = backend.generate(reqs)
    again = backend.generate(list(reversed(reqs)))[::-1]
    assert [r.text for r in one] == [r.text for r in many] == [r.text for r in again]
    assert all(r.error is None and 1 <= r.n_completion_tokens <= 8 for r in many)
    assert all(r.n_prompt_tokens > 0 for r in many)
    # random weights, so different sample indices give different answers
    assert len({r.text for r in many}) > len(reqs) // 2
    reseeded = backend.generate(gen_requests(seed=1))
    assert [r.text for r in reseeded] != [r.text for r in many]


@pytest.mark.parametrize("backend_name", ["llama", "t5"])
def test_greedy_generation_matches_transformers_generate(backend_name, request):
    backend = _backend(request, backend_name)
    reqs = gen_requests(n_prompts=3, samples=1, temperature=0.0, max_new_tokens=6)
    res = backend.generate(reqs)
    tok = backend.tokenizer
    for req, r in zip(reqs, res, strict=True):
        if backend.kind == "causal":
            text = tok.apply_chat_template(
                [{"role": "user", "content": req.prompt}],
                tokenize=False,
                add_generation_prompt=True,
            )
            ids = tok(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
        else:
            ids = tok(req.prompt, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            out = backend.model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                do_sample=False,
                max_new_tokens=6,
                pad_token_id=tok.pad_token_id,
            )
        new = out[0, ids.shape[1] :] if backend.kind == "causal" else out[0, 1:]
        assert r.text == tok.decode(new, skip_special_tokens=True)


def test_generate_with_system_message(llama):
    req = GenerateRequest(
        prompt="rate it", system="You are a judge.", decoding=Decoding(max_new_tokens=3)
    )
    (r,) = llama.generate([req])
    assert r.error is None and r.n_prompt_tokens > llama.count_tokens("rate it") + 5


def test_from_model_wraps_a_model_in_memory(llama):
    wrapped = HFBackend.from_model(llama.model, llama.tokenizer, name="in-memory", batch_size=4)
    assert wrapped.kind == "causal" and wrapped.model_id == "in-memory"
    assert wrapped.dtype == torch.float32 and wrapped.use_chat_template
    reqs = pairwise_requests(n_contexts=1, n_candidates=3)
    np.testing.assert_allclose(
        logprob_matrix(wrapped.label_probs(reqs)),
        logprob_matrix(llama.label_probs(reqs)),
        atol=1e-5,
    )


def test_answer_prefix_applies_to_generation(llama):
    req = GenerateRequest(prompt="rate it", decoding=Decoding(max_new_tokens=2))
    (plain,) = llama.generate([req])
    llama.answer_prefix = "Score:"
    (prefixed,) = llama.generate([req])
    assert prefixed.n_prompt_tokens == plain.n_prompt_tokens + llama.count_tokens("Score:")


def test_sliding_window_cache_falls_back_to_no_sharing(tmp_path):
    """A cache that cannot be cut and reused (sliding window) runs unshared, still exact."""
    from transformers import MistralConfig, MistralForCausalLM

    from tests.judge.tiny_models import build_tokenizer, llama_fields, save_random

    tok = build_tokenizer("llama")
    config = MistralConfig(**llama_fields(tok), sliding_window=16)
    save_random(MistralForCausalLM, config, tok, tmp_path)
    backend = HFBackend(str(tmp_path), **CPU_FLOAT32)
    reqs = pairwise_requests(n_contexts=1, n_candidates=3)
    shared = logprob_matrix(backend.label_probs(reqs))
    assert backend.stats["n_shared_requests"] == 0
    backend.share_prefix, backend.batch_size = False, 1
    np.testing.assert_allclose(shared, logprob_matrix(backend.label_probs(reqs)), atol=1e-5)
