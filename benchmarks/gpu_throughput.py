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

    .venv/bin/python benchmarks/gpu_throughput.py                  # on a GPU machine
    .venv/bin/python benchmarks/gpu_throughput.py --dry-run        # tiny sizes, CPU, seconds
"""

from __future__ import annotations

import argparse
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


def run_arch(arch, args, device, dtype) -> None:
    import torch

    from judge.backends.hf import HFBackend

    size = (DRY_ARCHS if args.dry_run else ARCHS)[arch]
    t0 = time.perf_counter()
    model, tok = build(arch, size, device, dtype)
    n_params = sum(p.numel() for p in model.parameters())
    backend = HFBackend.from_model(
        model,
        tok,
        name=arch,
        batch_size=args.batch_size,
        answer_prefix="" if arch == "t5-xl" else "Answer:",
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
    n_tok = [backend.count_tokens(r.prefix + r.prompt) for r in reqs[:50]]
    print(
        f"{len(reqs)} comparisons ({args.n_contexts} contexts x "
        f"{args.n_candidates * (args.n_candidates - 1)} ordered pairs), "
        f"~{statistics.median(n_tok):.0f} prompt tokens each, batch size {args.batch_size}"
    )

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    # warm-up (allocator, kernels) on the first context, not timed
    n_per_context = args.n_candidates * (args.n_candidates - 1)
    backend.label_probs(reqs[:n_per_context])
    sync()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    backend.stats.clear()
    t0 = time.perf_counter()
    results = backend.label_probs(reqs)
    sync()
    wall = time.perf_counter() - t0
    stats = dict(backend.stats)
    final_batch_size = backend.batch_size
    n_errors = sum(r.error is not None for r in results)

    baseline = reqs[: args.baseline_pairs]
    backend.batch_size, backend.share_prefix = 1, False
    t1 = time.perf_counter()
    backend.label_probs(baseline)
    sync()
    one_rate = len(baseline) / (time.perf_counter() - t1)

    flops = estimated_flops(flop_params(model, arch), stats)
    achieved = flops / wall / 1e12
    peak = peak_tflops(device)
    print(
        f"comparisons/s      {len(reqs) / wall:10.1f}   ({wall:.1f} s for {len(reqs)}, "
        f"{n_errors} errors)"
    )
    print(
        f"one at a time      {one_rate:10.1f}   (batch 1, no sharing, {len(baseline)} pairs) "
        f"-> ratio {len(reqs) / wall / one_rate:.1f}x"
    )
    print(
        f"tokens run         {stats.get('n_tokens_computed', 0):10d}   "
        f"(forward passes {stats.get('n_forward', 0)}, OOM backoffs "
        f"{stats.get('n_oom_backoffs', 0)}, final batch size {final_batch_size})"
    )
    print(
        f"estimated TFLOP/s  {achieved:10.2f}   "
        + (
            f"= {achieved / peak:.1%} of {peak:.0f} TFLOP/s bf16 peak ({torch.cuda.get_device_name(device)})"
            if peak
            else "(no peak figure for this device)"
        )
    )
    if device.type == "cuda":
        print(f"peak GPU memory    {torch.cuda.max_memory_allocated(device) / 2**30:10.1f} GiB")
    del backend, model
    if device.type == "cuda":
        torch.cuda.empty_cache()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models", default="t5-xl,llama-7b", help="comma-separated: t5-xl, llama-7b"
    )
    parser.add_argument("--n-contexts", type=int, default=100)
    add_text_sizes(parser)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--baseline-pairs", type=int, default=48)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="tiny models and job, runs on CPU in seconds (checks the script)",
    )
    args = parser.parse_args(argv)

    torch = quiet_torch()
    if args.dry_run:
        args.n_contexts, args.n_candidates = min(args.n_contexts, 2), min(args.n_candidates, 4)
        args.context_tokens, args.candidate_tokens = 40, 10
        args.baseline_pairs = min(args.baseline_pairs, 6)
    device = torch.device(
        ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    )
    if device.type != "cuda" and not args.dry_run:
        print("no GPU found: use --dry-run on CPU (the full sizes need a GPU)", file=sys.stderr)
        sys.exit(2)
    dtype = getattr(torch, args.dtype)
    print(
        f"torch {torch.__version__}, device {device}"
        + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else "")
    )
    for arch in [m.strip() for m in args.models.split(",") if m.strip()]:
        if arch not in ARCHS:
            raise SystemExit(f"unknown model {arch!r}; choose from {sorted(ARCHS)}")
        run_arch(arch, args, device, dtype)


if __name__ == "__main__":
    main()
