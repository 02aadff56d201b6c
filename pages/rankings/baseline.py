"""Win rates against a baseline system (issue 22 item 4), on Rankings and the Leaderboard:
a baseline picker (one setting for both pages, in the URL as ``against``), the table of every
system's win rate against it with its 95 % interval (``pages.services.arena.baseline_table``)
and a dot plot with the intervals, the baseline marked at 50 %."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from data.natural import natural_sorted
from pages.services import arena
from pages.shell import state, ui

#: The kept setting (shared by Rankings and the Leaderboard) and its URL parameter.
KEY, URL = "app.baseline", "against"

METHOD = {
    "bootstrap": "bootstrap percentiles, each replicate anchored at the baseline (Arena-Hard)",
    "fisher": "Fisher (Wald) interval of the score difference, through the sigmoid",
    "none": "no interval",
}


def pick(ds, attribute: str, judge: str, *, key_suffix: str = "") -> str | None:
    """The baseline picker: the systems in natural order, the default (the baseline an
    Arena-Hard file names, else the system meeting the most others) chosen first."""
    systems, default = arena.baseline_options(ds, attribute, judge)
    if not systems:
        return None
    options = natural_sorted(systems)
    return ui.select(
        "Baseline system",
        options,
        index=options.index(default),
        key=state.keep(KEY, url=URL),
        help="Win rates are against this system: sigmoid(score − baseline's score) of the "
        "Bradley–Terry fit, 50 % for the baseline itself. Default: the baseline the file "
        "names (Arena-Hard), else the system that meets the most others.",
    )


def figure(table, baseline: str) -> go.Figure:
    """Dot plot: one row per system (best on top), its win rate with the interval; a line
    at 50 % and the baseline's dot marked."""
    shown = table.iloc[::-1]
    is_base = (shown["system"] == baseline).to_numpy()
    colour = np.where(is_base, ui.PALETTE[1], ui.PALETTE[0])
    fig = go.Figure(
        go.Scatter(
            x=shown["win_rate"],
            y=shown["system"],
            mode="markers",
            marker=dict(
                size=np.where(is_base, 13, 8),
                color=colour,
                symbol=np.where(is_base, "diamond", "circle"),
            ),
            error_x=dict(
                type="data",
                symmetric=False,
                array=shown["upper"] - shown["win_rate"],
                arrayminus=shown["win_rate"] - shown["lower"],
            ),
            customdata=np.stack([shown["lower"], shown["upper"]], axis=-1),
            hovertemplate="%{y}<br>%{x:.1f} % (%{customdata[0]:.1f} – %{customdata[1]:.1f})"
            "<extra></extra>",
        )
    )
    fig.add_vline(x=50, line_dash="dot", line_color="grey")
    fig.update_layout(
        xaxis=dict(title=f"win rate against {ui.short(baseline, 40)} (%)", range=[0, 100]),
        yaxis=dict(type="category", title=None),
        height=max(300, 18 * len(table) + 80),
        showlegend=False,
        margin=dict(l=10),
    )
    return fig


def render(
    ds,
    attribute: str,
    judge: str,
    *,
    intervals: str,
    rule: tuple,
    resample: str = "comparisons",
    elo_band: bool = True,
    page: str,
) -> None:
    """The baseline picker, the win-rate table and the dot plot of one judge (``elo_band``
    as the page's own ``system_ranking`` call: the same cached fit)."""
    baseline = pick(ds, attribute, judge)
    if baseline is None:
        return
    table = arena.baseline_table(
        ds, attribute, judge, baseline, intervals, rule, resample, elo_band
    )
    if table is None:
        return
    method = METHOD.get(table.attrs.get("method", "none"), "")
    left, right = st.columns([3, 2])
    with left:
        ui.figure(
            figure(table, baseline),
            f"Win rate against {ui.short(baseline, 40)}, {ui.short(judge, 40)}",
            page=page,
            data=table,
        )
    with right:
        ui.table(
            table.round(2),
            f"Win rates against {ui.short(baseline, 40)}, {ui.short(judge, 40)}",
            page=page,
            hide_index=True,
        )
    st.caption(
        "Win rate against the baseline: sigmoid(score − baseline's score) of the systems' "
        f"Bradley–Terry scores, in %; 95 % interval: {method}. ``vs_baseline``: battles with "
        "the baseline; ``observed``: the share of them won (each counted with its weight, "
        "a tie as half)."
    )
