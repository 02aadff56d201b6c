"""Data: pick a benchmark, upload a file, or use the demo; see what is loaded."""

import pandas as pd
import streamlit as st

import data
from data import io as dio
from data.schema import DataError
from pages import state, ui

PAGE = "data"

st.title("JudgeScope")
st.markdown(
    "Explore how LLM judges behave: pairwise probabilities, rankings, position bias, comparison "
    "budgets and agreement with human raters. Load data below, then pick a page on the left."
)

pick, upload = st.tabs(["Benchmark or demo", "Upload a file"])

with pick:
    infos = data.list_benchmarks()
    labels = {"demo": "Demo (simulated judge, offline)"} | {b.name: b.title for b in infos}
    choice = st.selectbox("Dataset", list(labels), format_func=labels.get, key=f"{PAGE}.benchmark")
    info = next((b for b in infos if b.name == choice), None)
    st.caption(info.description if info else "A small simulated set with a position-biased judge.")
    if st.button("Load", key=f"{PAGE}.load", type="primary"):
        with ui.guard(f"Loading {labels[choice]}"):
            ds = state.demo() if choice == "demo" else state.load_benchmark(choice)
            state.add(choice, ds)
            st.rerun()

with upload:
    st.markdown(
        "CSV, TSV, JSON, JSONL or Parquet. **Long** tables use the canonical columns "
        "(see the README); **wide** files have one row per candidate and a column per attribute; "
        "**pairwise** files have context, first, second and a verdict (A/B/tie) or a probability."
    )
    kind = st.radio(
        "Format",
        ["auto", "long", "wide", "pairwise"],
        horizontal=True,
        key=f"{PAGE}.kind",
        help="auto: recognised from the column names.",
    )
    file = st.file_uploader(
        "File", type=["csv", "tsv", "json", "jsonl", "parquet"], key=f"{PAGE}.file"
    )
    mapping = None
    if file is not None and kind == "wide":
        with ui.guard(f"Reading the columns of {file.name}"):
            columns = list(dio.read_frame(file.name, file.getvalue()).columns)
            c1, c2, c3 = st.columns(3)
            ctx = c1.selectbox("Context id column", columns, key=f"{PAGE}.map.ctx")
            cand = c2.selectbox(
                "Candidate id column",
                columns,
                index=min(1, len(columns) - 1),
                key=f"{PAGE}.map.cand",
            )
            text = c3.selectbox("Candidate text column", [None, *columns], key=f"{PAGE}.map.text")
            attrs = st.multiselect(
                "Attribute (score) columns",
                [c for c in columns if c not in (ctx, cand, text)],
                key=f"{PAGE}.map.attrs",
            )
            mapping = dio.WideMapping(
                context_id=ctx,
                candidate_id=cand,
                candidate_text=text,
                attributes={a: a for a in attrs},
            )
    if file is not None and st.button("Add to JudgeScope", key=f"{PAGE}.add", type="primary"):
        try:
            ds = dio.read_upload(
                file.name, file.getvalue(), kind=None if kind == "auto" else kind, mapping=mapping
            )
        except DataError as err:
            ui.show_error(err, what=f"Could not load {file.name}")
        except Exception as err:  # never a stack trace in the page
            ui.show_error(err, what=f"Could not load {file.name}")
        else:
            state.add(file.name, ds)
            st.success(f"Loaded {file.name}.")
            st.rerun()

ds = state.active()
st.header(f"Loaded: {state.active_name()}")
if ds.description:
    st.caption(ds.description)
counts = ds.counts()
cols = st.columns(5)
for col, (label, key, help_line) in zip(
    cols,
    [
        ("Contexts", "n_contexts", "documents, prompts or dialogues judged"),
        ("Candidates", "candidates", "texts to compare within a context"),
        ("Human scores", "human_scores", "one row per annotator, attribute and candidate"),
        ("Comparisons", "comparisons", "pairwise judge outputs, both presentation orders kept"),
        ("Judge ratings", "ratings", "absolute (Likert) judge outputs, one row per sample"),
    ],
    strict=True,
):
    with col:
        ui.metric(label, f"{counts[key]:,}", help_line)

if len(ds.candidates):
    left, right = st.columns(2)
    ctx_ids = ds.candidates["context_id"].drop_duplicates().tolist()
    cid = left.selectbox("Context", ctx_ids, key=f"{PAGE}.ctx")
    text = ds.contexts.loc[ds.contexts["context_id"] == cid, "text"]
    left.text_area(
        "Context text",
        text.iloc[0] if len(text) else "(no text)",
        height=300,
        disabled=True,
        key=f"{PAGE}.ctx_text.{cid}",
    )
    cands = ds.candidates[ds.candidates["context_id"] == cid]
    right.dataframe(cands.drop(columns=["context_id"]), hide_index=True, height=300)
    if len(ds.human_scores):
        hs = ds.human_scores[ds.human_scores["context_id"] == cid]
        mean = hs.pivot_table(
            index="candidate_id", columns="attribute", values="score", aggfunc="mean"
        )
        st.subheader("Human scores (mean over annotators) in this context")
        st.dataframe(mean.round(2))

with st.expander("Tables"):
    for name in ("contexts", "candidates", "human_scores", "comparisons", "ratings"):
        t: pd.DataFrame = ds.table(name)
        st.markdown(f"**{name}** — {len(t):,} rows")
        st.dataframe(t.head(200), hide_index=True)
