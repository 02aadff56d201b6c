"""Token log-probabilities of candidate texts (the probes' pass): ``judge.token_logprobs``
with a shared context prefix vs the same without sharing vs a naive per-text forward pass.

Each context (~400 tokens) has 16 candidates (~60 tokens), every candidate scored after its
context, on a random-weight Llama-architecture model (``bench_judge_throughput.build_llama``,
36M parameters; ``--quick``: smaller). The naive peer runs ``model(ids)`` once per text
(context + candidate, no padding, no cache) and reads the log-softmax at the text's tokens,
the reference the tests compare against. Medians over ``--repeats``; prints texts per
second, tokens computed and the largest absolute difference from the naive values.

    .venv/bin/python benchmarks/bench_token_logprobs.py --threads 1
    .venv/bin/python benchmarks/bench_token_logprobs.py --quick
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.bench_judge_throughput import (  # noqa: E402
    add_text_sizes,
    build_llama,
    make_texts,
    quiet_torch,
)


def naive(backend, texts, prefixes):
    """One unpadded, uncached forward pass per text; log-probs of the text's tokens."""
    import torch

    tok = backend.tokenizer
    out = []
    with torch.inference_mode():
        for text, prefix in zip(texts, prefixes, strict=True):
            head = [tok.bos_token_id] + tok(prefix, add_special_tokens=False)["input_ids"]
            ids = tok(text, add_special_tokens=False)["input_ids"]
            seq = torch.tensor([head + ids], device=backend.device)
            lp = backend.model(input_ids=seq).logits[0].float().log_softmax(-1)
            k = len(head)
            pos = torch.arange(k - 1, k - 1 + len(ids), device=seq.device)
            out.append(lp[pos, torch.tensor(ids, device=seq.device)].double().cpu().numpy())
    return out, sum(len(tok(p + t)["input_ids"]) for t, p in zip(texts, prefixes, strict=True))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, default=4)
    add_text_sizes(parser)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)

    import numpy as np

    torch = quiet_torch(args.threads)
    from judge.backends.hf import HFBackend

    size = dict(hidden=256, layers=2, intermediate=704) if args.quick else {}
    if args.quick:
        args.contexts, args.context_tokens, args.candidate_tokens, args.repeats = 2, 150, 25, 1
    with tempfile.TemporaryDirectory() as tmp:
        n_params = build_llama(Path(tmp) / "llama", **size)
        backend = HFBackend(str(Path(tmp) / "llama"), batch_size=args.batch_size)
        tok = backend.tokenizer
        texts, prefixes = [], []
        for c in range(args.contexts):
            (ctx,) = make_texts(tok, args.context_tokens, 1, 1000 * c)
            for cand in make_texts(tok, args.candidate_tokens, args.n_candidates, 1000 * c + 1):
                texts.append(cand)
                prefixes.append(f"Passage:\n{ctx}\n\nSummary: ")
        print(
            f"{n_params / 1e6:.0f}M-parameter Llama, {backend.device}, {len(texts)} texts "
            f"({args.contexts} contexts x {args.n_candidates}), torch threads "
            f"{torch.get_num_threads()}"
        )
        ref, naive_tokens = naive(backend, texts, prefixes)
        rows = []
        for label, fn in (
            ("naive, one text at a time (peer)", lambda: naive(backend, texts, prefixes)),
            ("token_logprobs, no sharing", lambda: _run(backend, texts, prefixes, False)),
            ("token_logprobs, shared prefix", lambda: _run(backend, texts, prefixes, True)),
        ):
            times = []
            for _ in range(args.repeats):
                backend.stats.clear()
                t0 = time.perf_counter()
                out, n_tokens = fn()
                times.append(time.perf_counter() - t0)
            diff = max(float(np.max(np.abs(a - b))) for a, b in zip(out, ref, strict=True))
            rows.append((label, statistics.median(times), n_tokens, diff))
        base = rows[0][1]
        print(f"{'method':36s} {'wall':>8s} {'texts/s':>8s} {'tokens':>8s} {'speed-up':>8s} diff")
        for label, wall, n_tokens, diff in rows:
            print(
                f"{label:36s} {wall:7.2f}s {len(texts) / wall:8.1f} {n_tokens:8d} "
                f"{base / wall:7.1f}x {diff:.1e}"
            )


def _run(backend, texts, prefixes, share):
    from judge import token_logprobs

    backend.share_prefix = share
    out = token_logprobs(backend, texts, prefixes)
    return out, backend.stats["n_tokens_computed"]


if __name__ == "__main__":
    main()
