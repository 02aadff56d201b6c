"""The run tab's batch mode: the run's pending calls as one batch job (OpenAI Batch API), or
as a JSONL file to run elsewhere (vLLM's batch runner) and upload back; progress from the
endpoint's request counts; the answers imported into the run store and added to the dataset
like a live run's. The work is :mod:`judge.batch`; this module draws it."""

from __future__ import annotations

import streamlit as st

from data.schema import DataError, Dataset
from judge import batch as jb
from judge.backends.base import BackendError
from judge.runs.plan import plan_absolute, plan_pairwise
from judge.store import RunStore, default_store_path
from pages.judge import LAST, PAGE, RAW_GEN
from pages.services import judge as svc
from pages.services.judge_outputs import merge_outputs
from pages.shell import state, ui

KEY = f"{PAGE}.batch"
FILE = f"{KEY}.file"  # (batch id, JSONL) of the last file written, for the download button
TERMINAL = ("completed", "failed", "expired", "cancelled")


def _plan(ds: Dataset, settings, template, backend):
    kw = svc._run_kwargs(ds, settings)
    if settings.kind == "pairwise":
        return plan_pairwise(ds, template=template, backend=backend, **kw)
    return plan_absolute(ds, template=template, backend=backend, **kw)


def render(ds: Dataset, name: str, settings, template, chosen) -> None:
    """The batch controls for the settings chosen above (an OpenAI-compatible endpoint)."""
    if chosen.kind != "openai":
        st.info(
            "Batch runs go through an OpenAI-compatible endpoint (the OpenAI Batch API, or "
            "a JSONL file for vLLM's batch runner); choose that backend on the left."
        )
        return
    plan = backend = None
    with ui.guard("Planning the batch"):
        backend = svc.make_backend(settings, chosen.api_key)
        plan = _plan(ds, settings, template, backend)
    if plan is None:
        return
    with RunStore(default_store_path()) as store:
        counts = jb.pending_count(plan, store)
        m = st.columns(4)
        for col, (label, key, help_) in zip(
            m,
            [
                ("Model calls", "n_calls", "distinct calls the run needs"),
                ("Answered", "n_answered", "in the run store: never in a batch again"),
                ("In open batches", "n_in_open_batches", "asked by a batch not imported yet"),
                ("To ask", "n_to_ask", "what the next batch holds"),
            ],
            strict=True,
        ):
            with col:
                ui.metric(label, f"{counts[key]:,}", help_)
        b1, b2, _ = st.columns([1, 1, 3])
        idle = counts["n_to_ask"] == 0
        if b1.button("Submit batch", type="primary", key=f"{KEY}.submit", disabled=idle):
            with ui.guard("Submitting the batch"):
                jb.submit_batch(jb.write_batch(plan, backend, store), backend, store)
                st.rerun()
        if b2.button("Write batch file", key=f"{KEY}.write", disabled=idle):
            with ui.guard("Writing the batch file"):
                written = jb.write_batch(plan, backend, store)
                st.session_state[FILE] = (written.record.batch_id, written.jsonl)
                st.rerun()
        st.caption(
            "One line per call still to make (custom_id = its run-store key, body = the "
            "request a live run sends; no API key). Run the file elsewhere, e.g. "
            "`python -m vllm.entrypoints.openai.run_batch -i batch.jsonl -o out.jsonl "
            "--model ...`, and upload the output below."
        )
        batches = jb.list_batches(store, plan.run_id, open_only=True)
        kept = st.session_state.get(FILE)
        if kept is not None and any(b.batch_id == kept[0] for b in batches):
            st.download_button(
                "Download batch JSONL",
                kept[1],
                file_name=f"{kept[0]}.jsonl",
                mime="application/jsonl",
                key=f"{KEY}.download",
            )
        for rec in batches:
            _batch(rec, ds, name, plan, backend, store)


def _progress_text(rec) -> tuple[float, str]:
    c = rec.counts or {}
    total = c.get("total") or rec.n_requests or 1
    done = c.get("completed", 0) + c.get("failed", 0)
    text = (  # Markdown (st.progress): what the endpoint sent is escaped
        f"{ui.safe(rec.batch_id)} ({ui.safe(rec.remote_id)}): {ui.safe(rec.status)}, "
        f"{done:,} of {total:,} requests"
    )
    if c.get("failed"):
        text += f", {c['failed']:,} failed"
    return min(done / total, 1.0), text


def _batch(rec, ds, name, plan, backend, store) -> None:
    """One open batch: progress and import for a submitted one, upload for a file."""
    with st.container(border=True):
        if rec.status == "written":
            st.markdown(
                f"**{ui.safe(rec.batch_id)}**: {rec.n_requests:,} requests, to run elsewhere"
            )
            out = st.file_uploader("Output JSONL", type=["jsonl"], key=f"{KEY}.out.{rec.batch_id}")
            err = st.file_uploader(
                "Error JSONL (optional)", type=["jsonl"], key=f"{KEY}.err.{rec.batch_id}"
            )
            c1, c2, _ = st.columns([1, 1, 3])
            if c1.button("Import", key=f"{KEY}.import.{rec.batch_id}", disabled=out is None):
                files = [("output", out.getvalue().decode("utf-8", "replace"))]
                if err is not None:
                    files.append(("errors", err.getvalue().decode("utf-8", "replace")))
                _import(lambda: jb.import_batch(rec.batch_id, store, files), ds, name, plan, store)
            if c2.button("Give up", key=f"{KEY}.drop.{rec.batch_id}"):
                jb.give_up_batch(rec.batch_id, store)
                st.rerun()
            return
        if rec.status in TERMINAL:  # ended at the endpoint: import it now
            st.progress(*_progress_text(rec))
            _import(lambda: jb.collect_batch(rec.batch_id, backend, store), ds, name, plan, store)
        else:
            _watch(rec.batch_id, backend)  # polls and redraws its progress every 2 s
        if rec.message:
            st.caption(ui.safe(rec.message, 500))
        c1, c2, _ = st.columns([1, 1, 3])
        if c1.button("Check now", key=f"{KEY}.check.{rec.batch_id}"):
            _import(lambda: jb.collect_batch(rec.batch_id, backend, store), ds, name, plan, store)
        if c2.button("Cancel batch", key=f"{KEY}.cancel.{rec.batch_id}"):
            with ui.guard("Cancelling the batch"):
                jb.give_up_batch(rec.batch_id, store, backend)
                st.rerun()


@st.fragment(run_every=2.0)
def _watch(batch_id: str, backend) -> None:
    """The batch's progress from the endpoint's request counts, read every 2 s; the page
    reruns once the batch has ended (then "Check now" imports it)."""
    with RunStore(default_store_path()) as store:
        try:
            rec = jb.poll_batch(batch_id, backend, store)
        except (BackendError, KeyError) as err:
            st.caption(f"Could not read the batch: {ui.safe(err, 500)}")
            return
    st.progress(*_progress_text(rec))
    if rec.status in TERMINAL or not rec.is_open:
        st.rerun(scope="app")


def _import(do, ds: Dataset, name: str, plan, store) -> None:
    """Run ``do`` (an import) and add the run's table to the judged copy of the dataset."""
    before = jb.pending_count(plan, store)["n_answered"]
    try:
        res = do()
    except (jb.BatchError, BackendError, KeyError, UnicodeDecodeError) as err:
        st.error(f"The batch could not be imported: {ui.safe(err, 500)}")
        return
    if res is None:
        st.info("The batch is still running.")
        return
    table = jb.run_table(plan, store)
    kind = "comparisons" if plan.kind == "pairwise" else "ratings"
    new_name = svc.judged_name(name)
    judged = state.datasets().get(new_name)
    into = judged if judged is not None else ds
    merged = None
    if len(table):
        try:
            merged = merge_outputs(into, kind, table, new_name)
        except DataError:
            merged = merge_outputs(ds, kind, table, new_name)
        state.add(new_name, merged)
        st.session_state[RAW_GEN] = st.session_state.get(RAW_GEN, 0) + 1
    warnings = [f"batch output: {p}" for p in res.problems[:10]]
    if res.n_pending:
        warnings.append(
            f"{res.n_pending:,} calls of the batch came back without an answer (failed, "
            "expired, cancelled or unreadable); they are pending for the next batch or run."
        )
    st.session_state[LAST] = {
        "run_id": plan.run_id,
        "judge": plan.settings["judge"],
        "kind": plan.kind,
        "mode": plan.mode,
        "n_rows": len(table),
        "n_calls": plan.n_calls,
        "n_cached": before,
        "n_called": res.n_answered + res.n_answer_errors + res.n_failed,
        "n_by_others": 0,
        "n_in_progress": 0,
        "n_failed": res.n_failed,
        "failures": dict(res.failures),
        "cancelled": False,
        "n_missing": int(table["p_first" if kind == "comparisons" else "score"].isna().sum())
        if len(table)
        else 0,
        "notes": list(plan.notes) + [f"batch {res.batch_id}: {res.n_lines:,} output lines"],
        "warnings": warnings,
        "table": kind,
        "dataset": new_name if merged is not None else "",
    }
    st.rerun()
