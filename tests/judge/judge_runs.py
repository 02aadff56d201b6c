"""Shared set-up of the runner tests: a tiny dataset, a backend for the fake server, the
prompt a pairwise call shows, a backend without streaming (called in chunks), and the
command line of a run in a subprocess."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd

from data.schema import Dataset
from judge.backends.base import GenerateResult, LabelResult
from judge.backends.openai_compat import OpenAIBackend
from judge.templates import builtin_templates

REPO = Path(__file__).resolve().parents[2]

TEMPLATES = builtin_templates()
C2 = TEMPLATES["liusie-c2"]
C2_SPEC = C2.for_attribute("coherence", "summary")


def tiny_dataset(n_contexts: int = 2, n_candidates: int = 4, name: str = "tiny") -> Dataset:
    ctx = pd.DataFrame(
        {
            "context_id": [f"doc{c}" for c in range(n_contexts)],
            "text": [
                f"Article {c}: the council voted on a cycle path (item {c})."
                for c in range(n_contexts)
            ],
        }
    )
    rows = [
        (f"doc{c}", f"s{k}", f"sys{k}", f"Summary {k} of article {c}.")
        for c in range(n_contexts)
        for k in range(n_candidates)
    ]
    cands = pd.DataFrame(rows, columns=["context_id", "candidate_id", "system", "text"])
    return Dataset(name=name, contexts=ctx, candidates=cands)


def backend_for(fake, **kw) -> OpenAIBackend:
    kw.setdefault("backoff_base", 0.001)
    kw.setdefault("random_state", 0)
    return OpenAIBackend(kw.pop("model", "fake-model"), base_url=fake.base_url, **kw)


def c2_prompt(ds: Dataset, context_id: str, first: str, second: str) -> str:
    ctx = dict(zip(ds.contexts["context_id"], ds.contexts["text"], strict=True))
    text = dict(
        zip(
            ds.candidates["context_id"] + "/" + ds.candidates["candidate_id"],
            ds.candidates["text"],
            strict=True,
        )
    )
    return C2_SPEC.render(
        context=ctx[context_id], a=text[f"{context_id}/{first}"], b=text[f"{context_id}/{second}"]
    )


class ChunkedBackend:
    """A backend without streaming (like the transformers one): called in chunks."""

    model_id = "chunky"

    def __init__(self):
        self.calls: list[int] = []

    def describe(self):
        return {"kind": "test", "model": "chunky"}

    def count_tokens(self, text):
        return len(text.split())

    def label_probs(self, requests, progress=None):
        self.calls.append(len(requests))
        return [
            LabelResult(
                probs={"A": 0.25, "B": 0.75}, logprobs={"A": math.log(0.25), "B": math.log(0.75)}
            )
            for _ in requests
        ]

    def generate(self, requests, progress=None):
        self.calls.append(len(requests))
        return [GenerateResult("Score: 4" if r.sample % 2 else "3 out of 5") for r in requests]


def cli_args(folder, base_url, store, out, *extra) -> list[str]:
    """``python -m judge run`` arguments: the tiny dataset folder against a fake server."""
    return [
        "run",
        "--dataset",
        str(folder),
        "--attribute",
        "coherence",
        "--template",
        "liusie-c2",
        "--backend",
        "openai",
        "--model",
        "fake-model",
        "--base-url",
        base_url,
        "--concurrency",
        "3",
        "--store",
        str(store),
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


def cli(args, env, **kw) -> subprocess.Popen:
    """``python -m judge`` in a subprocess (a run to kill, or two to start together)."""
    return subprocess.Popen(
        [sys.executable, "-m", "judge", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )
