"""HF label-probability batching on CPU: this tree against another revision, alternated.

The job is gpu_throughput.py's pairwise job scaled down (``--n-contexts`` contexts x all
ordered pairs of ``--n-candidates``, prefix = passage + first candidate) on small random-weight
models built by gpu_throughput.build (the causal prefix tree on a Llama, the batched seq2seq
path on a T5), one thread, float32. Each measurement is a fresh subprocess importing ``judge``
from either this tree or ``--old REV`` (``git archive`` of judge/, benchmarks/, tests/ into a
temporary folder); old and new runs alternate, and the medians are reported with the forward
passes and padded tokens each ran (counted on the model's inputs, so both trees count alike)
and the largest difference of their label log-probabilities from the first old run.

    .venv/bin/python benchmarks/bench_hf_batching.py --old HEAD~3 --repeats 3
    .venv/bin/python benchmarks/bench_hf_batching.py --dry-run      # seconds, checks the script
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = {
    "llama-7b": dict(hidden=128, intermediate=344, layers=2, heads=4, vocab=1000),
    "t5-xl": dict(d_model=128, d_ff=320, layers=2, heads=4, vocab=1000),
}


def worker(args) -> dict:
    """One timed run in this process (``judge`` from ``args.root``); returns the figures."""
    root = Path(args.root)
    for p in (root, root / "benchmarks"):
        sys.path.insert(0, str(p))
    import numpy as np
    import torch

    torch.set_num_threads(1)
    from bench_judge_throughput import pairwise_requests, quiet_torch
    from gpu_throughput import build

    quiet_torch()
    from judge.backends.hf import HFBackend

    model, tok = build(args.model, SIZES[args.model], torch.device("cpu"), torch.float32)
    extra = {} if args.batch_tokens is None else {"batch_tokens": args.batch_tokens}
    backend = HFBackend.from_model(
        model,
        tok,
        batch_size=args.batch_size,
        answer_prefix="" if args.model == "t5-xl" else "Answer:",
        **extra,
    )
    counts = {"n_forward": 0, "n_padded": 0}

    class Counting:
        """The model, counting forward passes and the padded tokens they were given."""

        def __getattr__(self, name):
            return getattr(model, name)

        def __call__(self, **kw):
            counts["n_forward"] += 1
            for key in ("input_ids", "decoder_input_ids"):
                if kw.get(key) is not None:
                    counts["n_padded"] += int(kw[key].numel())
            return model(**kw)

    reqs = pairwise_requests(
        tok,
        n_candidates=args.n_candidates,
        context_tokens=args.context_tokens,
        candidate_tokens=args.candidate_tokens,
        n_contexts=args.n_contexts,
    )
    backend.label_probs(reqs[: args.n_candidates * 2])  # warm-up, not timed
    backend.batch_size = args.batch_size
    backend.model = Counting()
    t0 = time.perf_counter()
    results = backend.label_probs(reqs)
    wall = time.perf_counter() - t0
    lp = np.array([[r.logprobs.get(k, np.nan) for k in ("A", "B")] for r in results])
    if args.save:
        np.save(args.save, lp)
    return {
        "comparisons_per_s": len(reqs) / wall,
        "wall_s": wall,
        "n_comparisons": len(reqs),
        "n_errors": sum(r.error is not None for r in results),
        **counts,
    }


def run_one(root: Path, args, model: str, batch_size: int, batch_tokens, save: Path) -> dict:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        "--root",
        str(root),
        "--model",
        model,
        "--batch-size",
        str(batch_size),
        "--save",
        str(save),
        "--n-contexts",
        str(args.n_contexts),
        "--n-candidates",
        str(args.n_candidates),
        "--context-tokens",
        str(args.context_tokens),
        "--candidate-tokens",
        str(args.candidate_tokens),
    ]
    if batch_tokens is not None:
        cmd += ["--batch-tokens", str(batch_tokens)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode:
        raise SystemExit(f"worker failed ({' '.join(cmd)}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _configs(text: str) -> list[tuple[int, int | None]]:
    """'32,256:4096' -> [(32, None), (256, 4096)]: batch size, optional token budget."""
    out = []
    for part in text.split(","):
        size, _, tokens = part.partition(":")
        out.append((int(size), int(tokens) if tokens else None))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", default="HEAD", help="git revision to compare with")
    parser.add_argument("--models", default="llama-7b,t5-xl")
    parser.add_argument(
        "--old-configs", type=_configs, default=_configs("32"), help="batch[:tokens],..."
    )
    parser.add_argument(
        "--new-configs", type=_configs, default=_configs("32,256:4096"), help="batch[:tokens],..."
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-contexts", type=int, default=4)
    parser.add_argument("--n-candidates", type=int, default=16)
    parser.add_argument("--context-tokens", type=int, default=200)
    parser.add_argument("--candidate-tokens", type=int, default=30)
    parser.add_argument("--dry-run", action="store_true", help="2 contexts x 4 candidates, 1 run")
    # worker mode
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--batch-size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--batch-tokens", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--save", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args)))
        return
    if args.dry_run:
        args.n_contexts, args.n_candidates, args.repeats = 2, 4, 1
        args.context_tokens, args.candidate_tokens = 40, 10
    import numpy as np

    load = os.getloadavg()[0]
    print(f"load average at start {load:.1f}; one thread per run; old = {args.old}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        old_root = tmp / "old"
        old_root.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.old, "judge", "benchmarks", "tests"],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(old_root)], input=archive.stdout, check=True)
        variants = [("old", old_root, b, t) for b, t in args.old_configs]
        variants += [("new", ROOT, b, t) for b, t in args.new_configs]
        for model in [m.strip() for m in args.models.split(",") if m.strip()]:
            runs: dict[int, list[dict]] = {k: [] for k in range(len(variants))}
            for rep in range(args.repeats):
                for k, (_, root, b, t) in enumerate(variants):
                    runs[k].append(run_one(root, args, model, b, t, tmp / f"{model}-{k}-{rep}.npy"))
            ref = np.load(tmp / f"{model}-0-0.npy")
            print(f"\n{model}: {runs[0][0]['n_comparisons']} comparisons, {args.repeats} runs each")
            print(
                "| tree | batch | tokens | comparisons/s (median, runs) | passes | padded tokens "
                "| max abs diff of log p vs old |"
            )
            print("|---|---|---|---|---|---|---|")
            for k, (name, _, b, t) in enumerate(variants):
                rates = [r["comparisons_per_s"] for r in runs[k]]
                diff = max(
                    float(np.nanmax(np.abs(np.load(tmp / f"{model}-{k}-{rep}.npy") - ref)))
                    for rep in range(args.repeats)
                )
                errors = sum(r["n_errors"] for r in runs[k])
                print(
                    f"| {name} | {b} | {t or '-'} | {statistics.median(rates):.1f} "
                    f"({', '.join(f'{x:.0f}' for x in rates)}) | {runs[k][0]['n_forward']} "
                    f"| {runs[k][0]['n_padded']} | {diff:.1e}"
                    + (f" ({errors} errors)" if errors else "")
                    + " |"
                )
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
