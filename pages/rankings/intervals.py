"""Rankings page: how sure the systems ranking is. Rank intervals as a forest plot (with
Chatbot Arena's rank marked), separability, and which system is significantly better than
which as a matrix. The numbers come from ``ranking.rank_intervals`` through
``pages.services.leaderboard.system_ranking``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from pages.shell import ui

PAGE = "Rankings"
#: Above this many systems the two plots stack, each at the page's full width.
WIDE = 15

#: How each interval choice reads in a sentence.
_HOW = {
    "fisher": "the 95 % Fisher intervals of the Bradley–Terry scores",
    "bootstrap over comparisons": "bootstrap replicates resampling single comparisons",
    "bootstrap over contexts": "bootstrap replicates resampling whole contexts",
}


def render(ds, attribute: str, judge: str, setting, result) -> None:
    """Draw the rank intervals of ``result`` (a ``SystemRanking``)."""
    st.markdown("**How sure is this ranking? Rank intervals and separability**")
    if result is None:
        st.caption("No system ranking, so no rank intervals.")
        return
    table = result.table
    ranked = table[table["rank"].notna()].copy()
    if len(ranked) < 2 or result.better is None:
        st.info(
            "Rank intervals need at least two ranked systems; "
            f"{len(ranked)} system(s) could be ranked here."
        )
        return
    how = _HOW.get(result.intervals, result.intervals)
    n_pairs = len(ranked) * (len(ranked) - 1) // 2
    better = result.better.loc[ranked["system"], ranked["system"]]
    n_sig = int(better.to_numpy().sum())
    m = st.columns(3)
    with m[0]:
        ui.metric(
            "Separability",
            "–" if not np.isfinite(result.separability) else f"{result.separability:.0%}",
            "share of system pairs whose 95 % score intervals do not overlap (Arena-Hard)",
        )
    with m[1]:
        ui.metric(
            "Significantly ordered pairs",
            f"{n_sig} of {n_pairs}",
            "pairs where one system is significantly better than the other",
        )
    with m[2]:
        tied_first = int((ranked["arena_rank"] == 1).sum())
        ui.metric(
            "Systems that could be first",
            tied_first,
            "Arena rank 1: no system is significantly better than these",
        )
    # a few systems side by side; a long list gets the full width, one plot under the other
    wide = len(ranked) > WIDE
    left, right = (st.container(), st.container()) if wide else st.columns([1, 1])
    with left:
        fig, data = _forest(ranked)
        ui.figure(fig, "Rank intervals of the systems", page=PAGE, data=data)
    with right:
        heat = _better_heatmap(better)
        ui.figure(
            heat,
            "Significantly better (row vs column)",
            page=PAGE,
            data=better.astype(int).reset_index(),
        )
    st.caption(
        f"Rank intervals from {how}: the range of ranks each system plausibly holds (1 = "
        "best). Arena rank = 1 + the number of systems whose interval lies wholly above this "
        "one's (Chatbot Arena's rule). A cell of the matrix is 1 where the row system is "
        "significantly better than the column system at 95 %, −1 where it is worse."
    )


def _forest(ranked: pd.DataFrame) -> tuple[go.Figure, pd.DataFrame]:
    """Systems best first; a line from the best to the worst plausible rank, a dot at the
    rank, a diamond at the Arena rank."""
    data = ranked[["system", "rank", "rank_low", "rank_high", "arena_rank", "bt_score"]]
    data = data.reset_index(drop=True)
    names = data["system"].astype(str).tolist()
    fig = go.Figure()
    xs, ys = [], []
    for name, lo, hi in zip(names, data["rank_low"], data["rank_high"], strict=True):
        xs += [lo, hi, None]
        ys += [name, name, None]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines",
            line=dict(color=ui.PALETTE[0], width=4),
            name="rank interval",
            hoverinfo="skip",
        )
    )
    hover = [
        f"{n}<br>rank {int(r)}, interval {int(lo)}–{int(hi)}<br>Arena rank {int(a)}"
        for n, r, lo, hi, a in zip(
            names, data["rank"], data["rank_low"], data["rank_high"], data["arena_rank"],
            strict=True,
        )
    ]  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=data["rank"],
            y=names,
            mode="markers",
            marker=dict(color=ui.PALETTE[0], size=10),
            name="rank",
            text=hover,
            hovertemplate="%{text}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=data["arena_rank"],
            y=names,
            mode="markers",
            marker=dict(color=ui.PALETTE[1], size=11, symbol="diamond-open", line=dict(width=2)),
            name="Arena rank",
            text=hover,
            hovertemplate="%{text}<extra></extra>",
        )
    )
    fig.update_layout(
        height=max(320, (28 if len(names) <= WIDE else 18) * len(names) + 140),
        xaxis=dict(title="rank (1 = best)", side="top"),
        yaxis=dict(autorange="reversed", type="category"),
        legend=dict(orientation="h"),
    )
    fig.update_xaxes(range=[0.5, len(names) + 0.5], dtick=1 if len(names) <= 20 else 5)
    return fig, data


def _better_heatmap(better: pd.DataFrame) -> go.Figure:
    """+1 where the row is significantly better than the column, -1 where worse, 0 neither;
    rows and columns in rank order (best first); hover names both systems."""
    b = better.to_numpy(dtype=bool)
    z = b.astype(float) - b.T.astype(float)
    np.fill_diagonal(z, np.nan)
    values = pd.DataFrame(z, index=better.index, columns=better.columns)
    rows = [str(x) for x in better.index]
    hover = pd.DataFrame(
        [
            [
                f"{r} significantly better than {c}" if b[i, j]
                else f"{c} significantly better than {r}" if b[j, i]
                else ("same system" if i == j else f"{r} and {c}: not significantly different")
                for j, c in enumerate(rows)
            ]
            for i, r in enumerate(rows)
        ],
        index=better.index,
        columns=better.columns,
    )  # fmt: skip
    fig = ui.heatmap(values, hover, zmin=-1, zmax=1, scale=ui.DIVERGING, fmt=".0f")
    fig.update_layout(xaxis_title="column system", yaxis_title="row system")
    if len(rows) > WIDE:  # every name on both axes, in small type, cells about square
        fig.update_layout(height=16 * len(rows) + 260)
        fig.update_xaxes(dtick=1, tickfont=dict(size=9))
        fig.update_yaxes(dtick=1, tickfont=dict(size=9))
        fig.update_traces(texttemplate="")  # the colours say it; numbers in tiny cells clutter
    return fig
