"""The Judge page's "Import judge outputs" tab: the published outputs that come with the
benchmarks, and an upload merged into a copy of the active dataset."""

from __future__ import annotations

import streamlit as st

import data
from data.schema import DataError, Dataset
from pages.judge import PAGE
from pages.services import judge as svc
from pages.shell import state, ui

_KINDS = {
    "pairwise": "pairwise verdicts (context, first, second, verdict or probability)",
    "ratings": "ratings (context_id, candidate_id, attribute, judge, prompt_id, sample, score)",
}


def render(ds: Dataset, name: str) -> None:
    st.subheader("Published judge outputs")
    infos = {b.name: b for b in data.list_benchmarks()}
    # a judged copy ("hanna (judged)") still holds the benchmark's published outputs
    info = infos.get(name.removesuffix(svc.JUDGED).split(" + ")[0])
    if info is not None and info.judge_outputs:
        st.markdown(
            f"Already inside **{ui.safe(name)}** (loaded with the benchmark):\n"
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
    st.caption(
        "Merged into a copy of the active dataset, which keeps its name (the file is listed "
        "in its sources); its candidates must exist there; outputs of the same judge and "
        "attribute are replaced. Other tables are added on the Data page."
    )
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
    if file is not None and st.button(
        f"Merge into {ui.safe(name)}", key=f"{PAGE}.import", type="primary"
    ):
        table = "comparisons" if kind == "pairwise" else "ratings"
        try:
            up = data.read_upload(file.name, file.getvalue(), kind=kind)
            if not len(up.table(table)):
                raise DataError(f"{file.name}: no {table} rows found in the file")
            merged, notes = data.add_to_dataset(ds, up, replace_outputs=True)
        except Exception as err:  # DataError lists rows and columns; never a stack trace
            ui.show_error(err, what=f"Could not import {file.name}")
        else:
            state.add(name, merged)
            st.session_state[f"{PAGE}.imported"] = (
                name,
                (
                    f"{len(merged.table(table)) - len(ds.table(table)):+,} {table} rows from "
                    f"{ui.safe(file.name)}: **{ui.safe(name)}** is now active "
                    f"({'; '.join(ui.safe(n, 300) for n in notes)})."
                ),
            )
            st.rerun()
    imported = st.session_state.get(f"{PAGE}.imported")
    if imported and imported[0] == name:
        st.success(imported[1])
