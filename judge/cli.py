"""Command line: ``python -m judge run ...``, ``estimate ...`` and ``batch ...`` (batch runs:
:mod:`judge.batch.cli`).

Examples::

    python -m judge estimate --benchmark summeval --attribute coherence --template liusie-c2 \\
        --model gpt-4o-mini --selection no-repeat --budget 40
    python -m judge run --benchmark summeval --attribute coherence --template liusie-c2 \\
        --backend openai --model gpt-4o-mini --selection no-repeat --budget 40 --samples 5 \\
        --out comparisons.csv
    python -m judge run --dataset my_data/ --attribute fluency --template liusie-c1 \\
        --backend hf --model google/flan-t5-large --out comparisons.parquet

The options are those of the app's run page. Answers go to the run store (``--store``,
default ``$JUDGESCOPE_CACHE/runs.sqlite``), so an interrupted run resumes where it stopped
when the same command is given again. A request that fails (after the backend's retries) does
not stop the run: it is counted in the summary, kept in the store with its reason and asked
again by the next run. Two runs on one store share the work: calls one of them is making are
waited for, never asked twice. Ctrl-C or SIGTERM stop sending, store the answers in flight
and exit with code 130. Bad input (unknown template, a field the data cannot
fill, an endpoint that does not answer, an unknown model) is one line on stderr and exit
code 2, before any model call. The API key is read from ``OPENAI_API_KEY`` (or Streamlit
secrets), never from the command line.
"""

from __future__ import annotations

import argparse
import json
import signal
import sqlite3
import sys
import threading
import warnings
from pathlib import Path

EXIT_BAD_INPUT = 2


class _Fail(Exception):
    """A one-line error for the user (exit code 2)."""


def _parser() -> argparse.ArgumentParser:
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
    be.add_argument("--timeout", type=float, default=60.0, help="seconds per request (openai)")
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

    parser = argparse.ArgumentParser(prog="python -m judge", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", parents=[common], help="judge a dataset and write the table")
    run.add_argument(
        "--out", required=True, help="output table (.csv, .tsv, .json, .jsonl, .parquet)"
    )
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    est = sub.add_parser("estimate", parents=[common], help="calls, tokens and price of a run")
    est.add_argument(
        "--prices", help="price table (CSV/JSON; default JUDGESCOPE_PRICES or judge/prices.csv)"
    )
    est.add_argument("--json", action="store_true", help="print the estimate as JSON")
    from judge.batch import cli as batch_cli

    batch_cli.add_parser(sub, common)
    return parser


# ---------------------------------------------------------------------------------------
def _dataset(args):
    if args.benchmark == "demo":  # the one dataset every user has, offline
        from data import demo_dataset

        return demo_dataset()
    if args.benchmark:
        from data import load_benchmark

        return load_benchmark(args.benchmark, data_dir=args.data_dir)
    folder = Path(args.dataset)
    if not folder.is_dir():
        raise _Fail(f"--dataset {folder}: no such folder")
    from data.io import load_dataset

    return load_dataset(folder)


def _template(args):
    from judge.templates import builtin_templates

    library = dict(builtin_templates())
    if args.templates_file:
        from judge.templates import load_templates

        path = Path(args.templates_file)
        if not path.is_file():
            raise _Fail(f"--templates-file {path}: no such file")
        fmt = "json" if path.suffix.lower() == ".json" else "yaml"
        loaded = load_templates(path, fmt=fmt)
        loaded = loaded.values() if isinstance(loaded, dict) else loaded
        library.update({t.id: t for t in loaded})
    if args.template not in library:
        import difflib

        close = difflib.get_close_matches(args.template, list(library), n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise _Fail(
            f"unknown template {args.template!r}{hint} (known: {', '.join(sorted(library))})"
        )
    return library[args.template]


def _contexts(value):
    if not value:
        return None
    if value.isdigit():
        return int(value)
    return [c.strip() for c in value.split(",") if c.strip()]


def _mode(args, template) -> str:
    if args.mode != "auto":
        return args.mode
    if template.kind == "comparative":
        return "samples" if args.samples else "probs"
    return "samples"


def _backend(args, template):
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


def _decoding(args):
    from judge.backends.base import Decoding

    return Decoding(
        temperature=args.temperature,
        top_p=args.top_p,
        max_new_tokens=args.max_tokens,
        seed=args.seed,
    )


def _store(args):
    if args.no_store:
        return False
    return args.store  # None -> default path


def _cmd_estimate(args) -> int:
    from judge.estimate import estimate

    dataset = _dataset(args)
    template = _template(args)
    backend = args.model if args.backend == "openai" else _backend(args, template)
    est = estimate(
        dataset,
        args.attribute,
        template,
        backend,
        args.selection,
        args.budget,
        args.samples,
        mode=_mode(args, template),
        decoding=_decoding(args),
        random_state=args.random_state,
        contexts=_contexts(args.contexts),
        domain=args.domain,
        parse_rule=args.parse_rule,
        store=_store(args),
        prices=args.prices,
        base_url=args.base_url,
    )
    if args.json:
        from dataclasses import asdict

        print(json.dumps(asdict(est), indent=2))
        return 0
    price = "unknown" if est.price_usd is None else f"${est.price_usd:,.4f}"
    print(f"model            {est.model} ({est.mode})")
    print(
        f"model calls      {est.n_prompts:,} ({est.n_cached:,} already in the store, {est.n_to_run:,} to run)"
    )
    print(f"prompt tokens    {est.prompt_tokens:,}")
    print(f"output tokens    {est.output_tokens:,}")
    print(f"price            {price}  [{est.note}]")
    return 0


def _cmd_run(args) -> int:
    from tqdm import tqdm

    from data.io import write_table
    from judge.runners import run_absolute, run_pairwise

    out = Path(args.out)
    if not out.parent.exists():
        raise _Fail(f"--out {out}: folder {out.parent} does not exist")
    dataset = _dataset(args)
    template = _template(args)
    mode = _mode(args, template)
    backend = _backend(args, template)
    bars: list = []  # made on the first report, i.e. once the checks have passed

    def progress(n_done: int, n_total: int) -> None:
        if not bars:
            bars.append(
                tqdm(
                    total=n_total,
                    unit="call",
                    disable=args.quiet,
                    file=sys.stderr,
                    dynamic_ncols=True,
                )
            )
        bar = bars[0]
        if bar.total != n_total:
            bar.total = n_total
        bar.update(n_done - bar.n)

    common = dict(
        attribute=args.attribute,
        template=template,
        backend=backend,
        decoding=_decoding(args),
        store=_store(args),
        progress=progress,
        cancel=threading.Event(),
        contexts=_contexts(args.contexts),
        domain=args.domain,
    )
    try:
        if template.kind == "comparative":
            result = run_pairwise(
                dataset,
                selection=args.selection,
                budget=args.budget,
                random_state=args.random_state,
                mode=mode,
                n_samples=args.samples or 5,
                **common,
            )
        else:
            result = run_absolute(
                dataset,
                mode=mode,
                n_samples=args.samples or 3,
                parse_rule=args.parse_rule,
                **common,
            )
    finally:
        for bar in bars:
            bar.close()
    write_table(result.table, out)
    print(_summary(result, out), file=sys.stderr)
    return 0


def _summary(result, out: Path) -> str:
    """The closing lines of ``run``: notes and warnings, what was written, where the answers
    came from, failures (``result``: a :class:`judge.runners.RunResult`)."""
    value = "p_first" if result.kind == "pairwise" else "score"
    bad = int(result.table[value].isna().sum())
    others = result.n_by_others
    by_others = f", {others:,} answered by another run on this store" if others else ""
    lines = [f"note: {n}" for n in result.notes] + [f"warning: {w}" for w in result.warnings]
    lines.append(
        f"wrote {result.n_rows:,} rows to {out} ({result.n_calls:,} model calls: "
        f"{result.n_cached:,} from the store, {result.n_called:,} new{by_others}; "
        f"{bad:,} rows without a usable answer; judge {result.judge!r})"
    )
    if result.n_failed:
        reasons = ", ".join(f"{code} {n:,}" for code, n in result.failures.items())
        lines.append(
            f"{result.n_failed:,} model call(s) failed ({reasons}); their rows have no score "
            "and the reason in 'raw'; run the same command again to ask them again"
        )
    return "\n".join(lines)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that answers in flight are stored first."""


def _on_sigterm(signum, frame):
    raise _Terminated()


def main(argv=None) -> int:
    """Entry point; returns the exit code (2 for bad input, with a one-line message)."""
    from data.schema import DataError
    from judge.backends.base import BackendError

    parser = _parser()
    args = parser.parse_args(argv)
    warnings.formatwarning = lambda msg, cat, *a, **k: f"warning: {msg}\n"  # libraries' ones
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if args.command == "estimate":
            return _cmd_estimate(args)
        if args.command == "batch":
            from judge.batch import cli as batch_cli

            return batch_cli.run(args)
        return _cmd_run(args)
    except (_Fail, DataError, BackendError, ValueError, FileNotFoundError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        message = " ".join(str(message).split())  # one line
        print(f"{parser.prog} {args.command}: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except sqlite3.Error as exc:
        where = "--store " + args.store if args.store else "the run store"
        message = " ".join(str(exc).split())
        print(f"{parser.prog} {args.command}: error: {where}: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as exc:
        what = "terminated" if isinstance(exc, _Terminated) else "interrupted"
        print(
            f"{parser.prog} {args.command}: {what}; every answer received is in the store, "
            "run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
