"""``python -m judge batch ...``: batch runs from the command line.

Examples::

    python -m judge batch submit --benchmark summeval --attribute coherence \\
        --template liusie-c2 --model gpt-4o-mini --wait
    python -m judge batch write ... --out batch.jsonl       # run it elsewhere (vLLM run_batch)
    python -m judge batch import jsb-0123abcd results.jsonl [--errors errors.jsonl]
    python -m judge batch poll jsb-0123abcd --wait          # progress, then import
    python -m judge batch list

``write`` and ``submit`` take the options of ``run``; ``poll`` and ``import`` find the batch
(its model, endpoint and calls) in the run store (``--store``). The API key is read from
``OPENAI_API_KEY``, never from the command line, and never written to the JSONL or store.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from judge.cli.options import (
    BadInput,
    backend_of,
    dataset_of,
    run_options,
    template_of,
)


def add_parser(sub, common) -> None:
    """The ``batch`` subcommand and its own subcommands."""
    batch = sub.add_parser("batch", help="batch runs: write / submit / poll / import / list")
    how = batch.add_subparsers(dest="batch_command", required=True)
    store = __import__("argparse").ArgumentParser(add_help=False)
    store.add_argument("--store", help="run-store file (default: $JUDGESCOPE_CACHE/runs.sqlite)")
    wait = __import__("argparse").ArgumentParser(add_help=False)
    wait.add_argument("--wait", action="store_true", help="poll until the batch ends, import")
    wait.add_argument("--interval", type=float, default=10.0, help="seconds between polls")
    w = how.add_parser("write", parents=[common], help="write the pending calls as batch JSONL")
    w.add_argument("--out", required=True, help="the JSONL file to write")
    how.add_parser("submit", parents=[common, wait], help="write, upload and create the batch")
    p = how.add_parser("poll", parents=[store, wait], help="status and request counts")
    p.add_argument("batch_id")
    i = how.add_parser("import", parents=[store], help="import an output file run elsewhere")
    i.add_argument("batch_id")
    i.add_argument("output", help="the output JSONL")
    i.add_argument("--errors", help="the error JSONL, if there is one")
    how.add_parser("list", parents=[store], help="the batches recorded in the run store")


def _plan(args):
    from judge.runs.plan import plan_absolute, plan_pairwise

    if args.backend != "openai":
        raise BadInput("batch runs need --backend openai (an OpenAI-compatible endpoint)")
    dataset, template = dataset_of(args), template_of(args)
    backend = backend_of(args, template)
    plan_of = plan_pairwise if template.kind == "comparative" else plan_absolute
    return plan_of(dataset, backend=backend, **run_options(args, template)), backend


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _written(w) -> str:
    return (
        f"{w.n_calls:,} model calls: {w.n_cached:,} answered in the store, "
        f"{w.n_in_open_batches:,} in an open batch, {w.n_lines:,} in this batch"
        + (f", {w.n_left:,} left for the next batch (size limits)" if w.n_left else "")
    )


def _imported(res) -> str:
    reasons = ", ".join(f"{c} {n:,}" for c, n in res.failures.items())
    lines = [
        f"imported batch {res.batch_id}: {res.n_answered:,} answers, "
        f"{res.n_answer_errors:,} answer errors, {res.n_failed:,} failed"
        + (f" ({reasons})" if reasons else "")
        + f", {res.n_not_run + res.n_missing:,} not run; {res.n_pending:,} pending for the "
        f"next batch or run; tokens {res.n_prompt_tokens:,} in, {res.n_completion_tokens:,} out"
    ]
    lines += [f"problem: {p}" for p in res.problems[:20]]
    if len(res.problems) > 20:
        lines.append(f"... and {len(res.problems) - 20} more problems")
    return "\n".join(lines)


def _record_backend(rec):
    from judge.backends.openai_compat import OpenAIBackend

    return OpenAIBackend(rec.model, base_url=rec.base_url)


def _progress(rec) -> str:
    c = rec.counts or {}
    done = c.get("completed", 0) + c.get("failed", 0)
    return (
        f"batch {rec.batch_id} ({rec.remote_id or 'not submitted'}): {rec.status}, "
        f"{done:,} of {c.get('total', 0) or rec.n_requests:,} requests done, "
        f"{c.get('failed', 0):,} failed" + (f"; {rec.message}" if rec.message else "")
    )


def _poll(batch_id: str, store, backend, args) -> int:
    from judge.batch import collect_batch, poll_batch

    while True:
        rec = poll_batch(batch_id, backend, store)
        _say(_progress(rec))
        if not rec.is_open:
            return 0
        if rec.status in ("completed", "failed", "expired", "cancelled"):
            _say(_imported(collect_batch(batch_id, backend, store)))
            return 0
        if not args.wait:
            return 0
        time.sleep(max(0.05, args.interval))


def run(args) -> int:
    """Carry out ``python -m judge batch ...``; the exit code."""
    from judge.batch import import_batch, list_batches, load_batch, submit_batch, write_batch
    from judge.store import open_store

    cmd = args.batch_command
    with open_store(args.store) as store:
        if cmd in ("write", "submit"):
            if args.no_store:
                raise BadInput("batch runs need a run store (drop --no-store)")
            if cmd == "write" and not Path(args.out).parent.exists():
                raise BadInput(f"--out {args.out}: folder {Path(args.out).parent} does not exist")
            plan, backend = _plan(args)
            written = write_batch(plan, backend, store)
            _say(_written(written))
            if written.record is None:
                _say("nothing to do: every call is answered or in an open batch")
                return 0
            if cmd == "write":
                Path(args.out).write_text(written.jsonl, encoding="utf-8")
                _say(
                    f"wrote {args.out} (batch {written.record.batch_id}); run it, then: "
                    f"python -m judge batch import {written.record.batch_id} <output.jsonl>"
                )
                print(written.record.batch_id)
                return 0
            rec = submit_batch(written, backend, store)
            print(rec.batch_id)
            _say(_progress(rec))
            return _poll(rec.batch_id, store, backend, args) if args.wait else 0
        if cmd == "poll":
            rec = load_batch(store, args.batch_id)
            return _poll(rec.batch_id, store, _record_backend(rec), args)
        if cmd == "import":
            files = [("output", Path(args.output).read_text(encoding="utf-8"))]
            if args.errors:
                files.append(("errors", Path(args.errors).read_text(encoding="utf-8")))
            _say(_imported(import_batch(args.batch_id, store, files)))
            return 0
        for rec in list_batches(store):
            print(_progress(rec) + ("" if rec.is_open else " [closed]"))
        return 0


__all__ = ["add_parser", "run"]
