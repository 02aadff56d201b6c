"""A simulated judge with known biases (``data.synthetic.bias_demo``): the button that loads it, and
"What the page should find" (the true values beside the recovered ones), shown only while
that dataset is active."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from data.synthetic import bias_demo as demo
from pages.judge_bias import PAGE, Choice
from pages.services import judge_bias as svc
from pages.shell import state, ui

BUTTON = "judge_bias.demo"


@st.cache_resource(show_spinner="Simulating a judge with known biases…")
def _demo():
    """The demo dataset and its truth (seeded: the same for every session)."""
    return demo.bias_demo()


def is_active() -> bool:
    """Whether the active dataset is the unchanged simulated judge with known biases."""
    if state.active_name() != demo.NAME:
        return False
    return state.active().description == _demo()[1]["description"]


def offer() -> None:
    """An expander near the top with the button that loads the demo and makes it active."""
    with st.expander("Try it on a judge with known biases", expanded=False):
        st.markdown(
            "A simulated judge whose biases are known: it prefers the longer answer (length "
            "bias 1 logit per unit normalised word difference), favours the first slot more "
            "when the two candidates are close (bonus 1 × exp(−0.5 × quality gap)), reverses "
            "its 1st/3rd preference in three contexts (injected cycles) and ties 5 % of the "
            f"time. Loading it adds **{demo.NAME}** to your datasets and makes it active; "
            "your other datasets stay as they are. The page then shows what it should find."
        )
        if st.button("Load the simulated judge", key=BUTTON):
            with st.spinner("Simulating a judge with known biases…"):
                ds = demo.bias_demo()[0]  # a fresh copy: the session may change it
            state.add(demo.NAME, ds)
            st.rerun()


def figure(table) -> go.Figure:
    """Measured first-win rate per gap bin (with intervals) and the true rate."""
    rows = table[table["check"].str.startswith("first-win rate")]
    bins = table.attrs["bins"]
    found = rows["found"].astype(float).to_numpy()
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=bins["gap"], y=found, name="measured", mode="markers",
            error_y=dict(
                type="data", symmetric=False,
                array=rows["high"].astype(float).to_numpy() - found,
                arrayminus=found - rows["low"].astype(float).to_numpy(),
            ),
        )
    )  # fmt: skip
    fig.add_trace(go.Scatter(x=bins["gap"], y=bins["true"], name="true", mode="lines+markers"))
    fig.add_hline(y=0.5, line_dash="dash", line_color="black")
    fig.update_layout(
        xaxis_title="quality gap (human score gap; bin median)",
        yaxis_title="first-position win rate",
        height=340,
        legend=dict(orientation="h", y=1.15),
    )
    return fig


def _shown(value) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def show(choice: Choice) -> None:
    """'What the page should find', only while the demo is active."""
    if not is_active():
        return
    truth = _demo()[1]
    st.subheader("What the page should find")
    if (choice.attribute, choice.judge.judge) != (truth["attribute"], truth["judge"]):
        st.info(f"The truth is about judge **{truth['judge']}** on **{truth['attribute']}**.")
        return
    if len(choice.ds.candidates) != len(state.active().candidates):
        st.info(
            "The Analysis scope in the sidebar leaves some systems out, so the recovered "
            "values are not comparable with the truth: bring every system back to check them."
        )
        return
    args = (choice.ds, choice.attribute, choice.judge.judge)
    table = demo.truth_table(
        truth,
        svc.style_coefficients(*args)[0],
        svc.profile_by_gap(*args, st.session_state.get("judge_bias.n_bins", 5)),
        svc.pairs(*args),
        svc.cycles_summary(*args)[0],
    )
    shown = table.assign(
        **{c: table[c].map(_shown) for c in ("true", "found", "low", "high")},
        ok=table["ok"].map({True: "✓", False: "✗"}),
    ).replace("nan", "")
    shown.attrs = {}  # the bins are for the plot
    ui.table(shown, "True values beside the recovered ones", page=PAGE, hide_index=True)
    st.caption(
        f"{int(table['ok'].sum())} of {len(table)} checks pass: ✓ when the interval covers "
        "the true value (length coefficient from the style coefficients below; first-win "
        "rate per gap bin from the position-bias profile) or, for cycles, when exactly the "
        "injected contexts and the ones the 3-sample noise adds at this seed have a "
        "circular triad."
    )
    if len(table.attrs["bins"]):
        ui.figure(figure(table), "True and measured first-position win rate by gap", page=PAGE)
