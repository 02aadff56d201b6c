"""SummEval-size pairwise job on a GPU: comparisons per second and the fraction of bf16 peak.

The job: 100 contexts x 16 candidates, all 240 ordered pairs per context (24,000 label-probability
prompts of ~560 tokens: a 400-token passage, two 60-token candidates, the C2 question), run
through ``judge.backends.hf.HFBackend`` with random weights in bf16 for two architectures:

- ``t5-xl``: FlanT5-XL-sized T5 (d_model 2048, d_ff 5120, 24+24 layers, 32 heads, gated-gelu),
  batched (sharing does not apply to seq2seq);
- ``llama-7b``: Llama-2-7B-sized (hidden 4096, 11008, 32 layers, 32 heads), batched with
  shared-prefix key/value caches, chat template and "Answer:" prefix.

FLOPs are estimated as 2 x parameters x tokens actually run (non-embedding parameters; for T5
the encoder's on encoder tokens, the decoder's on decoder tokens plus its cross-attention
key/value projections on encoder tokens). Attention scores and the output head are left out,
so the fraction of peak is a slight underestimate. Peak dense bf16 from a table by device
name (H100 SXM / H200: 989 TFLOP/s). A one-at-a-time baseline on a few pairs gives the ratio.

Extra measurements, each per model and batch size (``--batch-sizes 32,128``):

- ``--reference``: a plain transformers forward of the same model on prompts of the same
  length (T5: encoder + the primed decoder step; Llama: the whole prompt, last logits only),
  prompts/s, so the judge's rate can be read against the library's own;
- ``--profile``: torch.profiler over the first context's pairs: share of GPU kernel time in
  GEMM, attention and other kernels, and GPU busy time as a share of wall time (CUDA only);
- ``--matmul N``: an N x N x N matmul in the benchmark dtype, TFLOP/s (the card's ceiling);
- ``--batch-tokens N``: the backend's token budget per pass (``HFBackend.batch_tokens``), the
  batch sizes then capping the rows;
- ``--json PATH``: every figure as JSON, for ``benchmarks/gpu_report.py`` (one table).

    .venv/bin/python benchmarks/gpu_throughput.py                  # on a GPU machine
    .venv/bin/python benchmarks/gpu_throughput.py --dry-run        # tiny sizes, CPU, seconds
    bash benchmarks/gpu_check.sh                                   # tests + all of the above
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "benchmarks"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_judge_throughput import add_text_sizes, pairwise_requests, quiet_torch  # noqa: E402

#: dense bf16 TFLOP/s (no sparsity) by a substring of torch.cuda.get_device_name()
PEAK_BF16_TFLOPS = [
    ("H200", 989.0),
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0),
    ("H100", 989.0),  # SXM
    ("GH200", 989.0),
    ("B200", 2250.0),
    ("A100", 312.0),
    ("L40S", 362.0),
    ("A10G", 70.0),
    ("L4", 121.0),
    ("RTX 4090", 165.0),
]

ARCHS = {
    "t5-xl": dict(d_model=2048, d_ff=5120, layers=24, heads=32, vocab=32128),
    "llama-7b": dict(hidden=4096, intermediate=11008, layers=32, heads=32, vocab=32000),
}
DRY_ARCHS = {
    "t5-xl": dict(d_model=64, d_ff=160, layers=2, heads=4, vocab=1000),
    "llama-7b": dict(hidden=64, intermediate=172, layers=2, heads=4, vocab=1000),
}


def peak_tflops(device) -> float | None:
    import torch

    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    for key, value in PEAK_BF16_TFLOPS:
        if key in name:
            return value
    return None


def build(arch: str, size: dict, device, dtype):
    """Random-weight model built directly on the device, and its tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, T5Config, T5ForConditionalGeneration

    from tests.judge.tiny_models import build_tokenizer

    torch.manual_seed(0)
    if arch == "t5-xl":
        tok = build_tokenizer("t5")
        config = T5Config(
            vocab_size=max(size["vocab"], len(tok)),
            d_model=size["d_model"],
            d_kv=size["d_model"] // size["heads"],
            d_ff=size["d_ff"],
            num_layers=size["layers"],
            num_decoder_layers=size["layers"],
            num_heads=size["heads"],
            feed_forward_proj="gated-gelu",
            tie_word_embeddings=False,
            decoder_start_token_id=tok.pad_token_id,
            pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id,
        )
        cls = T5ForConditionalGeneration
    else:
        tok = build_tokenizer("llama")
        config = LlamaConfig(
            vocab_size=max(size["vocab"], len(tok)),
            hidden_size=size["hidden"],
            intermediate_size=size["intermediate"],
            num_hidden_layers=size["layers"],
            num_attention_heads=size["heads"],
            num_key_value_heads=size["heads"],
            max_position_embeddings=4096,
            bos_token_id=tok.bos_token_id,
            eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
            tie_word_embeddings=False,
        )
        cls = LlamaForCausalLM
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # initialise in bf16: a 7B model in fp32 would not fit twice
    try:
        with torch.device(device):
            model = cls(config)
    finally:
        torch.set_default_dtype(default_dtype)
    return model.to(device=device, dtype=dtype).eval(), tok


def flop_params(model, arch: str) -> dict:
    """Parameter counts for the FLOP estimate (embeddings and output head excluded)."""

    def count(module):
        return sum(p.numel() for p in module.parameters())

    if arch == "t5-xl":
        enc = count(model.encoder) - count(model.shared)
        dec = count(model.decoder) - count(model.shared)
        cross_kv = sum(
            count(layer.layer[1].EncDecAttention.k) + count(layer.layer[1].EncDecAttention.v)
            for layer in model.decoder.block
        )
        return {"encoder": enc, "decoder": dec - cross_kv, "cross_kv": cross_kv}
    body = count(model.model) - count(model.model.embed_tokens)
    return {"body": body}


def estimated_flops(params: dict, stats) -> float:
    if "body" in params:
        return 2.0 * params["body"] * stats["n_tokens_computed"]
    return 2.0 * (
        params["encoder"] * stats["n_encoder_tokens"]
        + params["cross_kv"] * stats["n_encoder_tokens"]
        + params["decoder"] * stats["n_decoder_tokens"]
    )


# ---------------------------------------------------------------- profiler summary
#: kernel-name pieces by class; attention is tested first (fused attention kernels are often
#: CUTLASS-based), then GEMM (cuBLAS, CUTLASS, Hopper's nvjet/xmma kernels)
ATTENTION_KERNELS = ("flash", "fmha", "attention", "attn", "sdpa")
GEMM_KERNELS = ("gemm", "gemv", "cublas", "cutlass", "xmma", "nvjet", "matmul", "splitk")


def kernel_class(name: str) -> str:
    """ "attention", "gemm" or "other" for a GPU kernel's name."""
    low = name.lower()
    if any(k in low for k in ATTENTION_KERNELS):
        return "attention"
    if any(k in low for k in GEMM_KERNELS):
        return "gemm"
    return "other"


def profile_summary(kernels, wall_us: float, top: int = 5) -> dict:
    """Shares of GPU kernel time by class and GPU busy share of wall time.

    ``kernels`` are (name, start_us, end_us) of every GPU kernel in the profiled region;
    busy time is the union of their intervals (overlapping kernels count once).
    """
    kernels = list(kernels)
    by_class = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
    by_name: dict[str, float] = {}
    for name, start, end in kernels:
        by_class[kernel_class(name)] += end - start
        by_name[name] = by_name.get(name, 0.0) + end - start
    total = sum(by_class.values())
    busy, cur_start, cur_end = 0.0, None, None
    for start, end in sorted((s, e) for _, s, e in kernels):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                busy += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    if cur_end is not None:
        busy += cur_end - cur_start
    return {
        "n_kernels": len(kernels),
        "kernel_ms": total / 1e3,
        "wall_ms": wall_us / 1e3,
        **{f"{k}_share": (v / total if total else None) for k, v in by_class.items()},
        "gpu_busy_share": busy / wall_us if wall_us > 0 else None,
        "top_kernels": [
            [name[:120], round(t / 1e3, 3)]
            for name, t in sorted(by_name.items(), key=lambda kv: -kv[1])[:top]
        ],
    }


def profile_run(backend, reqs, device) -> dict:
    """torch.profiler over ``backend.label_probs(reqs)`` on CUDA: :func:`profile_summary`."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    if device.type != "cuda":
        return {"skipped": "no CUDA"}
    torch.cuda.synchronize(device)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        backend.label_probs(reqs)
        torch.cuda.synchronize(device)
        wall_us = (time.perf_counter() - t0) * 1e6
    kernels = [
        (e.name, e.time_range.start, e.time_range.end)
        for e in prof.events()
        if e.device_type == torch.autograd.DeviceType.CUDA
    ]
    out = profile_summary(kernels, wall_us)
    out["n_requests"] = len(reqs)
    out["note"] = "wall time under the profiler (its overhead lowers the busy share a little)"
    return out


# ---------------------------------------------------------------- references
def _rate(fn, sync, n_items: int, min_seconds: float, min_iters: int = 3) -> float:
    """Items per second of ``fn()`` (``n_items`` each call), after two warm-up calls."""
    for _ in range(2):
        fn()
    sync()
    iters, t0 = 0, time.perf_counter()
    while iters < min_iters or time.perf_counter() - t0 < min_seconds:
        fn()
        iters += 1
        sync()
    return iters * n_items / (time.perf_counter() - t0)


def plain_forward(model, arch, params, batch, n_tokens, device, sync, min_seconds) -> dict:
    """Prompts/s of a bare transformers forward at ``batch`` prompts of ``n_tokens`` tokens:
    T5 encoder + a 2-token primed decoder; Llama the whole prompt, last logits only."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(0)
    ids = torch.randint(10, 500, (batch, n_tokens), generator=gen).to(device)
    mask = torch.ones_like(ids)
    if arch == "t5-xl":
        dec = torch.zeros((batch, 2), dtype=torch.long, device=device)
        stats = {"n_encoder_tokens": batch * n_tokens, "n_decoder_tokens": batch * 2}

        def fn():
            model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec, use_cache=False)
    else:
        stats = {"n_tokens_computed": batch * n_tokens}

        def fn():
            model(input_ids=ids, attention_mask=mask, use_cache=False, logits_to_keep=1)

    with torch.inference_mode():
        rate = _rate(fn, sync, batch, min_seconds)
    flops_per_prompt = estimated_flops(params, stats) / batch
    return {"per_s": rate, "tflops": rate * flops_per_prompt / 1e12, "n_tokens": n_tokens}


def matmul_ceiling(n: int, device, dtype, min_seconds: float = 2.0) -> dict:
    """TFLOP/s of an n x n x n matmul in ``dtype`` on ``device``."""
    import torch

    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    rate = _rate(lambda: a @ b, sync, 1, min_seconds)
    return {"n": n, "dtype": str(dtype).removeprefix("torch."), "tflops": rate * 2 * n**3 / 1e12}


# ---------------------------------------------------------------- the job
def run_arch(arch, args, device, dtype) -> list[dict]:
    """Time the job at every batch size on one model built once; one row per batch size."""
    import torch

    from judge.backends.hf import HFBackend

    size = (DRY_ARCHS if args.dry_run else ARCHS)[arch]
    t0 = time.perf_counter()
    model, tok = build(arch, size, device, dtype)
    n_params = sum(p.numel() for p in model.parameters())
    params = flop_params(model, arch)
    backend = HFBackend.from_model(
        model, tok, name=arch, answer_prefix="" if arch == "t5-xl" else "Answer:"
    )
    print(
        f"\n== {arch}: {n_params / 1e6:,.1f}M parameters, {dtype}, {device} "
        f"(built in {time.perf_counter() - t0:.1f} s, not timed)"
    )
    reqs = pairwise_requests(
        tok,
        n_candidates=args.n_candidates,
        context_tokens=args.context_tokens,
        candidate_tokens=args.candidate_tokens,
        n_contexts=args.n_contexts,
    )
    n_per_context = args.n_candidates * (args.n_candidates - 1)
    n_tok = statistics.median(backend.count_tokens(r.prefix + r.prompt) for r in reqs[:50])
    print(
        f"{len(reqs)} comparisons ({args.n_contexts} contexts x {n_per_context} ordered pairs), "
        f"~{n_tok:.0f} prompt tokens each"
    )

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    # one at a time (batch 1, no sharing) on a few pairs: the same for every batch size
    baseline = reqs[: args.baseline_pairs]
    backend.batch_size, backend.batch_tokens, backend.share_prefix = 1, None, False
    backend.label_probs(baseline[:2])
    sync()
    t1 = time.perf_counter()
    backend.label_probs(baseline)
    sync()
    one_rate = len(baseline) / (time.perf_counter() - t1)
    backend.share_prefix = True

    peak = peak_tflops(device)
    rows = []
    backend.batch_tokens = args.batch_tokens
    for batch in args.batch_sizes:
        backend.batch_size = batch
        backend.label_probs(reqs[:n_per_context])  # warm-up on the first context, not timed
        sync()
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        backend.batch_size, backend.batch_tokens = batch, args.batch_tokens
        backend.stats.clear()
        t0 = time.perf_counter()
        results = backend.label_probs(reqs)
        sync()
        wall = time.perf_counter() - t0
        stats = dict(backend.stats)
        flops = estimated_flops(params, stats)
        rate = len(reqs) / wall
        row = {
            "model": arch,
            "batch": batch,
            "batch_tokens": args.batch_tokens,
            "n_params": n_params,
            "n_comparisons": len(reqs),
            "prompt_tokens": n_tok,
            "comparisons_per_s": rate,
            "wall_s": wall,
            "n_errors": sum(r.error is not None for r in results),
            "tokens_run": stats.get("n_tokens_computed", 0),
            "tokens_per_comparison": stats.get("n_tokens_computed", 0) / len(reqs),
            "tokens_padded": stats.get("n_tokens_padded", 0),
            "n_forward": stats.get("n_forward", 0),
            "n_oom_backoffs": stats.get("n_oom_backoffs", 0),
            "final_batch_size": backend.batch_size,
            "flops_per_comparison": flops / len(reqs),
            "tflops": flops / wall / 1e12,
            "share_of_peak": flops / wall / 1e12 / peak if peak else None,
            "one_at_a_time_per_s": one_rate,
            "vs_one_at_a_time": rate / one_rate,
            "peak_memory_gib": (
                torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
            ),
        }
        if args.reference:
            ref = plain_forward(
                model, arch, params, batch, int(n_tok), device, sync, args.min_seconds
            )
            row.update(
                plain_forward_per_s=ref["per_s"],
                plain_forward_tflops=ref["tflops"],
                vs_plain_forward=rate / ref["per_s"],
            )
        if args.profile:
            backend.batch_size = batch
            row["profile"] = profile_run(backend, reqs[:n_per_context], device)
        rows.append(row)
        _print_row(row, peak, device)
    del backend, model
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return rows


def _print_row(row: dict, peak, device) -> None:
    print(
        f"-- batch {row['batch']}: {row['comparisons_per_s']:.1f} comparisons/s "
        f"({row['wall_s']:.1f} s for {row['n_comparisons']}, {row['n_errors']} errors), "
        f"{row['vs_one_at_a_time']:.1f}x one at a time ({row['one_at_a_time_per_s']:.1f}/s)"
    )
    print(
        f"   tokens run {row['tokens_run']} ({row['tokens_per_comparison']:.0f} per comparison, "
        f"{row['tokens_padded']} with padding, {row['n_forward']} forward passes, "
        f"{row['n_oom_backoffs']} OOM backoffs, final batch size {row['final_batch_size']}"
        + (f", token budget {row['batch_tokens']}" if row.get("batch_tokens") else "")
        + f"); est. {row['tflops']:.2f} TFLOP/s"
        + (f" = {row['share_of_peak']:.1%} of {peak:.0f} bf16 peak" if peak else "")
    )
    if row.get("peak_memory_gib") is not None:
        print(f"   peak GPU memory {row['peak_memory_gib']:.1f} GiB")
    if "plain_forward_per_s" in row:
        print(
            f"   plain forward {row['plain_forward_per_s']:.1f} prompts/s "
            f"({row['plain_forward_tflops']:.2f} TFLOP/s): judge at {row['vs_plain_forward']:.2f}x"
        )
    prof = row.get("profile")
    if prof and "skipped" not in prof:
        print(
            f"   profile: GEMM {prof['gemm_share']:.0%}, attention {prof['attention_share']:.0%}, "
            f"other {prof['other_share']:.0%} of GPU time; GPU busy {prof['gpu_busy_share']:.0%} "
            f"of wall; top: {prof['top_kernels'][:2]}"
        )
    elif prof:
        print(f"   profile skipped: {prof['skipped']}")


def environment(torch, device, dtype, args) -> dict:
    import transformers

    cuda = device.type == "cuda"
    return {
        "card": torch.cuda.get_device_name(device) if cuda else "cpu",
        "device": str(device),
        "torch": torch.__version__,
        "cuda": torch.version.cuda if cuda else None,
        "transformers": transformers.__version__,
        "dtype": str(dtype).removeprefix("torch."),
        "peak_bf16_tflops": peak_tflops(device),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "smoke": bool(args.dry_run),
        "job": {
            "n_contexts": args.n_contexts,
            "n_candidates": args.n_candidates,
            "context_tokens": args.context_tokens,
            "candidate_tokens": args.candidate_tokens,
        },
    }


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"batch sizes must be positive integers, got {text!r}")
    return sizes


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models", default="t5-xl,llama-7b", help="comma-separated: t5-xl, llama-7b"
    )
    parser.add_argument("--n-contexts", type=int, default=100)
    add_text_sizes(parser)
    parser.add_argument(
        "--batch-sizes",
        "--batch-size",
        dest="batch_sizes",
        type=_sizes,
        default=[32],
        help="comma-separated batch sizes, each timed on the same model (e.g. 32,128)",
    )
    parser.add_argument(
        "--batch-tokens",
        type=int,
        default=None,
        help="HFBackend batch_tokens: padded tokens per pass, with the batch sizes as row caps",
    )
    parser.add_argument("--baseline-pairs", type=int, default=48)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    parser.add_argument(
        "--reference", action="store_true", help="also time a plain transformers forward"
    )
    parser.add_argument(
        "--profile", action="store_true", help="torch.profiler summary of one context (CUDA)"
    )
    parser.add_argument(
        "--matmul", type=int, default=0, metavar="N", help="time an N^3 matmul (0: skip)"
    )
    parser.add_argument(
        "--min-seconds", type=float, default=3.0, help="least time per reference measurement"
    )
    parser.add_argument("--json", type=Path, help="write every figure to this JSON file")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="tiny models and job, runs on CPU in seconds (checks the script)",
    )
    args = parser.parse_args(argv)
    if args.dry_run:
        args.n_contexts, args.n_candidates = min(args.n_contexts, 2), min(args.n_candidates, 4)
        args.context_tokens, args.candidate_tokens = 40, 10
        args.baseline_pairs = min(args.baseline_pairs, 6)
        args.min_seconds = min(args.min_seconds, 0.2)
        args.matmul = min(args.matmul, 256)
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    torch = quiet_torch()
    device = torch.device(
        ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    )
    if device.type != "cuda" and not args.dry_run:
        print("no GPU found: use --dry-run on CPU (the full sizes need a GPU)", file=sys.stderr)
        sys.exit(2)
    dtype = getattr(torch, args.dtype)
    env = environment(torch, device, dtype, args)
    print(
        f"torch {env['torch']}, transformers {env['transformers']}, device {device}"
        + (f" ({env['card']})" if device.type == "cuda" else "")
    )
    report: dict = {"env": env, "rows": []}
    for arch in [m.strip() for m in args.models.split(",") if m.strip()]:
        if arch not in ARCHS:
            raise SystemExit(f"unknown model {arch!r}; choose from {sorted(ARCHS)}")
        report["rows"] += run_arch(arch, args, device, dtype)
    if args.matmul:
        report["matmul"] = matmul_ceiling(args.matmul, device, dtype, min(args.min_seconds, 2.0))
        print(
            f"\nmatmul {args.matmul}^3 {report['matmul']['dtype']}: "
            f"{report['matmul']['tflops']:.1f} TFLOP/s"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))
        print(f"figures written to {args.json}")
    return report


if __name__ == "__main__":
    main()
