"""Pairwise-judging throughput of the transformers backend: batched + shared prefixes vs one at a time.

One context of ~400 tokens with 16 candidates of ~60 tokens, all 240 ordered pairs in the
comparative template C2 (PROMPTS.md), on the same random-weight models:

- causal (Llama architecture, ~36M parameters): one prompt at a time (batch 1, no sharing),
  batched without sharing, and batched with shared-prefix key/value caches (the runner's
  mode: prefix = passage + first candidate);
- seq2seq (T5 architecture): one at a time vs batched (sharing does not apply).

Random weights are fine for throughput. The one-at-a-time and batched-only baselines are
timed on a subset of the pairs (``--baseline-pairs``; every pair costs the same there), the
shared runner on all 240 because sharing depends on the whole set. Medians over
``--repeats``; model building is timed separately. Prints comparisons per second and the ratio
to one at a time (target: >= 5x for the shared causal runner), plus the largest difference in
label log-probabilities between the shared and the one-at-a-time results.

    .venv/bin/python benchmarks/bench_judge_throughput.py            # default sizes
    .venv/bin/python benchmarks/bench_judge_throughput.py --quick    # smaller, for a smoke run
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from judge.backends.base import LabelRequest  # noqa: E402

C2_QUESTION = "Which Summary is more coherent relative to the passage, Summary A or Summary B?"


def quiet_torch(threads: int | None = None):
    """torch with ``threads`` CPU threads (None: torch's choice), and transformers without
    progress bars and warnings, which would mix into the printed lines; returns torch. Shared
    by bench_token_logprobs.py and gpu_throughput.py."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()
    return torch


def add_text_sizes(parser) -> None:
    """The options for the size of the synthetic texts: candidates per context, tokens of a
    context and of a candidate (the same defaults in the three throughput benchmarks, so their
    figures compare)."""
    parser.add_argument("--n-candidates", type=int, default=16)
    parser.add_argument("--context-tokens", type=int, default=400)
    parser.add_argument("--candidate-tokens", type=int, default=60)


def make_texts(tokenizer, n_tokens: int, n_texts: int, random_state: int) -> list[str]:
    """Random word salad of about ``n_tokens`` tokens each (length is what matters here)."""
    from tests.judge.tiny_models import _WORDS

    rng = random.Random(random_state)
    texts = []
    for _ in range(n_texts):
        words = [rng.choice(_WORDS) for _ in range(n_tokens)]
        text = " ".join(words)
        ids = tokenizer(text, add_special_tokens=False)["input_ids"][:n_tokens]
        texts.append(tokenizer.decode(ids))
    return texts


def pairwise_requests(
    tokenizer,
    *,
    n_candidates=16,
    context_tokens=400,
    candidate_tokens=60,
    n_contexts=1,
    random_state=0,
) -> list[LabelRequest]:
    """All N(N-1) ordered pairs per context; prefix = passage + first candidate."""
    requests = []
    for c in range(n_contexts):
        (context,) = make_texts(tokenizer, context_tokens, 1, random_state + 1000 * c)
        candidates = make_texts(
            tokenizer, candidate_tokens, n_candidates, random_state + 1000 * c + 1
        )
        for i, a in enumerate(candidates):
            for j, b in enumerate(candidates):
                if i != j:
                    requests.append(
                        LabelRequest(
                            prefix=f"Passage:\n{context}\n\nSummary A: {a}",
                            prompt=f"\n\nSummary B: {b}\n\n{C2_QUESTION}",
                            decoder_prefix="Summary",
                        )
                    )
    return requests


def build_llama(
    path, *, hidden=512, layers=6, heads=8, intermediate=1408, vocab=16000, random_state=0
):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from tests.judge.tiny_models import build_tokenizer

    tok = build_tokenizer("llama")
    config = LlamaConfig(
        vocab_size=max(vocab, len(tok)),
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=4096,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(random_state)
    model = LlamaForCausalLM(config).eval()
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return sum(p.numel() for p in model.parameters())


def build_t5(path, *, d_model=512, layers=4, heads=8, d_ff=1024, vocab=16000, random_state=0):
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    from tests.judge.tiny_models import build_tokenizer

    tok = build_tokenizer("t5")
    config = T5Config(
        vocab_size=max(vocab, len(tok)),
        d_model=d_model,
        d_kv=d_model // heads,
        d_ff=d_ff,
        num_layers=layers,
        num_decoder_layers=layers,
        num_heads=heads,
        feed_forward_proj="gated-gelu",
        tie_word_embeddings=False,
        decoder_start_token_id=tok.pad_token_id,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
    )
    torch.manual_seed(random_state)
    model = T5ForConditionalGeneration(config).eval()
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return sum(p.numel() for p in model.parameters())


def time_run(backend, requests, *, batch_size, share, repeats):
    """Median wall and process-CPU seconds over ``repeats`` runs, last results, tokens run.

    CPU time is reported beside wall time because this machine is shared: with one torch
    thread, CPU seconds measure the work done even when other jobs take the cores.
    """
    walls, cpus = [], []
    results = None
    for _ in range(repeats):
        backend.batch_size, backend.share_prefix = batch_size, share
        backend.stats.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        results = backend.label_probs(requests)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return (
        statistics.median(walls),
        statistics.median(cpus),
        results,
        backend.stats["n_tokens_computed"],
    )


def max_logprob_diff(a, b) -> float:
    return max(
        abs(ra.logprobs[k] - rb.logprobs[k])
        for ra, rb in zip(a, b, strict=True)
        for k in ra.logprobs
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_text_sizes(parser)
    parser.add_argument(
        "--baseline-pairs",
        type=int,
        default=32,
        help="pairs timed for the one-at-a-time and batched-only baselines",
    )
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-seq2seq", action="store_true")
    parser.add_argument("--quick", action="store_true", help="smaller model and prompts")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads (default: torch's choice); 1 is steadier on a busy machine",
    )
    args = parser.parse_args(argv)

    torch = quiet_torch(args.threads)
    from judge.backends.hf import HFBackend

    llama_size = dict(hidden=256, layers=2, intermediate=704) if args.quick else {}
    t5_size = dict(d_model=256, layers=2, d_ff=512) if args.quick else {}
    if args.quick:
        args.context_tokens, args.candidate_tokens = 150, 25
        args.n_candidates, args.repeats = min(args.n_candidates, 8), 1
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        n_params = build_llama(Path(tmp) / "llama", **llama_size)
        llama = HFBackend(str(Path(tmp) / "llama"), answer_prefix="Answer:")
        build_s = time.perf_counter() - t0
        print(
            f"torch {torch.__version__}, {torch.get_num_threads()} threads; causal model "
            f"{n_params / 1e6:.1f}M parameters (built + loaded in {build_s:.1f} s, not timed)"
        )
        reqs = pairwise_requests(
            llama.tokenizer,
            n_candidates=args.n_candidates,
            context_tokens=args.context_tokens,
            candidate_tokens=args.candidate_tokens,
        )
        n_tok = [llama.count_tokens(r.prefix + r.prompt) for r in reqs]
        print(
            f"{len(reqs)} ordered pairs, prompt tokens median {statistics.median(n_tok):.0f} "
            f"(chat template + 'Answer:' add a few)"
        )
        subset = reqs[: args.baseline_pairs]
        # warm-up: first calls allocate
        llama.label_probs(subset[:2])

        one_s, one_c, one_res, one_tok = time_run(
            llama, subset, batch_size=1, share=False, repeats=args.repeats
        )
        bat_s, bat_c, _, bat_tok = time_run(
            llama, subset, batch_size=args.batch_size, share=False, repeats=args.repeats
        )
        sh_s, sh_c, sh_res, sh_tok = time_run(
            llama, reqs, batch_size=args.batch_size, share=True, repeats=args.repeats
        )
        rows += [
            ("causal", "one at a time", len(subset), one_s, one_c, one_tok),
            ("causal", f"batched {args.batch_size}", len(subset), bat_s, bat_c, bat_tok),
            ("causal", f"batched {args.batch_size} + shared prefix", len(reqs), sh_s, sh_c, sh_tok),
        ]
        diff = max_logprob_diff(sh_res[: len(subset)], one_res)
        print(f"shared-prefix stats: {dict(llama.stats)}")
        del llama

        if not args.skip_seq2seq:
            t0 = time.perf_counter()
            n_params = build_t5(Path(tmp) / "t5", **t5_size)
            t5 = HFBackend(str(Path(tmp) / "t5"))
            print(
                f"seq2seq model {n_params / 1e6:.1f}M parameters "
                f"(built + loaded in {time.perf_counter() - t0:.1f} s, not timed)"
            )
            t5.label_probs(subset[:2])
            s_one, s_one_c, _, s_one_tok = time_run(
                t5, subset, batch_size=1, share=False, repeats=args.repeats
            )
            s_bat, s_bat_c, _, s_bat_tok = time_run(
                t5, subset, batch_size=args.batch_size, share=False, repeats=args.repeats
            )
            rows += [
                ("seq2seq", "one at a time", len(subset), s_one, s_one_c, s_one_tok),
                ("seq2seq", f"batched {args.batch_size}", len(subset), s_bat, s_bat_c, s_bat_tok),
            ]

    print()
    print(
        f"{'model':8} {'method':34} {'pairs':>5} {'wall s':>7} {'cpu s':>7} {'pairs/s':>8} "
        f"{'pairs/cpu-s':>11} {'tokens run':>10} {'ratio wall':>10} {'ratio cpu':>9}"
    )
    base = {}
    for kind, method, n, wall, cpu, tokens in rows:
        base.setdefault(kind, (n / wall, n / cpu))
        print(
            f"{kind:8} {method:34} {n:5d} {wall:7.2f} {cpu:7.2f} {n / wall:8.2f} "
            f"{n / cpu:11.2f} {tokens:10d} {n / wall / base[kind][0]:9.1f}x "
            f"{n / cpu / base[kind][1]:8.1f}x"
        )
    print(f"\nlargest |logprob(shared) - logprob(one at a time)| = {diff:.2e}")


if __name__ == "__main__":
    main()
