"""The Judge page's "Import judge outputs" tab: the published outputs that come with the
benchmarks, and an upload merged into a copy of the active dataset."""

from __future__ import annotations

import streamlit as st

import data
from data.schema import Dataset
from pages import state, ui
from pages.judge_page import PAGE
from pages.services import judge_outputs

_KINDS = {
    "pairwise": "pairwise verdicts (context, first, second, verdict or probability)",
    "ratings": "ratings (context_id, candidate_id, attribute, judge, prompt_id, sample, score)",
}


def render(ds: Dataset, name: str) -> None:
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
        list(_KINDS),
        horizontal=True,
        key=f"{PAGE}.import_kind",
        format_func=_KINDS.get,
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
