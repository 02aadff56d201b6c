"""What the runner itself costs per comparison, apart from the model.

A SummEval-shaped job (contexts x 16 candidates x 240 ordered pairs, ~400-word articles) is
run against backends that answer instantly, so everything measured is JudgeScope's own
work: planning (template rendering, selection, keys), store look-ups and commits, building
the table. Cases:

- ``plan``: plan_pairwise only;
- ``chunked``: a non-streaming backend (like the transformers one), commits per chunk of 256;
- ``streamed``: a streaming backend, one commit per answer (what API runs do, so that a kill
  loses nothing answered);
- ``resume``: the same job again with every answer in the store;
- ``http``: the real openai client against the local fake server (both in this process),
  max_concurrency 8 — an upper bound on calls/second the client side can sustain here.

Prints medians over ``--repeats`` and the ratios streamed/chunked and resume/chunked.
Usage: ``python benchmarks/bench_runner_overhead.py [--contexts 20] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from data.schema import Dataset  # noqa: E402
from judge.backends.base import LabelResult  # noqa: E402
from judge.runs.plan import plan_pairwise  # noqa: E402
from judge.runs.runners import run_pairwise  # noqa: E402
from judge.templates import builtin_templates  # noqa: E402

WORDS = (
    "council vote cycle path river budget school mayor plan city rail bridge road "
    "weather harvest market school hospital report"
).split()


def dataset(n_contexts: int, n_candidates: int = 16) -> Dataset:
    ctx, cands = [], []
    for c in range(n_contexts):
        article = " ".join(WORDS[(c * 7 + i) % len(WORDS)] for i in range(400))
        ctx.append((f"doc{c}", article))
        for k in range(n_candidates):
            summary = " ".join(WORDS[(c + k * 3 + i) % len(WORDS)] for i in range(60))
            cands.append((f"doc{c}", f"sys{k}", f"{summary} ({k})"))
    return Dataset(
        name="bench",
        contexts=pd.DataFrame(ctx, columns=["context_id", "text"]),
        candidates=pd.DataFrame(cands, columns=["context_id", "candidate_id", "text"]),
    )


class Instant:
    """Answers at once; ``stream`` chooses the streaming (per-answer commit) path."""

    model_id = "instant"

    def __init__(self, stream: bool):
        if stream:
            self.iter_label_probs = self._iter

    def describe(self):
        return {"kind": "bench", "model": "instant"}

    def count_tokens(self, text):
        return len(text) // 4

    def _result(self):
        return LabelResult(
            probs={"A": 0.6, "B": 0.4}, logprobs={"A": math.log(0.6), "B": math.log(0.4)}
        )

    def label_probs(self, requests, progress=None):
        return [self._result() for _ in requests]

    def _iter(self, requests, cancel=None):
        for i in range(len(requests)):
            yield i, self._result()


def timed(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--contexts", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--http-calls", type=int, default=400)
    args = ap.parse_args()
    ds = dataset(args.contexts)
    tpl = builtin_templates()["liusie-c2"]
    n = args.contexts * 240
    kw = dict(attribute="coherence", template=tpl)
    tmp = Path(tempfile.mkdtemp(prefix="bench_runner_"))
    results = {}

    results["plan"] = timed(
        lambda: plan_pairwise(ds, backend={"kind": "bench", "model": "x"}, **kw), args.repeats
    )

    def fresh(stream: bool):
        path = tmp / f"s{time.perf_counter_ns()}.sqlite"
        return lambda: run_pairwise(ds, backend=Instant(stream), store=path, **kw)

    results["chunked"] = timed(lambda: fresh(False)(), args.repeats)
    results["streamed"] = timed(lambda: fresh(True)(), args.repeats)
    warm = tmp / "warm.sqlite"
    run_pairwise(ds, backend=Instant(False), store=warm, **kw)
    results["resume"] = timed(
        lambda: run_pairwise(ds, backend=Instant(False), store=warm, **kw), args.repeats
    )

    print(
        f"job: {args.contexts} contexts x 240 ordered pairs = {n} comparisons; median of {args.repeats}"
    )
    for name in ("plan", "chunked", "streamed", "resume"):
        t = results[name]
        print(
            f"  {name:9s} {t:8.3f} s   {1e6 * t / n:8.1f} us/comparison   {n / t:10.0f} comparisons/s"
        )
    print(
        f"  ratio streamed/chunked = {results['streamed'] / results['chunked']:.2f}   "
        f"resume/chunked = {results['resume'] / results['chunked']:.2f}"
    )

    # the HTTP path: real client, local fake server, both in this process
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from judge.backends.base import LabelRequest
    from judge.backends.openai_compat import OpenAIBackend
    from tests.judge.fake_openai import FakeOpenAI

    with FakeOpenAI() as fake:
        backend = OpenAIBackend("fake-model", base_url=fake.base_url, max_concurrency=8)
        reqs = [LabelRequest(prompt=f"prompt {i}") for i in range(args.http_calls)]
        t = timed(lambda: backend.label_probs(reqs), args.repeats)
    print(
        f"  http      {t:8.3f} s   {args.http_calls / t:10.0f} calls/s (openai client + fake server, "
        "one process, concurrency 8)"
    )


if __name__ == "__main__":
    main()
