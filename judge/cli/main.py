"""``python -m judge run ...`` and ``estimate ...``: the parser of every command, the two
commands and the entry point (see :mod:`judge.cli`)."""

from __future__ import annotations

import argparse
import json
import signal
import sqlite3
import sys
import threading
import warnings
from pathlib import Path

from judge.cli import batch as batch_cli
from judge.cli.options import (
    BadInput,
    backend_of,
    common_options,
    contexts_of,
    dataset_of,
    decoding_of,
    mode_of,
    run_options,
    template_of,
)

EXIT_BAD_INPUT = 2
#: The ``--help`` description.
DESCRIPTION = (
    "Command line: ``python -m judge run ...``, ``estimate ...`` and ``batch ...`` (batch runs: "
    ":mod:`judge.cli.batch`)."
)


def _parser() -> argparse.ArgumentParser:
    common = common_options()
    parser = argparse.ArgumentParser(prog="python -m judge", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", parents=[common], help="judge a dataset and write the table")
    run.add_argument(
        "--out", required=True, help="output table (.csv, .tsv, .json, .jsonl, .parquet)"
    )
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    est = sub.add_parser("estimate", parents=[common], help="calls, tokens and price of a run")
    est.add_argument(
        "--prices",
        help="price table (CSV/JSON; default JUDGESCOPE_PRICES or judge/runs/prices.csv)",
    )
    est.add_argument("--json", action="store_true", help="print the estimate as JSON")
    batch_cli.add_parser(sub, common)
    return parser


# ---------------------------------------------------------------------------------------
def _store(args):
    if args.no_store:
        return False
    return args.store  # None -> default path


def _cmd_estimate(args) -> int:
    from judge.runs.estimate import estimate

    dataset = dataset_of(args)
    template = template_of(args)
    backend = args.model if args.backend == "openai" else backend_of(args, template)
    est = estimate(
        dataset,
        args.attribute,
        template,
        backend,
        args.selection,
        args.budget,
        args.samples,
        mode=mode_of(args, template),
        decoding=decoding_of(args),
        random_state=args.random_state,
        contexts=contexts_of(args.contexts),
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
    from judge.runs.runners import run_absolute, run_pairwise

    out = Path(args.out)
    if not out.parent.exists():
        raise BadInput(f"--out {out}: folder {out.parent} does not exist")
    dataset = dataset_of(args)
    template = template_of(args)
    backend = backend_of(args, template)
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

    options = run_options(args, template)
    run = run_pairwise if template.kind == "comparative" else run_absolute
    try:
        result = run(
            dataset,
            backend=backend,
            store=_store(args),
            progress=progress,
            cancel=threading.Event(),
            **options,
        )
    finally:
        for bar in bars:
            bar.close()
    write_table(result.table, out)
    print(_summary(result, out), file=sys.stderr)
    return 0


def _summary(result, out: Path) -> str:
    """The closing lines of ``run``: notes and warnings, what was written, where the answers
    came from, failures (``result``: a :class:`judge.runs.runners.RunResult`)."""
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
            return batch_cli.run(args)
        return _cmd_run(args)
    except (BadInput, DataError, BackendError, ValueError, FileNotFoundError, KeyError) as exc:
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
