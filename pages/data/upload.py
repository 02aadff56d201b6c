"""The Data page's upload tab: format, file, column mapping, a live preview of the tables
as they will be read, and loading as a new dataset or into the active one."""

from __future__ import annotations

import hashlib

import streamlit as st

from data import io as dio
from data.io.merge import add_to_dataset
from data.natural import natural_sorted
from pages.data import mapping as forms
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
    if preview.result is not None and preview.result.guessed:
        st.info(f"Guessed from the columns: {preview.result.notes[0]}.")
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


def _show_preview(preview: dio.UploadPreview, file_name: str) -> None:
    if preview.error is not None:
        ui.show_error(preview.error, what=f"{file_name} cannot be loaded as read now")
        return
    result = preview.result
    notes = result.notes[1:] if result.guessed else result.notes
    if notes:
        st.markdown("\n".join(f"- {n}" for n in notes))
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
            message = f"Added {file_name} to **{name}**."
        else:
            state.add(file_name, new)
            notes = []
            message = f"Loaded {file_name} as **{file_name}**."
    except Exception as err:  # DataError names the file's rows; never a stack trace
        ui.show_error(err, what=f"Could not add {file_name} to {state.active_name()}")
        return
    st.session_state[_DONE] = (message, [*preview.result.notes, *notes])
    st.rerun()


def render() -> None:
    done = st.session_state.pop(_DONE, None)
    if done is not None:
        st.success(done[0])
        if done[1]:
            st.markdown("\n".join(f"- {n}" for n in done[1]))
    st.markdown(
        "CSV, TSV, JSON, JSONL or Parquet. **Long** tables use the canonical columns "
        "(see the README); **wide** files have one row per candidate and a column per attribute; "
        "**pairwise** files have context, first, second and a verdict (A/B/tie) or a probability."
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
        preview = dio.preview_upload(file.name, content, kind)
        mapping, scales = None, {}
        if preview.columns and preview.kind == "wide":
            st.markdown("**Columns** (a wide table: one row per candidate)")
            mapping = forms.wide_form(preview.columns, preview.mapping)
            scales = forms.scale_form(natural_sorted({str(a) for a in mapping.attributes.values()}))
        elif preview.columns and preview.kind == "pairwise":
            st.markdown("**Columns** (pairwise verdicts: one row per judged pair)")
            mapping = forms.pairwise_form(
                preview.columns, preview.mapping, state.active().attributes
            )
        _alternatives(preview, kind)
        if (mapping is not None and mapping != preview.mapping) or scales:
            guessed = preview
            preview = dio.preview_upload(file.name, content, guessed.kind, mapping, scales=scales)
            preview.layouts = guessed.layouts
        _show_preview(preview, file.name)
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
        st.caption(f"The active dataset is **{state.active_name()}**.")
    if st.button("Add to JudgeScope", key=f"{PAGE}.add", type="primary"):
        _load(preview, file.name, target)
