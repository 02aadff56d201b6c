"""The options ``run``, ``estimate`` and ``batch write|submit`` share, and what they name.

:func:`common_options` is the parent parser of those commands (data, template, backend,
judging, store); :func:`dataset_of`, :func:`template_of`, :func:`backend_of`,
:func:`decoding_of`, :func:`mode_of` and :func:`contexts_of` turn the parsed options into the
dataset, template, backend, decoding settings, mode and contexts of a run;
:func:`run_options` gathers what a run or its plan takes from them. A
:class:`BadInput` is a one-line error for the user (exit code 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path


class BadInput(Exception):
    """A one-line error for the user (exit code 2)."""


def common_options() -> argparse.ArgumentParser:
    """The parent parser (``add_help=False``) of every command that plans a run."""
    common = argparse.ArgumentParser(add_help=False)
    src = common.add_argument_group("data")
    which = src.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--benchmark",
        help="built-in benchmark name (see data.list_benchmarks()), or demo: the offline demo",
    )
    which.add_argument("--dataset", help="folder written by data.io.save_dataset")
    src.add_argument("--data-dir", help="benchmark data folder (default: JUDGESCOPE_DATA)")
    src.add_argument("--attribute", required=True, help="attribute to judge, e.g. coherence")
    src.add_argument(
        "--contexts", help="a number N (the first N contexts) or comma-separated context ids"
    )
    src.add_argument(
        "--domain", help="summary, dialogue, data-to-text or story (adjective/noun wording)"
    )

    tpl = common.add_argument_group("template")
    tpl.add_argument(
        "--template", required=True, help="template id, e.g. liusie-c2, chiang-lee-story"
    )
    tpl.add_argument("--templates-file", help="YAML/JSON file with user templates")

    be = common.add_argument_group("backend")
    be.add_argument("--backend", choices=("openai", "hf"), default="openai")
    be.add_argument("--model", required=True, help="model name (API) or hub id / folder (hf)")
    be.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    be.add_argument("--concurrency", type=int, default=8, help="requests in flight (openai)")
    be.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help=(
            "seconds per request (openai). Set it above the server's longest reply time: a "
            "request that times out is sent again, and the server usually still generates "
            "(and bills) the first one, so each timed-out call is paid for twice or more"
        ),
    )
    be.add_argument("--max-retries", type=int, default=6, help="retries per request (openai)")
    be.add_argument(
        "--logprobs",
        choices=("auto", "yes", "no"),
        default="auto",
        help="ask an API for token probabilities (auto: probe the server)",
    )
    be.add_argument("--device", default="auto", help="hf: cpu, cuda, cuda:1, ...")
    be.add_argument("--dtype", default="auto", help="hf: auto, float32, bfloat16, float16")
    be.add_argument("--batch-size", type=int, default=16, help="hf: largest batch")

    how = common.add_argument_group("judging")
    how.add_argument(
        "--mode",
        choices=("auto", "probs", "samples", "expected"),
        default="auto",
        help="auto: pairwise probs (samples when --samples is given), absolute samples",
    )
    how.add_argument(
        "--selection", default="all", choices=("all", "random", "no-repeat", "symmetric")
    )
    how.add_argument("--budget", type=int, help="comparisons per context (not for 'all')")
    how.add_argument("--random-state", type=int, default=0)
    how.add_argument("--samples", type=int, help="answers sampled per prompt")
    how.add_argument("--temperature", type=float, default=1.0)
    how.add_argument("--top-p", type=float, default=1.0)
    how.add_argument(
        "--max-tokens", type=int, default=64, help="most new tokens per sampled answer"
    )
    how.add_argument("--seed", type=int, default=0)
    how.add_argument("--parse-rule", default="chiang_lee", help="Likert parsing rule (absolute)")

    st = common.add_argument_group("store")
    st.add_argument("--store", help="run-store file (default: $JUDGESCOPE_CACHE/runs.sqlite)")
    st.add_argument("--no-store", action="store_true", help="keep answers in memory only")
    return common


def dataset_of(args):
    """The dataset named by ``--benchmark`` (``demo``: the offline demo) or ``--dataset``."""
    if args.benchmark == "demo":  # the one dataset every user has, offline
        from data import demo_dataset

        return demo_dataset()
    if args.benchmark:
        from data import load_benchmark

        return load_benchmark(args.benchmark, data_dir=args.data_dir)
    folder = Path(args.dataset)
    if not folder.is_dir():
        raise BadInput(f"--dataset {folder}: no such folder")
    from data.io import load_dataset

    return load_dataset(folder)


def template_of(args):
    """The template ``--template`` names, from the built-in library or ``--templates-file``."""
    from judge.templates import builtin_templates

    library = dict(builtin_templates())
    if args.templates_file:
        from judge.templates import load_templates

        path = Path(args.templates_file)
        if not path.is_file():
            raise BadInput(f"--templates-file {path}: no such file")
        fmt = "json" if path.suffix.lower() == ".json" else "yaml"
        loaded = load_templates(path, fmt=fmt)
        loaded = loaded.values() if isinstance(loaded, dict) else loaded
        library.update({t.id: t for t in loaded})
    if args.template not in library:
        import difflib

        close = difflib.get_close_matches(args.template, list(library), n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise BadInput(
            f"unknown template {args.template!r}{hint} (known: {', '.join(sorted(library))})"
        )
    return library[args.template]


def contexts_of(value):
    """``--contexts``: None (all), a number N (the first N) or a list of context ids."""
    if not value:
        return None
    if value.isdigit():
        return int(value)
    return [c.strip() for c in value.split(",") if c.strip()]


def mode_of(args, template) -> str:
    """``--mode``, with ``auto`` resolved for the template's kind."""
    if args.mode != "auto":
        return args.mode
    if template.kind == "comparative":
        return "samples" if args.samples else "probs"
    return "samples"


def backend_of(args, template):
    """The backend ``--backend`` and ``--model`` name, with its options."""
    if args.backend == "openai":
        from judge.backends.openai_compat import OpenAIBackend

        logprobs = {"auto": "auto", "yes": True, "no": False}[args.logprobs]
        return OpenAIBackend(
            args.model,
            base_url=args.base_url,
            max_concurrency=args.concurrency,
            timeout=args.timeout,
            max_retries=args.max_retries,
            logprobs=logprobs,
        )
    from judge.backends.hf import HFBackend

    return HFBackend(
        args.model,
        device=args.device,
        dtype=args.dtype,
        batch_size=args.batch_size,
        answer_prefix=getattr(template, "answer_prefix", "") or "",
    )


def run_options(args, template) -> dict:
    """The keyword arguments of a run or of its plan (:mod:`judge.runs`) that the options
    name, the backend, store and progress aside: for a comparative template the pairwise ones
    (selection, budget, random state; K = 5 answers unless ``--samples``), else the absolute
    ones (K = 3 unless ``--samples``; the parse rule)."""
    options = dict(
        attribute=args.attribute,
        template=template,
        mode=mode_of(args, template),
        decoding=decoding_of(args),
        contexts=contexts_of(args.contexts),
        domain=args.domain,
    )
    if template.kind == "comparative":
        options.update(
            selection=args.selection,
            budget=args.budget,
            random_state=args.random_state,
            n_samples=args.samples or 5,
        )
    else:
        options.update(n_samples=args.samples or 3, parse_rule=args.parse_rule)
    return options


def decoding_of(args):
    """The decoding settings (temperature, top-p, new tokens, seed)."""
    from judge.backends.base import Decoding

    return Decoding(
        temperature=args.temperature,
        top_p=args.top_p,
        max_new_tokens=args.max_tokens,
        seed=args.seed,
    )
