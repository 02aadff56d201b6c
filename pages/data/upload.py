"""The Data page's upload tab: format, file, column mapping, a live preview of the tables
as they will be read, and loading as a new dataset or into the active one."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import streamlit as st

from data import io as dio
from data.importers import FORMATS, ImportOptions, detect_format
from data.io.merge import add_to_dataset
from data.natural import natural_sorted
from pages.data import mapping as forms
from pages.data import verdicts
from pages.shell import state, ui

PAGE = "data"
KINDS = ["auto", "long", "wide", "pairwise"]
NEW, ADD = "Load as a new dataset", "Add to the active dataset"
TARGETS = [NEW, ADD]
_DONE = f"{PAGE}.loaded_notes"
_TYPES = ["csv", "tsv", "json", "jsonl", "parquet"]


def _kind_of(layout: str) -> str:
    return layout if layout in ("wide", "pairwise") else "long"


def _set_kind(kind: str) -> None:
    st.session_state[f"{PAGE}.kind"] = kind


def _alternatives(preview: dio.UploadPreview, kind: str) -> None:
    """Say what was guessed and offer the other layouts the columns fit."""
    current = _kind_of(preview.kind) if preview.kind else None
    others = [(k, d) for k, d in preview.layouts if _kind_of(k) != current]
    result = preview.result
    if result is not None and (result.guessed or result.mapping_notes):
        lines = result.mapping_notes or result.notes[:1]
        head = "Guessed from the columns: " if result.guessed else "Columns guessed: "
        st.info(
            head
            + ui.safe(lines[0], None)
            + "."
            + ("\n\n" if len(lines) > 1 else "")
            + "\n".join(f"- {ui.safe(line, None)}" for line in lines[1:])
        )
    if not others and kind == "auto":
        return
    if others:
        st.caption("The columns also fit another layout; read the file as:")
    cols = st.columns(max(len(others), 1) + (kind != "auto"))
    for col, (k, desc) in zip(cols, others, strict=False):
        col.button(
            f"Read as {desc}",
            key=f"{PAGE}.alt.{k}",
            on_click=_set_kind,
            args=(_kind_of(k),),
        )
    if kind != "auto":
        cols[-1].button(
            "Guess the layout", key=f"{PAGE}.alt.auto", on_click=_set_kind, args=("auto",)
        )


def _notes(notes: list[str]) -> None:
    """Notes as a list; their text (file names, values, ids) never read as Markdown."""
    if notes:
        st.markdown("\n".join(f"- {ui.safe(n, None)}" for n in notes))


def _show_preview(preview: dio.UploadPreview, file_name: str) -> None:
    if preview.error is not None:
        ui.show_error(preview.error, what=f"{file_name} cannot be loaded as read now")
        return
    result = preview.result
    shown = set(result.mapping_notes) | ({result.notes[0]} if result.guessed else set())
    _notes([n for n in result.notes if n not in shown])
    st.markdown(f"**Preview** — {preview.n_rows:,} row(s) in the file become:")
    st.dataframe(preview.summary(), hide_index=True)
    heads = preview.heads(5)
    for tab, head in zip(st.tabs(list(heads)), heads.values(), strict=True):
        tab.dataframe(head, hide_index=True)


def _load(preview: dio.UploadPreview, file_name: str, target: str) -> None:
    if preview.error is not None or preview.result is None:
        ui.show_error(
            preview.error or ValueError("nothing read"), what=f"Could not load {file_name}"
        )
        return
    new = preview.result.dataset
    try:
        if target == ADD:
            name = state.active_name()
            merged, notes = add_to_dataset(state.active(), new)
            state.add(name, merged)
            message = f"Added {ui.safe(file_name)} to **{ui.safe(name)}**."
        else:
            state.add(file_name, new)
            notes = []
            message = f"Loaded {ui.safe(file_name)} as **{ui.safe(file_name)}**."
    except Exception as err:  # DataError names the file's rows; never a stack trace
        ui.show_error(err, what=f"Could not add {file_name} to {state.active_name()}")
        return
    st.session_state[_DONE] = (message, [*preview.result.notes, *notes])
    st.rerun()


def _published(file, content: bytes, fmt: str) -> dio.UploadPreview:
    """A judgment file in a published format: its importer, with the texts, strength policy,
    baseline and verdict map the user gives."""
    info = FORMATS[fmt]
    st.info(
        f"Recognised as **{ui.safe(info.title, None)}**: read by its importer "
        f"(data.importers, format '{fmt}'), as the benchmark writes it."
    )
    extra = st.file_uploader(
        "More files (optional): the other judgment files of the run, and " + info.companions,
        type=["json", "jsonl"],
        accept_multiple_files=True,
        key=forms.widget_key("pub.companions"),
        help="Judgment files of the same format are read with this one (the other models of "
        "a run); question and answer files give the texts: the contexts get the questions, "
        "the candidates the answers.",
    )
    companions = {f.name: f.getvalue() for f in extra or []}
    c1, c2 = st.columns([2, 1])
    with c1:
        strength = verdicts.strength_choice(forms.widget_key("pub.strength"))
    baseline = c2.text_input(
        "Baseline (when the file does not name it)",
        "",
        key=forms.widget_key("pub.baseline"),
        help="Arena-Hard v0.1 records do not name their baseline: gpt-4-0314 unless you say "
        "otherwise.",
    )
    options = ImportOptions(strength=strength, baseline=baseline.strip() or None)
    preview = dio.preview_upload(file.name, content, options=options, companions=companions)
    if preview.result is not None:
        overrides = verdicts.verdict_map_editor(
            preview.result.verdicts, forms.widget_key("pub.verdicts")
        )
        if overrides:
            options = replace(options, verdict_map=overrides)
            preview = dio.preview_upload(file.name, content, options=options, companions=companions)
        if preview.result is not None and preview.result.baseline:
            st.caption(f"Baseline: {ui.safe(preview.result.baseline)}")
    return preview


def _table(file, content: bytes, kind: str) -> dio.UploadPreview:
    """A table (long, wide or pairwise): the mapping form, the verdict map, the preview."""
    preview = dio.preview_upload(file.name, content, kind)
    mapping, scales = None, {}
    if preview.columns and preview.kind == "wide":
        st.markdown("**Columns** (a wide table: one row per candidate)")
        mapping = forms.wide_form(preview.columns, preview.mapping)
        scales = forms.scale_form(natural_sorted({str(a) for a in mapping.attributes.values()}))
    elif preview.columns and preview.kind == "pairwise":
        st.markdown("**Columns** (pairwise verdicts: one row per judged pair)")
        adding = st.session_state.get(f"{PAGE}.target") == ADD  # the radio below the preview
        mapping = forms.pairwise_form(
            preview.columns, preview.mapping, state.active().attributes, adding=adding
        )
    _alternatives(preview, kind)
    if (mapping is not None and mapping != preview.mapping) or scales:
        guessed = preview
        preview = dio.preview_upload(file.name, content, guessed.kind, mapping, scales=scales)
        preview.layouts = guessed.layouts
    if isinstance(mapping, dio.PairwiseMapping) and preview.result is not None:
        overrides = verdicts.verdict_map_editor(
            preview.result.verdicts, forms.widget_key("pair.verdicts")
        )
        if overrides:
            guessed = preview
            mapping = replace(mapping, verdict_map=overrides)
            preview = dio.preview_upload(file.name, content, "pairwise", mapping)
            preview.layouts = guessed.layouts
    _show_preview(preview, file.name)
    return preview


def render() -> None:
    done = st.session_state.pop(_DONE, None)
    if done is not None:
        st.success(done[0])
        _notes(done[1])
    st.markdown(
        "CSV, TSV, JSON, JSONL or Parquet. **Long** tables use the canonical columns "
        "(see the README); **wide** files have one row per candidate and a column per attribute; "
        "**pairwise** files have one row per judged pair: the two candidates (ids, systems or "
        "texts), a verdict (A/B/tie, A>>B, model_a, 1/2/0, ...), a probability or a human "
        "verdict. Judgment files as Arena-Hard, AlpacaEval and MT-Bench publish them are "
        "recognised and read as they are."
    )
    kind = st.radio(
        "Format",
        KINDS,
        horizontal=True,
        key=f"{PAGE}.kind",
        help="auto: recognised from the column names and values; what was guessed is shown.",
    )
    file = st.file_uploader("File", type=_TYPES, key=f"{PAGE}.file")
    if file is None:
        return
    content = file.getvalue()
    st.session_state[forms.GENERATION] = hashlib.sha1(
        f"{file.name}:{kind}:".encode() + content
    ).hexdigest()[:10]
    preview = None
    with ui.guard(f"Reading {file.name}"):
        fmt = detect_format(file.name, content) if kind == "auto" else None
        if fmt is not None:
            preview = _published(file, content, fmt)
            _show_preview(preview, file.name)
        else:
            preview = _table(file, content, kind)
    if preview is None:
        return
    target = st.radio(
        "Load the file",
        TARGETS,
        horizontal=True,
        key=f"{PAGE}.target",
        help="Add to the active dataset: the file's tables (human scores, candidate texts, "
        "contexts, judge outputs) join the active dataset's, with the same checks as a fresh "
        "upload; the dataset keeps its name and lists the file in its sources.",
    )
    if target == ADD:
        st.caption(f"The active dataset is **{ui.safe(state.active_name())}**.")
    if st.button("Add to JudgeScope", key=f"{PAGE}.add", type="primary"):
        _load(preview, file.name, target)
