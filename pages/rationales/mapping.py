"""The 2-D map of the rationales: coloured by cluster, criterion, score / verdict, system or
agreement with the humans; clusters labelled by their keywords; a click opens the example."""

from __future__ import annotations

import textwrap

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from data.natural import natural_key
from pages.rationales import PAGE, Choice
from pages.services import rationales as svc
from pages.shell import example_link, state, ui

#: Colour choices -> the column they read.
COLOURS = {
    "cluster": "cluster_label",
    "criterion": "attribute",
    "score / verdict": None,  # the choice's score column
    "system": "system",
    "agreement with humans": "agreement",
}


def show(choice: Choice) -> None:
    st.subheader("Map of the rationales")
    left, mid, right = st.columns(3)
    with left:
        scope = st.radio(
            "Rationales",
            ["this criterion", "every criterion"],
            horizontal=True,
            key=state.keep("rationales.map_scope"),
        )
    with mid:
        colour = ui.select("Colour by", list(COLOURS), key=state.keep("rationales.colour"))
    with right:
        key = state.keep("rationales.clusters")
        k = st.slider("Clusters", 2, 10, state.initial(key, 5), key=key)
    attribute = choice.attribute if scope == "this criterion" else None
    mapped, why = svc.rationale_map(choice.ds, choice.judge, choice.prompt_id, attribute, k)
    if mapped is None:
        st.info(ui.safe(why, 400))
        return
    ui.settings(PAGE, {"map rationales": scope, "colour": colour, "clusters": k})
    pts = mapped.points
    column = COLOURS[colour] or choice.score
    st.caption(
        "TF-IDF of each rationale, reduced by truncated SVD "
        f"({mapped.explained:.0%} of the variance kept), placed by t-SNE (scikit-learn, seed "
        f"{svc.SEED}); clusters are KMeans on the SVD vectors, named by their three most "
        "distinctive terms. Click a point to open its example."
        + (
            f" **{len(pts)} of {mapped.n_total} rationales drawn** (a seeded sample)."
            if mapped.sampled
            else f" {len(pts)} rationales."
        )
    )
    fig = go.Figure()
    groups = sorted(pts[column].astype(str).unique(), key=natural_key)
    for n, group in enumerate(groups):
        part = pts[pts[column].astype(str) == group]
        fig.add_trace(
            go.Scatter(
                x=part["x"],
                y=part["y"],
                mode="markers",
                name=group,
                marker=dict(size=6, opacity=0.75, color=ui.PALETTE[n % len(ui.PALETTE)]),
                customdata=np.stack([part.index.to_numpy()], axis=-1),
                hovertext=[_hover(r) for r in part.itertuples(index=False)],
                hoverinfo="text",
            )
        )
    centres = pts.groupby("cluster_label")[["x", "y"]].median()
    for label, row in centres.iterrows():
        fig.add_annotation(
            x=row["x"],
            y=row["y"],
            text=str(label),
            showarrow=False,
            bgcolor="rgba(255,255,255,0.7)",
        )
    fig.update_layout(
        height=560,
        xaxis=dict(showticklabels=False, title=""),
        yaxis=dict(showticklabels=False, title=""),
        legend_title=colour,
        clickmode="event+select",
    )
    event = ui.figure(
        fig,
        "Map of the rationales",
        page=PAGE,
        data=pts.drop(columns=["raw"], errors="ignore"),
        key=f"{PAGE}.map.{scope}.{colour}.{k}",
        on_select="rerun",
        selection_mode="points",
    )
    _open(choice, pts, event)
    ui.table(
        mapped.clusters.drop(columns=["cluster"]),
        "Clusters of rationales",
        page=PAGE,
        hide_index=True,
    )


def _hover(row) -> str:
    text = "<br>".join(textwrap.wrap(str(row.rationale)[:400], 70))
    decision = getattr(row, "score", None)
    if decision is None:
        decision = getattr(row, "verdict", "")
    return f"{row.attribute} · {decision} · {row.system or 'no system'} · {row.agreement}<br>{text}"


def _open(choice: Choice, pts, event) -> None:
    points = list(getattr(getattr(event, "selection", None), "points", None) or [])
    if not points:
        return
    point = points[0]
    custom = point.get("customdata")
    if custom is None:
        return
    index = int(custom[0] if isinstance(custom, (list, tuple)) else custom)
    if index not in pts.index:
        return
    row = pts.loc[index]
    if not choice.pairwise:  # the Examples page is about comparisons: the rating opens here
        _rating_detail(choice, row)
        return
    example_link.open_example(
        dataset=choice.dataset,
        attribute=str(row["attribute"]),
        judge=choice.judge,
        context_id=str(row["context_id"]),
        first_id=str(row["first_id"]),
        second_id=str(row["second_id"]),
    )


def _rating_detail(choice: Choice, row) -> None:
    """The clicked rating up close: the candidate's text, the score and the whole answer."""
    cands = choice.ds.candidates
    hit = cands[(cands["context_id"].astype(str) == str(row["context_id"]))
                & (cands["candidate_id"].astype(str) == str(row["candidate_id"]))]  # fmt: skip
    st.markdown(
        f"**Selected: context {ui.safe(row['context_id'])}, candidate "
        f"{ui.safe(row['candidate_id'])}** ({ui.safe(row.get('system') or 'no system')}) · "
        f"{ui.safe(row['attribute'])} · score {ui.safe(row.get(choice.score, ''))} · "
        f"{ui.safe(row.get('agreement', ''))}"
    )
    left, right = st.columns(2)
    with left:
        st.caption("Candidate text")
        st.text(str(hit["text"].iloc[0]) if len(hit) and "text" in hit else "(no text)")
    with right:
        st.caption("The judge's answer")
        st.text(str(row.get("raw") or row["rationale"]))
