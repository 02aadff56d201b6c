"""Rankings page: tie models (Davidson, Rao–Kupper) beside "a tie is half a win".

For a judge that answers "tie": the three models' system scores (a dumbbell per system), their
ranks side by side, the tie parameter with its interval, observed against predicted tie rates
and the three-outcome log-likelihoods (``pages.services.ties``). A judge without ties gets one
line.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from data.comparative.ties import MODEL_LABELS
from pages.rankings.views import rank_slope
from pages.services import common
from pages.services import ties as svc
from pages.shell import ui

PAGE = "Rankings"
_COLOURS = dict(zip(MODEL_LABELS, (ui.PALETTE[0], ui.PALETTE[1], ui.PALETTE[2]), strict=True))
_PARAM = {"Davidson": "ν", "Rao–Kupper": "θ"}


def render(ds, attribute: str, judge: str, setting) -> None:
    """Draw the tie-model comparison for one judge of ``attribute``."""
    res, why = svc.tie_comparison(ds, attribute, judge)
    if res is None and not why:
        return  # no systems to rank: the systems section above says why
    st.markdown("#### Ties: Davidson and Rao–Kupper against “a tie is half a win”")
    if res is None:
        st.caption(f"No tie models: {ui.safe(why, 400)}")
        return
    summary = res.summary.set_index("model")
    observed = float(summary["observed_tie_rate"].iloc[0])
    if not observed > 0:
        st.caption(
            f"{ui.safe(judge)} gave no tie among its {res.n_comparisons:,} usable answers on "
            f"{ui.safe(attribute)}: the tie models reduce to plain Bradley–Terry, nothing to "
            "compare."
        )
        return
    table = res.table
    moved = {m: int((table[f"rank_{c}"] != table["rank_half_win"]).sum())
             for m, c in MODEL_LABELS.items()}  # fmt: skip
    ui.metric_row(
        [
            (
                "Observed tie rate",
                f"{observed:.1%}",
                f"ties among {res.n_comparisons:,} answers between two systems",
            ),
            *[
                (
                    f"{model} {_PARAM[model]}",
                    common.fmt(summary.loc[model, "tie_param"]),
                    f"95% Fisher interval {_interval_text(summary.loc[model])}; predicts a tie "
                    f"rate of {summary.loc[model, 'predicted_tie_rate']:.1%}",
                )
                for model in ("Davidson", "Rao–Kupper")
            ],
            (
                "Rank changes, Rao–Kupper",
                f"{moved['Rao–Kupper']} of {len(table)}",
                f"systems ranked differently than under half-win (Davidson: {moved['Davidson']})",
            ),
        ],
        page=PAGE,
    )
    many = len(table) > 20  # a slope chart of many systems is a tangle: rank against rank
    left, right = (st.container(), st.container()) if many else st.columns([3, 2])
    with left:
        ui.figure(_dumbbell(table), "System scores under three tie models", page=PAGE,
                  data=table)  # fmt: skip
    with right:
        long = table.melt(
            id_vars="system",
            value_vars=[f"rank_{c}" for c in MODEL_LABELS.values()],
            var_name="model",
            value_name="rank",
        ).rename(columns={"system": "candidate"})
        long["model"] = long["model"].map({f"rank_{c}": m for m, c in MODEL_LABELS.items()})
        if many:
            ui.figure(_rank_scatter(table), "Rank under half-win against Rao–Kupper",
                      page=PAGE, data=long)  # fmt: skip
        else:
            fig = rank_slope(long, "model", list(MODEL_LABELS), "")
            fig.update_layout(legend_title_text="system")
            ui.figure(fig, "Ranks of the systems under three tie models", page=PAGE, data=long)
    ui.table(_summary_table(res.summary), "Tie models compared", page=PAGE, hide_index=True)
    st.caption(_changes(table))
    st.caption(
        "Half-win: Bradley–Terry with a tie worth half a win to each side. Davidson: "
        "P(tie) = ν√(πᵢπⱼ) / (πᵢ + πⱼ + ν√(πᵢπⱼ)); Rao–Kupper: P(i beats j) = πᵢ / (πᵢ + θπⱼ). "
        "The log-likelihoods count three outcomes; half-win is read as Davidson with ν = 2 "
        "(P(win) = p², P(tie) = 2p(1 − p)), which predicts many more ties than a judge with "
        "few ties gives. Ties are the judge's own “tie” answers"
        + (", so the debias setting does not apply here." if setting.active else ".")
    )
    for note in res.notes:
        if not note.startswith("log-likelihoods"):  # said in the caption above
            st.caption(f"ℹ️ {ui.safe(note, 400)}")


def _interval_text(row) -> str:
    low, high = row["tie_low"], row["tie_high"]
    if math.isfinite(low) and math.isfinite(high):
        return f"[{low:.3f}, {high:.3f}]"
    return "n/a"


def _rank_scatter(table: pd.DataFrame) -> go.Figure:
    """Each system's rank under half-win (x) against Rao–Kupper (y); off the diagonal: moved."""
    n = len(table)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[1, n], y=[1, n], mode="lines", showlegend=False,
                             line=dict(color="#c8c8c8", dash="dot"), hoverinfo="skip"))  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=table["rank_half_win"],
            y=table["rank_rao_kupper"],
            mode="markers",
            marker=dict(color=_COLOURS["Rao–Kupper"], size=8),
            text=table["system"],
            customdata=table["rank_davidson"],
            hovertemplate="%{text}<br>half-win %{x:.0f}, Rao–Kupper %{y:.0f}, "
            "Davidson %{customdata:.0f}<extra></extra>",
            showlegend=False,
        )
    )
    fig.update_layout(height=480, xaxis_title="rank under half-win (1 = best)",
                      yaxis_title="rank under Rao–Kupper")  # fmt: skip
    fig.update_yaxes(autorange="reversed", scaleanchor="x")
    fig.update_xaxes(autorange="reversed")
    return fig


def _dumbbell(table: pd.DataFrame) -> go.Figure:
    """One row per system (best half-win score on top): a line across its three scores."""
    cols = list(MODEL_LABELS.values())
    lo, hi = table[cols].min(axis=1), table[cols].max(axis=1)
    fig = go.Figure()
    xs, ys = [], []
    for s, a, b in zip(table["system"], lo, hi, strict=True):
        xs += [a, b, None]
        ys += [s, s, None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="#c8c8c8", width=3),
                             hoverinfo="skip", showlegend=False))  # fmt: skip
    for model, col in MODEL_LABELS.items():
        ui.dot_series(
            fig,
            table,
            "system",
            col,
            model,
            customdata=table[f"rank_{col}"],
            hovertemplate=f"%{{y}}<br>{model}: %{{x:.3f}} (rank %{{customdata:.0f}})"
            "<extra></extra>",
            color=_COLOURS[model],
            size=9,
        )
    fig.update_layout(
        height=max(320, 22 * len(table) + 140),
        xaxis_title="score (log-strength, mean 0)",
        yaxis=dict(autorange="reversed", type="category"),
        legend=dict(orientation="v", x=1.02, y=1, yanchor="top"),
    )
    return fig


def _summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    def interval(r):
        if not (math.isfinite(r["tie_low"]) and math.isfinite(r["tie_high"])):
            return "–"
        return f"[{r['tie_low']:.3f}, {r['tie_high']:.3f}]"

    return pd.DataFrame(
        {
            "model": summary["model"],
            "tie parameter": [
                "–" if not math.isfinite(v) else f"{_PARAM.get(m, '')} = {v:.3f}"
                for m, v in zip(summary["model"], summary["tie_param"], strict=True)
            ],
            "95% interval": summary.apply(interval, axis=1),
            "observed tie rate": summary["observed_tie_rate"].map("{:.1%}".format),
            "predicted tie rate": summary["predicted_tie_rate"].map("{:.1%}".format),
            "log-likelihood": summary["log_lik"].round(1),
            "Kendall vs half-win": summary["kendall_vs_half_win"].round(3),
        }
    )


def _changes(table: pd.DataFrame) -> str:
    """What the tie models change in the order, in one sentence (Markdown, names escaped)."""
    shift = (table["rank_rao_kupper"] - table["rank_half_win"]).abs()
    same_dav = bool((table["rank_davidson"] == table["rank_half_win"]).all())
    head = (
        "Davidson keeps the half-win order" if same_dav else "Davidson changes the half-win order"
    )
    if not (shift > 0).any():
        return head + "; so does Rao–Kupper."
    top = table.assign(shift=shift).sort_values("shift", ascending=False, kind="stable")
    moves = [
        f"{ui.safe(r.system, 40)} {int(r.rank_half_win)} → {int(r.rank_rao_kupper)}"
        for r in top.head(5).itertuples()
        if r.shift > 0
    ]
    return (
        f"{head}; Rao–Kupper moves {int((shift > 0).sum())} system(s), most: "
        + ", ".join(moves)
        + "."
    )
