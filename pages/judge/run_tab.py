"""The Judge page's "Run a judge" tab: backend (:mod:`~pages.judge.backend_column`),
template and live preview, comparisons and decoding, the estimate, and the background run
with progress and cancel, or a batch run (:mod:`~pages.judge.batch_panel`)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from data.schema import DataError, Dataset
from judge.store import default_store_path
from judge.templates import DOMAINS, TemplateError
from pages.judge import JOB, LAST, PAGE, batch_panel
from pages.judge.backend_column import ChosenBackend, choose_backend
from pages.services import judge as svc
from pages.shell import state, ui


@dataclass
class _Target:
    """What to judge, from the right column."""

    mode: str  # key of svc.JUDGE_MODES
    template: object | None
    attribute: str
    domain: str


def render(ds: Dataset, name: str) -> None:
    if not len(ds.candidates):
        st.info(
            f"**{ui.safe(name)}** has no candidates to judge. Load a benchmark, the demo or a "
            "file "
            "with candidates on the Data page; judge outputs can still be imported."
        )
        return
    left, right = st.columns(2)
    with left:
        chosen = choose_backend()
    with right:
        target = _target_column(ds)
    preview_ok = _preview(ds, target)
    settings = _comparisons_and_decoding(ds, chosen, target)
    ui.settings(PAGE, settings.public())  # no API key in here, by construction
    _estimate(ds, settings, target, chosen, preview_ok)
    _run_controls(ds, name, settings, target, chosen, preview_ok)


def _target_column(ds: Dataset) -> _Target:
    st.subheader("What to judge")
    mode_key = state.keep(f"{PAGE}.mode", url="mode", parse=_judge_mode)
    mode = st.selectbox("Mode", list(svc.JUDGE_MODES), key=mode_key)
    template_kind = svc.JUDGE_MODES[mode][2]
    source = st.radio(
        "Template",
        ["built-in", "custom (YAML / JSON)"],
        horizontal=True,
        key=state.keep(f"{PAGE}.tsource"),
    )
    options = (
        svc.templates_of_kind(template_kind)
        if source == "built-in"
        else _custom_templates(template_kind)
    )
    template = None
    if options:
        tid = ui.select(
            "Template", list(options), key=state.keep(f"{PAGE}.template", url="template")
        )
        template = options[tid]
        st.caption(ui.safe(f"{template.description} {template.source}".strip(), 500))
    attrs = ds.attributes or ["overall"]
    attribute = ui.select("Attribute", attrs, key=state.keep("app.attribute"))
    default = svc.default_domain(ds, state.active_name())
    key, index = _kept(f"domain|{state.active_name()}", DOMAINS.index(default))  # per dataset
    domain = st.selectbox(
        "Domain",
        DOMAINS,
        index=index,
        key=key,
        help="Fills domain words such as Summary / Response; the default follows the "
        f"dataset's description ({default} here).",
    )
    return _Target(mode, template, attribute, domain)


def _judge_mode(text: str) -> str:
    """A judge mode named in the URL (ValueError when unknown)."""
    if text not in svc.JUDGE_MODES:
        raise ValueError("not a judge mode")
    return text


def _custom_templates(template_kind: str) -> dict:
    """Templates of ``template_kind`` from the uploaded file or the text box (messages shown)."""
    fmt = st.radio("Format", ["yaml", "json"], horizontal=True, key=state.keep(f"{PAGE}.fmt"))
    upload = st.file_uploader("Template file", type=["yaml", "yml", "json"], key=f"{PAGE}.tfile")
    key, value = _kept("ttext", svc.CUSTOM_TEMPLATE_EXAMPLE)
    text = st.text_area("Template text", value, height=260, key=key)
    custom = {}
    try:
        body = upload.getvalue().decode("utf-8") if upload is not None else text
        custom = svc.read_custom_templates(body, fmt)
    except (TemplateError, UnicodeDecodeError) as err:
        st.error(f"Custom template: {ui.safe(err, 500)}")
    options = {k: t for k, t in custom.items() if t.kind == template_kind}
    if custom and not options:
        st.warning(
            f"The custom template(s) are not {template_kind}; pick a mode "
            f"for {ui.listed(sorted({t.kind for t in custom.values()}))} "
            "templates."
        )
    return options


def _preview(ds: Dataset, target: _Target) -> bool:
    """Show the filled prompt; False when there is no template or it cannot be filled."""
    st.subheader("Preview")
    if target.template is None:
        st.info("Choose a template to see the prompt.")
        return False
    try:
        prompt, what = svc.preview_prompt(ds, target.template, target.attribute, target.domain)
    except (TemplateError, DataError) as err:
        st.warning(f"This template cannot be filled for this data: {ui.safe(err, 500)}")
        return False
    st.caption(f"What the judge reads for the first item ({ui.safe(what, 200)}):")
    st.code(prompt, language=None, wrap_lines=True)
    return True


def _kept(name: str, default) -> tuple[str, object]:
    """(key, default to draw with) of the kept setting ``judge.<name>`` (see state.initial)."""
    key = state.keep(f"{PAGE}.{name}")
    return key, state.initial(key, default)


def _within(key: str, low: int, high: int, default: int) -> tuple[str, object]:
    """A kept number setting, back to ``default`` when outside [low, high]."""
    state.keep(key)
    value = st.session_state.get(key)
    if value is not None and not low <= value <= high:
        del st.session_state[key]  # e.g. more contexts than the dataset now active has
    return key, state.initial(key, default)


def _comparisons_and_decoding(ds: Dataset, chosen: ChosenBackend, target: _Target):
    st.subheader("Comparisons and decoding")
    run_kind, runner_mode, _ = svc.JUDGE_MODES[target.mode]
    n_ctx_total = int(ds.candidates["context_id"].nunique())
    d1, d2, d3, d4 = st.columns(4)
    key, value = _within(f"{PAGE}.n_contexts", 1, n_ctx_total, min(3, n_ctx_total))
    n_contexts = d1.number_input(
        "Contexts",
        1,
        n_ctx_total,
        value,
        key=key,
        help="The first N contexts of the dataset.",
    )
    selection, budget = "all", None
    if run_kind == "pairwise":
        selection = d2.selectbox(
            "Pairs per context",
            ["all", "random", "no-repeat", "symmetric"],
            key=state.keep(f"{PAGE}.selection"),
            help="all: every ordered pair; no-repeat: never both orders of a pair; "
            "symmetric: always both orders.",
        )
        key, value = _kept("budget", 10)
        budget = d3.number_input(
            "Budget per context",
            1,
            100_000,
            value,
            key=key,
            disabled=selection == "all",
            help="Comparisons per context for the random strategies.",
        )
    key, value = _kept("seed", 0)
    seed = d4.number_input("Seed", 0, 2**31 - 1, value, key=key)
    sampling = runner_mode == "samples"
    e1, e2, e3, e4 = st.columns(4)
    key, value = _kept("temperature", 1.0)
    temperature = e1.slider(
        "Temperature",
        0.0,
        2.0,
        value,
        0.05,
        key=key,
        disabled=not sampling,
    )
    key, value = _kept("top_p", 1.0)
    top_p = e2.slider("top_p", 0.05, 1.0, value, 0.05, key=key, disabled=not sampling)
    key, value = _kept("n_samples", 3)
    n_samples = e3.number_input("Samples", 1, 100, value, key=key, disabled=not sampling)
    key, value = _kept("max_new", 64)
    max_new = e4.number_input("Max new tokens", 1, 4096, value, key=key, disabled=not sampling)
    if not sampling:
        st.caption(
            "This mode reads the probabilities of the label or score tokens after "
            "the prompt; sampling settings do not apply."
        )
    return svc.JudgeSettings(
        backend=chosen.kind,
        model=chosen.model,
        base_url=chosen.base_url,
        mode=target.mode,
        attribute=target.attribute,
        domain=target.domain,
        selection=selection,
        budget=budget,
        n_contexts=int(n_contexts),
        n_samples=int(n_samples),
        temperature=float(temperature),
        top_p=float(top_p),
        max_new_tokens=int(max_new),
        seed=int(seed),
        device=chosen.device,
    )


def _estimate(ds: Dataset, settings, target: _Target, chosen: ChosenBackend, preview_ok: bool):
    st.subheader("Estimate")
    estimate = None
    if preview_ok:
        with ui.guard("Estimating the run"):
            estimate = svc.judge_estimate(ds, settings, target.template, chosen.loaded)
    if estimate is None:
        if preview_ok and chosen.kind == "hf":
            st.info("Load the model to count tokens and cached answers.")
        return
    m1, m2, m3, m4 = st.columns(4)
    with m1:
        ui.metric(
            "Model calls", f"{estimate.n_prompts:,}", "prompts (and samples) the run needs in all"
        )
    with m2:
        ui.metric(
            "Cached", f"{estimate.n_cached:,}", "already in the run store: skipped, not paid again"
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
            ui.safe(estimate.note, 300),
        )


def _run_controls(
    ds: Dataset, name: str, settings, target: _Target, chosen: ChosenBackend, preview_ok: bool
) -> None:
    if chosen.kind == "openai":
        how = st.radio(
            "Run as",
            ["live", "batch"],
            horizontal=True,
            key=state.keep(f"{PAGE}.run_as"),
            help="batch: one batch job at the endpoint (the OpenAI Batch API: cheaper for "
            "large runs, answers within 24 h), or a JSONL file to run elsewhere (vLLM).",
        )
        if how == "batch":
            if preview_ok and chosen.confirmed:  # a batch talks to the endpoint at once
                batch_panel.render(ds, name, settings, target.template, chosen)
            return
    job = st.session_state.get(JOB)
    running = job is not None and not job.finished
    b1, b2, _ = st.columns([1, 1, 4])
    can_run = (
        preview_ok
        and not running
        and chosen.confirmed  # never a request to a host the user did not choose
        and (chosen.kind == "openai" or chosen.loaded is not None)
    )
    if b1.button("Run", type="primary", key=f"{PAGE}.run", disabled=not can_run) and can_run:
        st.session_state[JOB] = svc.JudgeJob(
            ds,
            settings,
            target.template,
            api_key=chosen.api_key,
            backend=chosen.loaded,
            source_name=name,
        )
        st.session_state.pop(LAST, None)
        st.rerun()
    if running and b2.button("Cancel", key=f"{PAGE}.cancel"):
        job.cancel.set()
    st.caption(f"Run store: {default_store_path()}")
    if running:
        _progress()


@st.fragment(run_every=1.0)
def _progress() -> None:
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
