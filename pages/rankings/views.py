"""Figures of the Rankings and Leaderboard pages: systems with intervals, rank slopes, the
clickable probability matrix (a click opens the pair on the Examples page)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from pages.shell import ui
from pages.shell.example_link import open_example


def colours(n: int) -> list[str]:
    """A qualitative palette with at least ``n`` distinct colours where possible."""
    long = getattr(ui, "PALETTE_LONG", None) or px.colors.qualitative.Alphabet
    return list(ui.PALETTE) if n <= len(ui.PALETTE) else list(long)


def interval_figure(
    table: pd.DataFrame,
    column: str,
    lower: str,
    upper: str,
    name: str,
    colour: str,
    y_title: str,
    reference: str | None = None,
) -> go.Figure:
    """Systems with their scores and intervals; the human reference on a second axis,
    labelled by what it is (``reference``: ``Reference.source``)."""
    fig = go.Figure(
        go.Scatter(
            x=table["system"],
            y=table[column],
            mode="markers",
            name=name,
            marker=dict(size=10, color=colour),
            error_y=dict(
                type="data",
                symmetric=False,
                array=table[upper] - table[column],
                arrayminus=table[column] - table[lower],
            ),
            hovertemplate="%{x}<br>" + name + " = %{y:.3f}<extra></extra>",
        )
    )
    if "human_mean" in table:
        label = f"human reference: {reference}" if reference else "human reference"
        fig.add_trace(
            go.Scatter(
                x=table["system"],
                y=table["human_mean"],
                mode="markers",
                name=f"{label} (right axis)",
                yaxis="y2",
                marker=dict(symbol="diamond", size=9, color=ui.PALETTE[1]),
                hovertemplate="%{x}<br>reference = %{y:.3f}<extra></extra>",
            )
        )
        short = "human win-ratio" if reference and "win-ratio" in reference else "human score"
        fig.update_layout(
            yaxis2=dict(title=short, overlaying="y", side="right", showgrid=False, tickformat=".2f")
        )
    fig.update_layout(
        yaxis_title=y_title,
        yaxis_tickformat=".1f" if "Elo" not in name else ".0f",
        xaxis_type="category",
        height=420,
        legend=dict(orientation="h", y=1.1),
    )
    return fig


def rank_slope(long: pd.DataFrame, x: str, order: list[str], x_title: str) -> go.Figure:
    """Ranks (1 = best, on top) of each candidate or system across ``order`` (columns of x)."""
    n = long["candidate"].nunique()
    fig = px.line(
        long,
        x=x,
        y="rank",
        color="candidate",
        markers=True,
        category_orders={x: order},
        color_discrete_sequence=colours(n),
    )
    top = float(np.nanmax(long["rank"])) if len(long) else 1.0
    fig.update_layout(
        yaxis=dict(autorange="reversed", dtick=1, tickformat="d", range=[top + 0.5, 0.5]),
        yaxis_title="rank (1 = best)",
        xaxis_title=x_title,
        height=480,
    )
    return fig


def clickable_matrix(
    ids: list[str],
    block: np.ndarray,
    counts: np.ndarray,
    long: pd.DataFrame,
    *,
    title: str,
    page: str,
    key: str,
    example: dict,
) -> None:
    """The probability matrix of one context; a click on a cell opens that pair (first =
    row, second = column) on the Examples page. Registered for the report like
    ``ui.figure``.

    ``example``: dataset, attribute, judge and context_id of the pair.
    """
    hover = (
        "shown first: %{y}<br>shown second: %{x}<br>p(first wins) = %{customdata[0]:.3f}<br>"
        "samples: %{customdata[1]}<br>click: open this pair in Examples<extra></extra>"
    )
    heat = go.Figure(
        go.Heatmap(
            z=block,
            x=ids,
            y=ids,
            customdata=counts,
            zmin=0.0,
            zmax=1.0,
            zmid=0.5,
            colorscale=ui.DIVERGING,
            colorbar=dict(title="p(first wins)", tickformat=".1f"),
            hoverinfo="skip",
        )
    )
    # Plotly cannot select heatmap cells: an invisible marker on each compared cell takes
    # the hover and the click (Streamlit's point selection) instead.
    i, j = np.nonzero(np.isfinite(block))
    heat.add_trace(
        go.Scatter(
            x=[ids[k] for k in j],
            y=[ids[k] for k in i],
            mode="markers",
            marker=dict(size=max(12, 300 // max(len(ids), 1)), symbol="square", opacity=0),
            selected=dict(marker=dict(opacity=0)),
            unselected=dict(marker=dict(opacity=0)),
            customdata=np.stack([block[i, j], counts[i, j]], axis=-1),
            hovertemplate=hover,
            showlegend=False,
            name="cells",
        )
    )
    heat.update_layout(
        xaxis_title="shown second",
        yaxis_title="shown first",
        yaxis_autorange="reversed",
        xaxis_type="category",
        yaxis_type="category",
        height=480,
        hovermode="closest",
        clickmode="event+select",
    )
    event = ui.figure(
        heat,
        title,
        page=page,
        data=long,
        key=key,
        on_select="rerun",
        selection_mode="points",
    )
    points = list(getattr(getattr(event, "selection", None), "points", None) or [])
    if points:
        shown = {ui.fig_text(i): i for i in ids}  # the figure holds the ids escaped
        first = shown.get(str(points[0].get("y")))
        second = shown.get(str(points[0].get("x")))
        if first is not None and second is not None and first != second:
            open_example(**example, first_id=first, second_id=second)
