"""Shared set-up of the runner tests: an environment without the user's key or cache, a tiny
dataset, a backend for the fake server, the prompt a pairwise call shows, a liusie-c2 run, a
backend without streaming (called in chunks), and the command line of a run in a
subprocess."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from data.schema import Dataset
from judge.backends.base import GenerateResult, LabelResult
from judge.backends.openai_compat import OpenAIBackend
from judge.runs.runners import run_pairwise
from judge.templates import builtin_templates

REPO = Path(__file__).resolve().parents[2]

TEMPLATES = builtin_templates()
C2 = TEMPLATES["liusie-c2"]
C2_SPEC = C2.for_attribute("coherence", "summary")


def _isolate(monkeypatch, tmp_path) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(folder))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return folder


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path):
    """No OpenAI key or endpoint of the user's, and a cache of the test's own: autouse in every
    module that imports it."""
    _isolate(monkeypatch, tmp_path)


@pytest.fixture(name="cache")
def cache_fixture(monkeypatch, tmp_path) -> Path:
    """``cache``: a private run store folder, and no key or endpoint from the environment."""
    return _isolate(monkeypatch, tmp_path)


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


def run_c2(ds, **kw):
    """``run_pairwise`` of the coherence of ``ds`` with the liusie-c2 template."""
    return run_pairwise(ds, attribute="coherence", template=C2, **kw)


class ChunkedBackend:
    """A backend without streaming (like the transformers one): called in chunks. With
    ``poison``, a chunk holding a prompt that contains it raises (a tokenizer choking)."""

    model_id = "chunky"

    def __init__(self, poison: str | None = None):
        self.poison = poison
        self.calls: list[int] = []

    def describe(self):
        return {"kind": "test", "model": "chunky"}

    def count_tokens(self, text):
        return len(text.split())

    def label_probs(self, requests, progress=None):
        self.calls.append(len(requests))
        if self.poison and any(self.poison in r.prefix + r.prompt for r in requests):
            raise ValueError("tokenizer choked on a character")
        return [
            LabelResult(
                probs={"A": 0.25, "B": 0.75}, logprobs={"A": math.log(0.25), "B": math.log(0.75)}
            )
            for _ in requests
        ]

    def generate(self, requests, progress=None):
        self.calls.append(len(requests))
        return [GenerateResult("Score: 4" if r.sample % 2 else "3 out of 5") for r in requests]


def judge_options(folder, template="liusie-c2", model="fake-model", base_url=None) -> list[str]:
    """The options of ``python -m judge run|estimate`` that say what to judge and with what:
    the coherence of the dataset in ``folder``, and the server at ``base_url`` if given."""
    args = ["--dataset", str(folder), "--attribute", "coherence"]
    args += ["--template", template, "--model", model]
    return args + ["--base-url", base_url] if base_url else args


def cli_args(folder, base_url, store, out, *extra) -> list[str]:
    """``python -m judge run`` arguments: the tiny dataset folder against a fake server."""
    run = ["run", *judge_options(folder, base_url=base_url), "--backend", "openai"]
    return [*run, "--concurrency", "3", "--store", str(store), "--out", str(out), "--quiet", *extra]


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
