"""The OpenAI-compatible backend against replies shaped as vLLM's server writes them.

A sample of vLLM's reply shape (tests/data/published/vllm/, see its PROVENANCE.md) read the
way live calls and batch output files read replies, and the fake server in its vLLM style
through the real ``openai`` client: label probabilities from the top logprobs, and from
exactly the label tokens when ``label_token_ids`` sends vLLM's ``logprob_token_ids``.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from judge.backends.base import BackendError, Decoding, GenerateRequest, LabelRequest
from judge.backends.openai_compat import OpenAIBackend
from judge.backends.openai_compat.batch_api import read_reply, request_body
from tests.judge.fake_openai import VLLM_TOKEN_IDS, FakeOpenAI, vllm_token_logprobs

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "published" / "vllm"


@pytest.fixture(autouse=True)
def _no_ambient_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def vllm():
    with FakeOpenAI(style="vllm") as fake:
        yield fake


def _backend(fake, **kw) -> OpenAIBackend:
    return OpenAIBackend("fake-model", base_url=fake.base_url, backoff_base=0.001, **kw)


def _sample() -> dict:
    return json.loads((SAMPLE / "chat_completion_logprobs.json").read_text())


def _p(lps: dict[str, float], tokens_a, tokens_b) -> float:
    a = sum(math.exp(lps[t]) for t in tokens_a)
    b = sum(math.exp(lps[t]) for t in tokens_b)
    return a / (a + b)


# ---------------------------------------------------------------- the published shape
def test_sample_top_logprobs_reply_reads_right():
    reply = _sample()["top_logprobs"]
    res = read_reply("label", reply, ("A", "B"), where="vllm", model="llama")
    assert res.error is None
    top = {"A": -0.3412, "B": -1.3187, " A": -6.2275}
    # "A" and " A" both answer A (their probabilities add up)
    assert res.probs["A"] == pytest.approx(_p(top, ["A", " A"], ["B"]), abs=1e-12)
    assert res.logprobs["B"] == pytest.approx(-1.3187)
    assert res.n_prompt_tokens == 612 and res.n_completion_tokens == 1
    assert json.loads(res.raw)["token"] == "A"


def test_sample_logprob_token_ids_reply_reads_right_with_minus_9999():
    reply = _sample()["logprob_token_ids"]
    res = read_reply("label", reply, ("A", "B"), where="vllm", model="llama")
    # the answer token ("Summary") is no label; "B" is vLLM's -inf, written -9999.0
    assert res.error is None and res.logprobs == {"A": -2.9957, "B": -9999.0}
    assert res.probs["A"] == 1.0 and res.probs["B"] == 0.0
    # the same reply with B a real value: read from the listed tokens alone
    changed = copy.deepcopy(reply)
    changed["choices"][0]["logprobs"]["content"][0]["top_logprobs"][2]["logprob"] = -3.5
    res = read_reply("label", changed, ("A", "B"), where="vllm", model="llama")
    assert res.probs["A"] == pytest.approx(_p({"A": -2.9957, "B": -3.5}, ["A"], ["B"]))


# ---------------------------------------------------------------- live, fake vLLM server
def test_vllm_replies_through_the_client(vllm):
    backend = _backend(vllm)
    backend.check()
    assert backend.supports_logprobs is True
    prompts = [f"Passage {i}: which summary is better, A or B?" for i in range(6)]
    results = backend.label_probs([LabelRequest(prompt=p) for p in prompts])
    for p, res in zip(prompts, results, strict=True):
        lps = vllm_token_logprobs(p)
        assert res.error is None
        assert res.probs["A"] == pytest.approx(_p(lps, ["A", " A"], [" B", "B"]), abs=1e-9)
    work = [b for b in vllm.bodies if "judgescope-probe" not in json.dumps(b)]
    assert len(work) == 6 and all("logprob_token_ids" not in b for b in work)


def test_top_k_too_small_bounds_a_label_that_named_tokens_bring_back(vllm):
    prompt = "Passage: the cat. Which summary is better, A or B?"
    lps = vllm_token_logprobs(prompt)
    exact = _p(lps, [" A"], [" B"])  # the model's own " A" vs " B"

    # top_logprobs=1: only the answer token comes back, so B is bounded, not read
    (topk,) = _backend(vllm, top_logprobs=1).label_probs([LabelRequest(prompt=prompt)])
    assert topk.probs["A"] == pytest.approx(0.5) and topk.probs["A"] != pytest.approx(exact)

    ids = {"A": VLLM_TOKEN_IDS[" A"], "B": VLLM_TOKEN_IDS[" B"]}
    named = _backend(vllm, top_logprobs=1, label_token_ids=ids)
    (res,) = named.label_probs([LabelRequest(prompt=prompt)])
    assert res.error is None
    assert res.logprobs["B"] == pytest.approx(lps[" B"])
    assert res.probs["A"] == pytest.approx(exact, abs=1e-9)
    # the body carried exactly the request's label ids, in label order
    assert vllm.bodies[-1]["logprob_token_ids"] == [362, 426]
    assert vllm.bodies[-1]["logprobs"] is True and vllm.bodies[-1]["max_tokens"] == 1


def test_label_token_ids_only_when_asked_and_only_on_label_requests(vllm):
    ids = {"A": 362, "B": 426, "1": 16, "2": 17, "3": 18}
    backend = _backend(vllm, label_token_ids=ids)
    backend.label_probs([LabelRequest(prompt="Score it.", labels=("1", "2", "3"))])
    assert vllm.bodies[-1]["logprob_token_ids"] == [16, 17, 18]
    backend.generate([GenerateRequest(prompt="Explain.", decoding=Decoding(max_new_tokens=4))])
    assert "logprob_token_ids" not in vllm.bodies[-1]
    # the batch file's body is the live request's: the field top-level, as vLLM reads it
    body = request_body(backend, LabelRequest(prompt="x"))
    assert body["logprob_token_ids"] == [362, 426] and "extra_body" not in body
    assert "logprob_token_ids" not in request_body(_backend(vllm), LabelRequest(prompt="x"))
    # answers restricted to named tokens are stored apart
    assert backend.describe()["label_token_ids"] == dict(sorted(ids.items()))
    assert "label_token_ids" not in _backend(vllm).describe()


def test_label_without_a_token_id_fails_before_any_call(vllm):
    backend = _backend(vllm, label_token_ids={"A": 362, "B": 426})
    reqs = [LabelRequest(prompt="ok"), LabelRequest(prompt="no", labels=("A", "tie"))]
    with pytest.raises(BackendError, match=r"request 1: label\(s\) \['tie'\] have no token id"):
        backend.label_probs(reqs)
    assert vllm.n_chat_calls == 0


@pytest.mark.parametrize(
    "bad, match",
    [
        ({}, "non-empty mapping"),
        ({"A": -1}, "not an int"),
        ({"": 3}, "not a non-empty"),
        ({"A": True}, "not an int"),
        ([("A", 1)], "mapping"),
    ],
)
def test_bad_label_token_ids(bad, match):
    with pytest.raises(ValueError, match=match):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", label_token_ids=bad)


def test_unknown_token_id_is_the_servers_400(vllm):
    backend = _backend(vllm, label_token_ids={"A": 362, "B": 999999}, max_retries=0)
    (res,) = backend.label_probs([LabelRequest(prompt="x")])
    assert res.error and res.error.startswith("http-400") and "outside the vocabulary" in res.error
