"""Small building blocks every page uses: palette, metrics with a help line, figures with
downloads, a labelled heatmap, error display, and the registry of views that the Report page
exports."""

from __future__ import annotations

import contextlib
import logging
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from data.schema import DataError
from data.spreadsheet import spreadsheet_csv

log = logging.getLogger("judgescope")

# Okabe–Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
# Diverging and sequential scales that stay readable for colour-blind users.
DIVERGING = "RdBu"
SEQUENTIAL = "Cividis"

pio.templates["judgescope"] = go.layout.Template(
    layout=go.Layout(colorway=PALETTE, font=dict(size=13), margin=dict(l=40, r=20, t=50, b=40))
)
pio.templates.default = "plotly_white+judgescope"

REPORT = "app.report"


def metric(label: str, value, help_line: str, *, delta=None, delta_color="normal") -> None:
    """A metric with one line underneath saying what it means."""
    st.metric(label, value, delta=delta, delta_color=delta_color)
    st.caption(help_line)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "figure"


def figure(fig: go.Figure, title: str, *, page: str, data: pd.DataFrame | None = None) -> None:
    """Show a plotly figure with PNG download (mode bar) and a CSV of its data; keep it for the report."""
    fig.update_layout(title=title)
    config = {"toImageButtonOptions": {"format": "png", "filename": slug(title), "scale": 2}}
    st.plotly_chart(fig, config=config, key=f"{page}.fig.{slug(title)}")
    if data is not None:
        table(data, title, page=page, show=False)
    remember(page, title, fig=fig, data=data)


def heatmap(
    values: pd.DataFrame,
    hover: pd.DataFrame,
    *,
    zmin,
    zmax,
    scale,
    fmt=".2f",
    reverse=False,
    zmid=None,
) -> go.Figure:
    """A labelled heatmap with the value printed in each cell and details on hover.

    ``values`` (rows x columns, NaN shown as "–") gives the colours and printed numbers
    (formatted with ``fmt``); ``hover`` (same shape) the text shown on hover. ``scale`` is a
    plotly colour scale (``DIVERGING`` or ``SEQUENTIAL``), ``reverse`` flips it, ``zmin`` /
    ``zmax`` / ``zmid`` fix its range. Rows read top to bottom, as in the table.
    """
    z = values.to_numpy(dtype=float)
    text = np.where(np.isfinite(z), np.vectorize(lambda v: format(v, fmt))(np.nan_to_num(z)), "–")
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[str(c) for c in values.columns],
            y=[str(i) for i in values.index],
            text=text,
            texttemplate="%{text}",
            customdata=hover.to_numpy(dtype=object),
            hovertemplate="%{y}<br>%{x}<br>%{customdata}<extra></extra>",
            colorscale=scale,
            reversescale=reverse,
            zmin=zmin,
            zmax=zmax,
            zmid=zmid,
        )
    )
    fig.update_layout(height=max(320, 34 * len(values) + 140), yaxis=dict(autorange="reversed"))
    return fig


def table(df: pd.DataFrame, title: str, *, page: str, show: bool = True, **kwargs) -> None:
    """Show a table with a CSV download button (formulas neutralised); keep it for the report."""
    if show:
        st.dataframe(df, **kwargs)
        remember(page, title, data=df)
    st.download_button(
        f"⬇ CSV: {title}",
        spreadsheet_csv(df).encode("utf-8"),
        file_name=f"{slug(title)}.csv",
        mime="text/csv",
        key=f"{page}.csv.{slug(title)}",
        on_click="ignore",
    )


def remember(page: str, title: str, *, fig: go.Figure | None = None, data=None) -> None:
    """Register a view for the Report page (latest version of each title per page wins)."""
    views = st.session_state.setdefault(REPORT, {})
    views.setdefault(page, {})[title] = {"fig": fig, "data": data}


def settings(page: str, values: dict) -> None:
    """Record the settings behind a page's views (shown in the report)."""
    st.session_state.setdefault(REPORT + ".settings", {})[page] = dict(values)


def show_error(err: Exception, *, what: str = "") -> None:
    """A readable message, never a stack trace."""
    if isinstance(err, DataError):
        head = f"{what}: " if what else ""
        st.error(
            head + f"{len(err.problems)} problem(s) found. Nothing already loaded was changed."
        )
        st.markdown("\n".join(f"- {p}" for p in err.problems[:50]))
    else:
        st.error(f"{what + ': ' if what else ''}{err}")


@contextlib.contextmanager
def guard(what: str):
    """Run a block; show any exception as a message (logged with its trace on the server)."""
    try:
        yield
    except Exception as err:  # the page must never show a stack trace
        log.exception("%s failed", what)
        show_error(err, what=what)


def select(label: str, options, *, key: str, index: int = 0, **kwargs):
    """A selectbox that forgets a remembered choice no longer among ``options``.

    After switching datasets a page's attribute or judge may not exist any more; the widget
    then starts again from ``index`` instead of failing.
    """
    options = list(options)
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]
    return st.selectbox(
        label, options, index=min(index, max(len(options) - 1, 0)), key=key, **kwargs
    )


def need(condition: bool, message: str) -> None:
    """Stop the page with a friendly note when the data cannot support it."""
    if not condition:
        st.info(message)
        st.stop()
