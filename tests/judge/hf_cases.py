"""Requests and result matrices shared by the transformers-backend tests (CPU and CUDA).

tests/judge/test_hf_backend.py checks the backend on CPU in float32, tests/judge/test_hf_cuda.py
the same invariants on CUDA; both build their requests here so they check the same cases.
"""

from __future__ import annotations

import random

import numpy as np

from judge.backends.base import Decoding, GenerateRequest, LabelRequest
from tests.judge.tiny_models import random_text as _text


def pairwise_requests(n_contexts=2, n_candidates=5, random_state=0, split_in_word=False):
    """All ordered pairs per context, prefix = context + first candidate (as the runner does)."""
    rng = random.Random(random_state)
    requests = []
    for _ in range(n_contexts):
        context = _text(rng, 30, 60)
        candidates = [_text(rng, 2, 12) for _ in range(n_candidates)]
        for i, a in enumerate(candidates):
            for j, b in enumerate(candidates):
                if i == j:
                    continue
                prefix = f"Passage:\n{context}\n\nSummary A: {a}"
                prompt = (
                    f"\n\nSummary B: {b}\n\nWhich Summary is more coherent, Summary A or Summary B?"
                )
                if split_in_word:
                    # the prefix ends inside a word: its last token merges across the split
                    prefix, prompt = prefix[:-2], prefix[-2:] + prompt
                requests.append(LabelRequest(prompt=prompt, prefix=prefix))
    return requests


def for_kind(requests, kind: str):
    """``requests`` as a ``kind`` model runs them: seq2seq ones prime the decoder with
    "Summary" (the C2 template's decoder prefix)."""
    if kind != "seq2seq":
        return list(requests)
    return [
        LabelRequest(prompt=r.prompt, prefix=r.prefix, decoder_prefix="Summary") for r in requests
    ]


def logprob_matrix(results, labels=("A", "B")):
    assert all(r.error is None for r in results), [r.error for r in results if r.error]
    return np.array([[r.logprobs[lab] for lab in labels] for r in results])


def prob_matrix(results, labels=("A", "B")):
    return np.array([[r.probs[lab] for lab in labels] for r in results])


def gen_requests(n_prompts=3, samples=2, **decoding):
    """``samples`` answers to each of ``n_prompts`` short prompts (seeded sampling by default)."""
    rng = random.Random(7)
    prompts = [_text(rng, 2, 15) for _ in range(n_prompts)]
    dec = Decoding(**{"temperature": 1.0, "top_p": 0.9, "max_new_tokens": 8, "seed": 0, **decoding})
    return [
        GenerateRequest(prompt=p, decoding=dec, sample=k) for p in prompts for k in range(samples)
    ]
