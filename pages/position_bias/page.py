"""Position bias: how often the first slot wins, how consistent the judge is when the order is
swapped, and a live decision threshold that re-ranks every context."""

import numpy as np
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from pages.services import bias as svc
from pages.services import common, comparisons
from pages.shell import choices, debias, state, ui

PAGE = "Position bias"

st.title("Position bias")
st.caption(
    "An unbiased judge shown every pair in both orders wins half of its comparisons in the "
    "first position. A decision threshold tau (first wins when p > tau) can correct a bias; "
    "the setting chosen here is the one the Rankings page ranks with."
)
state.scope_caption()

ds, attribute, judge = choices.attribute_and_judge(
    "bias",
    ", so there is no presentation order to study. Run a pairwise judge on the **Judge** "
    "page, or load the demo, SummEval (ChatGPT verdicts in both orders) or PandaLM on the "
    "**Data** page.",
)

with ui.guard("Measuring position bias"):
    table = svc.bias_table(ds)
    st.subheader("First-position win rate per judge and attribute")
    bars = ui.judge_bars(
        table, "first_position_win_rate", hover_data=["n_comparisons", "swap_consistency"]
    )
    ui.unbiased_line(bars, "no bias (0.5)", "top left")
    bars.update_layout(
        yaxis_title="P(first position wins) at tau = 0.5", yaxis_tickformat=".1f", height=380
    )
    ui.figure(bars, "First-position win rate per judge and attribute", page=PAGE, data=table)
    if "weighted" in table and table["weighted"].any():
        st.caption(
            "ℹ️ Some judges' comparisons carry weights (the file's weight column, e.g. "
            "Arena-Hard's strong verdicts counting 3 times): their first-position win rate "
            "counts each comparison with its weight; n_comparisons counts each once."
        )
    with st.expander("Table: win rate, swap consistency and balanced threshold"):
        ui.table(
            table.round(4), "Position bias per judge and attribute", page=PAGE, hide_index=True
        )

st.subheader("Debias: re-rank with a threshold")


#: The metrics beside tau: (label, field of the rule update, help line, delta colour).
METRICS = [
    (
        "First-position win rate",
        "position_bias",
        "share of comparisons the first slot wins; 0.5 = balanced",
        "off",
    ),
    (
        "Swap consistency",
        "swap_consistency",
        "share of pairs judged in both orders whose two decisions agree",
        "normal",
    ),
    (
        "Pairwise accuracy",
        "accuracy",
        "share of comparisons whose decision matches the human order",
        "normal",
    ),
    (
        "Spearman",
        "spearman",
        "win-ratio ranking vs humans per context, mean over contexts",
        "normal",
    ),
]


def delta(after, before, moved):
    """The change shown under a metric; none before the threshold moved or when undefined."""
    if not moved or common.fmt(after) == "n/a" or common.fmt(before) == "n/a":
        return None
    return f"{after - before:+.3f}"


@st.fragment
def threshold_section(ds, attribute, judge):
    """Moving the slider reruns only this part: cached P and reference, a numba re-rank."""
    with ui.guard("Re-ranking at the threshold"):
        setting = debias.controls(ds, attribute, judge, key="bias")
        mode = setting.mode
        tau = setting.tau
        if mode == "per_context":
            # NaN for a context without comparisons: it has no threshold and no say here
            shown_tau = f"{common.fmt(np.nanmin(tau), 2)}–{common.fmt(np.nanmax(tau), 2)}"
        else:
            shown_tau = common.fmt(tau, 2)
        ui.settings(
            PAGE,
            {
                **debias.view_settings(attribute, judge, setting),
                "tau": shown_tau,
                **state.scope_settings(),
            },
        )

        # the metrics under the setting's rule (a calibration: its mapped P decided at 0.5)
        before = svc.rule_update(ds, attribute, judge, setting.raw_rule)
        if setting.rule == setting.raw_rule:  # no correction: the same numbers, once
            after = before
        else:
            after = svc.rule_update(ds, attribute, judge, setting.rule)
        ref = comparisons.human_reference(ds, attribute, judge)

        calibrated = mode in svc.CALIBRATION_MODES
        moved = mode in ("per_context", *svc.CALIBRATION_MODES) or (mode != "off" and tau != 0.5)

        cols = st.columns(5)
        with cols[0]:
            ui.metric(
                "tau",
                shown_tau,
                (
                    "threshold in use, on the calibrated probabilities"
                    if calibrated
                    else "threshold in use (0.5: no correction)"
                )
                + (f"; alpha = {common.fmt(setting.alpha)}" if setting.alpha else ""),
            )
        for col, (label, field, help_line, colour) in zip(cols[1:], METRICS, strict=True):
            with col:
                value = getattr(after, field)
                ui.metric(
                    label,
                    common.fmt(value),
                    help_line,
                    delta=delta(value, getattr(before, field), moved),
                    delta_color=colour,
                )
        if ref is None:
            note = "No human reference in this dataset: accuracy and Spearman are not available."
        elif ref.same_as_judge:
            note = (
                f"Reference: {ui.safe(ref.source, 300)} — the same verdicts as the judge, so "
                "accuracy and "
                "Spearman are not an independent check."
            )
        else:
            note = f"Reference: {ui.safe(ref.source, 300)}."
        rule = svc.decision_text(setting)
        if calibrated:
            base = (
                f"Metrics on the calibrated probabilities ({rule}); deltas compare with the "
                "probabilities as they are (tau = 0.5). "
            )
        else:
            base = f"Metrics with {rule}; deltas compare with tau = 0.5. "
        st.caption(base + note)
        left_out = svc.unparsed_note(svc.unparsed(ds, attribute, judge))
        if left_out:
            st.caption(f"ℹ️ {ui.safe(left_out, 400)}")
        weighted = svc.weights_note(ds, attribute, judge)
        if weighted:
            st.caption(f"ℹ️ {ui.safe(weighted, 400)}")

        curve = svc.tau_curve(ds, attribute, judge)
        fig = go.Figure()
        for column, name, colour in [
            ("pairwise_accuracy", "pairwise accuracy", ui.PALETTE[0]),
            ("spearman", "Spearman (mean over contexts)", ui.PALETTE[2]),
            ("first_position_win_rate", "first-position win rate", ui.PALETTE[1]),
        ]:
            if curve[column].notna().any():
                fig.add_trace(
                    go.Scatter(
                        x=curve["tau"],
                        y=curve[column],
                        name=name,
                        mode="lines",
                        line=dict(color=colour),
                    )
                )
        if mode == "per_context":
            fig.add_vrect(
                x0=float(np.nanmin(tau)),
                x1=float(np.nanmax(tau)),
                fillcolor=ui.PALETTE[3],
                opacity=0.15,
                line_width=0,
                annotation_text="per-context thresholds",
            )
        elif not calibrated:
            fig.add_vline(
                x=float(tau),
                line_dash="dash",
                line_color=ui.PALETTE[3],
                annotation_text=f"tau = {shown_tau}",
            )
        fig.update_layout(
            xaxis_title="tau",
            yaxis_title="value",
            xaxis_tickformat=".1f",
            yaxis_tickformat=".2f",
            height=380,
            legend=dict(orientation="h", y=1.12),
        )
        ui.figure(fig, "Accuracy against the threshold tau", page=PAGE, data=curve)
        st.caption(
            "The curve decides the judge's probabilities as they are at each threshold tau "
            "(the threshold modes)"
            + (
                f"; it does not show {setting.label}, whose numbers are the metrics above."
                if calibrated
                else "."
            )
        )
        with st.expander("Every context re-ranked"):
            pm = comparisons.pmatrix(ds, attribute, judge)
            ui.table(
                svc.rerank_frame(pm, before, after).round(4),
                "Spearman per context before and after",
                page=PAGE,
                hide_index=True,
            )


threshold_section(ds, attribute, judge)

with ui.guard("Comparing the two presentation orders"):
    st.subheader("The same pair in both orders")
    pairs = svc.order_pairs(ds, attribute, judge)
    if not len(pairs):
        st.info(
            "No pair was judged in both orders by this judge, so the two orders cannot be "
            "compared (PandaLM, for instance, keeps one order). Judge with a 'symmetric' "
            "comparison set on the **Judge** page to see it."
        )
    else:
        long = pairs.melt(
            id_vars=["context_id", "candidate_i", "candidate_j"],
            value_vars=["i_first", "i_second"],
            var_name="order",
            value_name="p",
        )
        long["order"] = long["order"].map(
            {"i_first": "candidate shown first", "i_second": "candidate shown second"}
        )
        hist = px.histogram(
            long, x="p", color="order", barmode="overlay", opacity=0.6, nbins=21, range_x=[0, 1]
        )
        hist.update_layout(xaxis_title="P(candidate wins)", yaxis_title="pairs", height=360)
        shift = px.histogram(pairs, x="shift", nbins=41, range_x=[-1, 1])
        shift.add_vline(x=0.0, line_dash="dash", line_color="black")
        shift.update_layout(
            xaxis_title="P(win | first) − P(win | second)", yaxis_title="pairs", height=360
        )
        p_left, p_right = st.columns(2)
        with p_left:
            ui.figure(hist, "P(win) of the same candidate in each order", page=PAGE, data=pairs)
        with p_right:
            ui.figure(shift, "Gain from being shown first, per pair", page=PAGE)
        ui.metric(
            "Mean gain from the first slot",
            common.fmt(pairs["shift"].mean()),
            f"over {len(pairs)} pairs judged in both orders; 0 = no position bias",
        )
