"""Judge: run an LLM judge over the active dataset, or import published judge outputs, and
read its raw answers with the unparsable ones highlighted."""

import os

import pandas as pd
import streamlit as st

import data
from data.schema import DataError
from judge.store import default_store_path
from judge.templates import DOMAINS, TemplateError
from pages import state, ui
from pages.services import judge as svc
from pages.services import judge_outputs

PAGE = "judge"
JOB = f"{PAGE}.job"  # the JudgeJob of this session (thread, progress, cancel, result)
LAST = f"{PAGE}.last"  # summary of the last finished run or import, shown until the next

st.title("Judge")
st.markdown(
    "Run an LLM judge over the candidates of the active dataset — pairwise (both presentation "
    "orders kept) or absolute (Likert) — or import judge outputs. Answers are kept in a run "
    "store, so a run that stops can be started again and only the missing calls are made."
)
ds = state.active()
name = state.active_name()

# ------------------------------------------------------------------ a finished run comes in
job = st.session_state.get(JOB)
if job is not None and job.finished and job.merged_into is None:
    job.merged_into = ""  # handled, whatever happens below
    with ui.guard("Adding the judge outputs"):
        new_name, merged, summary = job.take_result()
        if merged is not None:
            state.add(new_name, merged)
            job.merged_into = new_name
            # the raw outputs tab opens again on its defaults: this run's answers
            st.session_state.pop(f"{PAGE}.raw_table", None)
            st.session_state.pop(f"{PAGE}.raw_judge", None)
        st.session_state[LAST] = summary
        st.rerun()

last = st.session_state.get(LAST)
if last and last.get("dataset") and last["dataset"] != name:
    last = None  # another dataset is active now: the note about the run would mislead
if last and "error" in last:
    st.error(f"The run stopped: {last['error']}")
elif last:
    msg = (
        f"**{last['judge']}**: {last['n_calls']:,} model calls — {last['n_cached']:,} cached "
        f"(reused from the run store, not sent again), {last['n_called']:,} new. "
    )
    msg += (
        f"{last['n_rows']:,} outputs added to **{last['dataset']}** (now active)."
        if last["dataset"]
        else "No outputs to add."
    )
    (st.warning if last["cancelled"] else st.success)(
        ("Cancelled — " if last["cancelled"] else "") + msg
    )
    for note in last["notes"]:
        st.caption(note)
    ui.remember(
        PAGE, "Last judge run", data=pd.DataFrame([{k: v for k, v in last.items() if k != "notes"}])
    )

run_tab, raw_tab, import_tab = st.tabs(["Run a judge", "Raw outputs", "Import judge outputs"])

# ------------------------------------------------------------------ run a judge
with run_tab:
    if not len(ds.candidates):
        st.info(
            f"**{name}** has no candidates to judge. Load a benchmark, the demo or a file "
            "with candidates on the Data page; judge outputs can still be imported."
        )
    else:
        left, right = st.columns(2)
        backend_obj = None
        api_key = None
        with left:
            st.subheader("Backend")
            backend = st.radio(
                "Backend",
                list(svc.BACKENDS),
                key=f"{PAGE}.backend",
                format_func=svc.BACKENDS.get,
                label_visibility="collapsed",
            )
            device = "auto"
            if backend == "openai":
                model = st.text_input("Model", "gpt-4o-mini", key=f"{PAGE}.model")
                base_url = st.text_input(
                    "Base URL",
                    "",
                    key=f"{PAGE}.base_url",
                    placeholder="https://api.openai.com/v1",
                    help="Empty: OpenAI (or OPENAI_BASE_URL). A local server: e.g. "
                    "http://localhost:8000/v1 (vLLM) or http://localhost:11434/v1 (Ollama).",
                )
                api_key = st.text_input(
                    "API key",
                    type="password",
                    key=f"{PAGE}.api_key",
                    help="Kept in this browser session's memory only: never written to disk, "
                    "logs, the run store or exports. Empty: OPENAI_API_KEY or "
                    ".streamlit/secrets.toml.",
                )
                if not api_key and os.environ.get("OPENAI_API_KEY"):
                    st.caption("Using the key in the OPENAI_API_KEY environment variable.")
            else:
                base_url = ""
                model = st.text_input(
                    "Model id or local folder",
                    "google/flan-t5-small",
                    key=f"{PAGE}.hf_model",
                    help="Loaded with transformers; offline, only models already downloaded "
                    "(or saved in a folder) can be used.",
                )
                device = st.selectbox("Device", ["auto", "cpu", "cuda"], key=f"{PAGE}.device")
                loaded = st.session_state.get(f"{PAGE}.hf_loaded") == (model, device)
                if st.button("Load model", key=f"{PAGE}.hf_load", disabled=loaded):
                    with ui.guard(f"Loading {model}"):
                        svc.hf_backend(model, device)
                        st.session_state[f"{PAGE}.hf_loaded"] = (model, device)
                        loaded = True
                if loaded:
                    backend_obj = svc.hf_backend(model, device)
                    st.caption(
                        f"Loaded: {backend_obj.model_id} ({backend_obj.kind}, "
                        f"{backend_obj.device}, {str(backend_obj.dtype)})"
                    )

        with right:
            st.subheader("What to judge")
            mode = st.selectbox("Mode", list(svc.JUDGE_MODES), key=f"{PAGE}.mode")
            run_kind, runner_mode, template_kind = svc.JUDGE_MODES[mode]
            source = st.radio(
                "Template",
                ["built-in", "custom (YAML / JSON)"],
                horizontal=True,
                key=f"{PAGE}.tsource",
            )
            custom = {}
            if source == "built-in":
                options = svc.templates_of_kind(template_kind)
            else:
                fmt = st.radio("Format", ["yaml", "json"], horizontal=True, key=f"{PAGE}.fmt")
                upload = st.file_uploader(
                    "Template file", type=["yaml", "yml", "json"], key=f"{PAGE}.tfile"
                )
                text = st.text_area(
                    "Template text", svc.CUSTOM_TEMPLATE_EXAMPLE, height=260, key=f"{PAGE}.ttext"
                )
                try:
                    body = upload.getvalue().decode("utf-8") if upload is not None else text
                    custom = svc.read_custom_templates(body, fmt)
                except (TemplateError, UnicodeDecodeError) as err:
                    st.error(f"Custom template: {err}")
                options = {k: t for k, t in custom.items() if t.kind == template_kind}
                if custom and not options:
                    st.warning(
                        f"The custom template(s) are not {template_kind}; pick a mode "
                        f"for {', '.join(sorted({t.kind for t in custom.values()}))} "
                        "templates."
                    )
            template = None
            if options:
                tid = ui.select("Template", list(options), key=f"{PAGE}.template")
                template = options[tid]
                st.caption(f"{template.description} {template.source}".strip())
            attrs = ds.attributes or ["overall"]
            attribute = ui.select("Attribute", attrs, key=f"{PAGE}.attribute")
            domain = st.selectbox(
                "Domain",
                DOMAINS,
                key=f"{PAGE}.domain",
                help="Fills domain words such as Summary / Response.",
            )

        st.subheader("Preview")
        preview_ok = False
        if template is None:
            st.info("Choose a template to see the prompt.")
        else:
            try:
                prompt, what = svc.preview_prompt(ds, template, attribute, domain)
            except (TemplateError, DataError) as err:
                st.error(f"This template cannot be filled for this data: {err}")
            else:
                preview_ok = True
                st.caption(f"What the judge reads for the first item ({what}):")
                st.code(prompt, language=None, wrap_lines=True)

        st.subheader("Comparisons and decoding")
        n_ctx_total = int(ds.candidates["context_id"].nunique())
        d1, d2, d3, d4 = st.columns(4)
        n_contexts = d1.number_input(
            "Contexts",
            1,
            n_ctx_total,
            min(3, n_ctx_total),
            key=f"{PAGE}.n_contexts",
            help="The first N contexts of the dataset.",
        )
        selection, budget = "all", None
        if run_kind == "pairwise":
            selection = d2.selectbox(
                "Pairs per context",
                ["all", "random", "no-repeat", "symmetric"],
                key=f"{PAGE}.selection",
                help="all: every ordered pair; no-repeat: never both orders of a pair; "
                "symmetric: always both orders.",
            )
            budget = d3.number_input(
                "Budget per context",
                1,
                100_000,
                10,
                key=f"{PAGE}.budget",
                disabled=selection == "all",
                help="Comparisons per context for the random strategies.",
            )
        seed = d4.number_input("Seed", 0, 2**31 - 1, 0, key=f"{PAGE}.seed")
        sampling = runner_mode == "samples"
        e1, e2, e3, e4 = st.columns(4)
        temperature = e1.slider(
            "Temperature", 0.0, 2.0, 1.0, 0.05, key=f"{PAGE}.temperature", disabled=not sampling
        )
        top_p = e2.slider("top_p", 0.05, 1.0, 1.0, 0.05, key=f"{PAGE}.top_p", disabled=not sampling)
        n_samples = e3.number_input(
            "Samples", 1, 100, 3, key=f"{PAGE}.n_samples", disabled=not sampling
        )
        max_new = e4.number_input(
            "Max new tokens", 1, 4096, 64, key=f"{PAGE}.max_new", disabled=not sampling
        )
        if not sampling:
            st.caption(
                "This mode reads the probabilities of the label or score tokens after "
                "the prompt; sampling settings do not apply."
            )
        settings = svc.JudgeSettings(
            backend=backend,
            model=model,
            base_url=base_url,
            mode=mode,
            attribute=attribute,
            domain=domain,
            selection=selection,
            budget=budget,
            n_contexts=int(n_contexts),
            n_samples=int(n_samples),
            temperature=float(temperature),
            top_p=float(top_p),
            max_new_tokens=int(max_new),
            seed=int(seed),
            device=device,
        )
        ui.settings(PAGE, settings.public())  # no API key in here, by construction

        st.subheader("Estimate")
        estimate = None
        if preview_ok:
            with ui.guard("Estimating the run"):
                estimate = svc.judge_estimate(ds, settings, template, backend_obj)
        if estimate is not None:
            m1, m2, m3, m4 = st.columns(4)
            with m1:
                ui.metric(
                    "Model calls",
                    f"{estimate.n_prompts:,}",
                    "prompts (and samples) the run needs in all",
                )
            with m2:
                ui.metric(
                    "Cached",
                    f"{estimate.n_cached:,}",
                    "already in the run store: skipped, not paid again",
                )
            with m3:
                ui.metric(
                    "Prompt tokens",
                    f"{estimate.prompt_tokens:,}",
                    f"to send for the {estimate.n_to_run:,} calls still to make",
                )
            with m4:
                ui.metric(
                    "Price",
                    "–" if estimate.price_usd is None else f"${estimate.price_usd:,.4f}",
                    estimate.note,
                )
        elif preview_ok and backend == "hf":
            st.info("Load the model to count tokens and cached answers.")

        job = st.session_state.get(JOB)
        running = job is not None and not job.finished
        b1, b2, _ = st.columns([1, 1, 4])
        can_run = preview_ok and not running and (backend == "openai" or backend_obj is not None)
        if b1.button("Run", type="primary", key=f"{PAGE}.run", disabled=not can_run):
            st.session_state[JOB] = svc.JudgeJob(
                ds,
                settings,
                template,
                api_key=api_key or None,
                backend=backend_obj,
                source_name=name,
            )
            st.session_state.pop(LAST, None)
            st.rerun()
        if running and b2.button("Cancel", key=f"{PAGE}.cancel"):
            job.cancel.set()
        st.caption(f"Run store: {default_store_path()}")

        @st.fragment(run_every=1.0)
        def progress() -> None:
            current = st.session_state.get(JOB)
            if current is None or current.merged_into is not None:
                return
            if current.finished:
                st.rerun(scope="app")
            total = max(current.n_total, 1)
            text = f"{current.n_done:,} of {current.n_total:,} model calls done"
            if current.cancel.is_set():
                text += " — cancelling (answers in flight are still kept)…"
            st.progress(min(current.n_done / total, 1.0), text=text)

        if running:
            progress()

# ------------------------------------------------------------------ raw outputs
with raw_tab:
    tables = [t for t in ("comparisons", "ratings") if len(ds.table(t))]
    if not tables:
        st.info(f"**{name}** has no judge outputs yet: run a judge or import outputs.")
    else:
        last_judge = last.get("judge") if last and "judge" in last else None
        first = last["table"] if last_judge and last.get("table") in tables else tables[0]
        table = st.radio(
            "Table", tables, index=tables.index(first), horizontal=True, key=f"{PAGE}.raw_table"
        )
        rows = ds.table(table)
        judges = sorted(rows["judge"].astype(str).unique())
        pick = ui.select(
            "Judge",
            judges,
            key=f"{PAGE}.raw_judge",
            index=judges.index(last_judge) if last_judge in judges else 0,
        )
        job = st.session_state.get(JOB)
        template = job.template if job is not None and last_judge == pick else None
        with ui.guard("Reading the raw outputs"):
            rows = judge_outputs.outputs_with_failures(
                rows[rows["judge"].astype(str) == pick], table, template
            )
            counts = judge_outputs.failure_counts(rows)
            n_failed = int(counts["n_outputs"].sum()) if len(counts) else 0
            r1, r2 = st.columns(2)
            with r1:
                ui.metric("Outputs", f"{len(rows):,}", "answers of this judge in the table")
            with r2:
                ui.metric(
                    "Unparsed",
                    f"{n_failed:,} ({n_failed / max(len(rows), 1):.1%})",
                    "answers without a usable value (NaN, never a default score)",
                )
            if len(counts):
                ui.table(
                    counts, f"Unparsed answers of {pick} by reason", page=PAGE, hide_index=True
                )
            only = st.checkbox("Only failures", key=f"{PAGE}.only_failures")
            shown = rows[rows["failure"] != ""] if only else rows
            limit = 1000
            if len(shown) > limit:
                st.caption(f"First {limit:,} of {len(shown):,} rows; the CSV has them all.")
            st.dataframe(
                shown.head(limit).style.apply(
                    lambda r: ["background-color: #f6d5c3" if r["failure"] else ""] * len(r), axis=1
                ),
                hide_index=True,
            )
            ui.table(shown, f"Raw outputs of {pick}", page=PAGE, show=False)

# ------------------------------------------------------------------ import
with import_tab:
    st.subheader("Published judge outputs")
    infos = {b.name: b for b in data.list_benchmarks()}
    info = infos.get(name.split(" + ")[0])
    if info is not None and info.judge_outputs:
        st.markdown(
            f"Already inside **{name}** (loaded with the benchmark):\n"
            + "\n".join(f"- {line}" for line in info.judge_outputs)
        )
    else:
        st.markdown(
            "These benchmarks come with published judge outputs, loaded with them on "
            "the Data page:\n"
            + "\n".join(
                f"- **{b.title}**: {len(b.judge_outputs)} judge group(s)"
                for b in infos.values()
                if b.judge_outputs
            )
        )
    st.subheader("Upload judge outputs")
    st.caption("Merged into a copy of the active dataset; its candidates must exist there.")
    kind = st.radio(
        "The file holds",
        ["pairwise", "ratings"],
        horizontal=True,
        key=f"{PAGE}.import_kind",
        format_func={
            "pairwise": "pairwise verdicts (context, first, second, verdict or probability)",
            "ratings": "ratings (context_id, candidate_id, attribute, judge, "
            "prompt_id, sample, score)",
        }.get,
    )
    file = st.file_uploader(
        "Judge outputs", type=["csv", "tsv", "json", "jsonl", "parquet"], key=f"{PAGE}.import_file"
    )
    if file is not None and st.button(f"Merge into {name}", key=f"{PAGE}.import", type="primary"):
        try:
            merged, table = judge_outputs.import_outputs(
                ds, file.name, file.getvalue(), kind, name=f"{name} + {file.name}"
            )
        except Exception as err:  # DataError lists rows and columns; never a stack trace
            ui.show_error(err, what=f"Could not import {file.name}")
        else:
            state.add(merged.name, merged)
            st.session_state[f"{PAGE}.imported"] = (
                merged.name,
                (
                    f"{len(merged.table(table)) - len(ds.table(table)):+,} {table} rows from "
                    f"{file.name}: **{merged.name}** is now active."
                ),
            )
            st.rerun()
    imported = st.session_state.get(f"{PAGE}.imported")
    if imported and imported[0] == name:
        st.success(imported[1])
