"""Small building blocks every page uses: palette, metrics with a help line, figures with
downloads, a labelled heatmap, error display, and the registry of views that the Report page
exports."""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import uuid
import weakref

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from data.io.spreadsheet import spreadsheet_csv
from data.schema import DataError
from pages.shell import session

log = logging.getLogger("judgescope")

# Okabe–Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
# Okabe–Ito followed by Paul Tol's muted scheme: 17 colours, so that 9 to 17 traces (12
# candidates, many judges) never share one. Its first eight are PALETTE, so a figure with few
# traces looks the same as before.
PALETTE_LONG = PALETTE + [
    "#CC6677",
    "#332288",
    "#DDCC77",
    "#117733",
    "#88CCEE",
    "#882255",
    "#44AA99",
    "#999933",
    "#AA4499",
]
# Diverging and sequential scales that stay readable for colour-blind users.
DIVERGING = "RdBu"
SEQUENTIAL = "Cividis"

# Room above the title for plotly's mode bar (its buttons sit in the top 30 px).
_MODEBAR_ROOM = 34
_TITLE_LINE = 20
_TITLE_WIDTH = 60  # characters that fit a half-width chart at 15 px; longer titles get 13 px

_AXIS = dict(hoverformat=".4~g", automargin=True)
pio.templates["judgescope"] = go.layout.Template(
    layout=go.Layout(
        colorway=PALETTE_LONG,
        font=dict(size=13),
        margin=dict(l=40, r=20, t=_MODEBAR_ROOM + _TITLE_LINE + 20, b=40),
        title=dict(x=0, xanchor="left", xref="container", font=dict(size=15)),
        xaxis=_AXIS,
        yaxis=_AXIS,
    )
)
pio.templates.default = "plotly_white+judgescope"

REPORT = "app.report"
#: The settings of every page (page -> last settings), kept for callers that read them flat.
SETTINGS = REPORT + ".settings"


def metric(
    label: str,
    value,
    help_line: str,
    *,
    delta=None,
    delta_color="normal",
    page: str | None = None,
    report_label: str | None = None,
) -> None:
    """A metric with one line underneath saying what it means; kept as a report headline.

    ``page`` defaults to the calling module's ``PAGE`` (every page module defines one).
    ``report_label`` names the card in the report when ``label`` alone is ambiguous there
    (three columns of "Spearman", one per ranking method); a label drawn twice in one run
    without it is numbered ("Spearman (2)").
    """
    st.metric(label, value, delta=delta, delta_color=delta_color)
    st.caption(help_line)
    page = page or sys._getframe(1).f_globals.get("PAGE")
    if page and page != "report":
        cards = _section(page)["metrics"]
        name = report_label or label
        n = 2
        while name in cards:
            name = f"{report_label or label} ({n})"
            n += 1
        cards[name] = {"value": str(value), "help": help_line}


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "figure"


#: Every ASCII punctuation character: CommonMark lets a backslash escape each of them, and
#: Streamlit's Markdown extensions start with some of them (``:red[...]``, ``:material/x:``,
#: emoji shortcodes, ``$math$``, ``~strike~``).
_MD_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")
_SPACE = re.compile(r"\s+")


def short(value, limit: int | None = 60) -> str:
    """``value`` as one line of plain text (runs of white space folded to one space), cut to
    ``limit`` characters with "…" (None: whole). For labels of ids that can be long (an
    instruction used as a context id): show ``short(x)``, put the whole text in ``help``."""
    text = _SPACE.sub(" ", str(value)).strip()
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 1)].rstrip() + "…"
    return text


def safe(value, limit: int | None = 60) -> str:
    """Text from a user, a file or a URL (an id, a name, a file name, a query parameter) made
    safe to stand inside Markdown — ``st.markdown``, captions, info boxes, widget and metric
    labels, expander titles: :func:`short` (one line, at most ``limit`` characters), then
    every punctuation character backslash-escaped, so no link, image, emphasis, code, heading,
    table, HTML, colour or emoji syntax in it is interpreted: ``**x**`` shows as ``**x**``."""
    return _MD_PUNCT.sub(r"\\\1", short(value, limit))


def polish(fig: go.Figure, title: str) -> go.Figure:
    """The house style every page's figure gets (in place; returned for chaining).

    The title sits left, on its own line below plotly's mode bar (which covered the titles
    of half-width charts); a long one gets a smaller font. Its text is left as given (tests
    and the report find figures by it). An axis whose title names ranks gets integer ticks.
    """
    top = fig.layout.margin.t if fig.layout.margin.t is not None else 0
    fig.update_layout(
        title=dict(
            text=title,
            x=0,
            xanchor="left",
            xref="container",
            y=1,
            yanchor="top",
            yref="container",
            pad=dict(t=_MODEBAR_ROOM, l=8),
            font=dict(size=15 if len(title) <= _TITLE_WIDTH else 13),
        ),
        margin=dict(t=max(top, _MODEBAR_ROOM + _TITLE_LINE + 20)),
    )
    for axis in ("xaxis", "yaxis"):
        ax = fig.layout[axis]
        name = (ax.title.text or "").lower() if ax.title else ""
        if name.startswith("rank") and ax.tickformat is None:
            ax.update(tickformat="d")
            if ax.dtick is None and _few_integers(fig, axis[0]):
                ax.update(dtick=1)
    return fig


def _few_integers(fig: go.Figure, letter: str) -> bool:
    """Whether every trace's ``x``/``y`` values are whole numbers, at most 30 of them."""
    seen: set = set()
    for trace in fig.data:
        values = getattr(trace, letter, None)
        if values is None:
            continue
        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            return False
        arr = arr[np.isfinite(arr)]
        if not np.all(arr == np.round(arr)):
            return False
        seen.update(arr.tolist())
    return 0 < len(seen) <= 30


def plot_config(title: str) -> dict:
    """The plotly config of every chart: PNG download named after the title, no logo."""
    return {
        "toImageButtonOptions": {"format": "png", "filename": slug(title), "scale": 2},
        "displaylogo": False,
    }


def figure(
    fig: go.Figure,
    title: str,
    *,
    page: str,
    data: pd.DataFrame | None = None,
    key: str | None = None,
    **chart_kwargs,
):
    """Show a plotly figure with PNG download (mode bar) and a CSV of its data; keep it for
    the report. ``key`` and ``chart_kwargs`` (``on_select``, ``selection_mode``) go to
    ``st.plotly_chart``, whose value (the selection event of a clickable chart) is returned.
    """
    polish(fig, title)
    event = st.plotly_chart(
        fig, config=plot_config(title), key=key or f"{page}.fig.{slug(title)}", **chart_kwargs
    )
    if data is not None:
        table(data, title, page=page, show=False)
    remember(page, title, fig=fig, data=data)
    return event


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


# ------------------------------------------------------------------ the report's registry
# st.session_state[REPORT] = {dataset: {page: section}}, section = {
#   "views": {title: {"fig", "data", "settings"}},   # the settings that produced the view
#   "metrics": {label: {"value", "help"}},          # the page's headline numbers, last run
#   "settings": {...}, "run": <run token>, "pending": [titles drawn this run, before settings]}
# A view belongs to the dataset that was active when it was drawn, so a report never mixes
# datasets. A page's settings are often recorded after its first figures: the views of the
# same run still waiting for them (``pending``) get them when they come.


_runs: dict[int, tuple] = {}  # id(run context) -> (weakref to it, its cursors dict, token)


def _run_token():
    """A token that changes at the start of every script run (None outside Streamlit).

    Streamlit gives the run context a new ``cursors`` dict at the start of each run; the
    latest one is held here, so a new run's dict is always a different object.
    """
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return None
    cursors = getattr(ctx, "cursors", None)
    entry = _runs.get(id(ctx))
    if entry is None or entry[0]() is not ctx or entry[1] is not cursors:
        for key in [k for k, e in _runs.items() if e[0]() is None]:
            del _runs[key]
        entry = (weakref.ref(ctx), cursors, uuid.uuid4().hex)
        _runs[id(ctx)] = entry
    return entry[2]


def _section(page: str) -> dict:
    """This run's section of the report for ``page`` on the active dataset."""
    registry = st.session_state.setdefault(REPORT, {})
    pages = registry.setdefault(session.active_name(), {})
    sec = pages.setdefault(
        page, {"views": {}, "metrics": {}, "settings": {}, "run": None, "pending": []}
    )
    run = _run_token()
    if sec["run"] != run:  # the page runs again: its headline numbers are redrawn
        sec.update(run=run, pending=[], metrics={}, settings_run=None)
    return sec


def remember(page: str, title: str, *, fig: go.Figure | None = None, data=None) -> None:
    """Register a view for the Report page (latest version of each title per page wins).

    The view is kept under the active dataset with the page's settings of this run; if the
    page records them later in the run (:func:`settings`), they are attached then.
    """
    sec = _section(page)
    current = sec["settings"] if sec.get("settings_run") == sec["run"] else None
    sec["views"][title] = {"fig": fig, "data": data, "settings": current}
    if current is None:
        sec["pending"].append(title)


def settings(page: str, values: dict) -> None:
    """Record the settings behind a page's views (shown beside them in the report)."""
    values = dict(values)
    st.session_state.setdefault(SETTINGS, {})[page] = values
    sec = _section(page)
    sec.update(settings=values, settings_run=sec["run"])
    for title in sec["pending"]:
        if title in sec["views"]:
            sec["views"][title]["settings"] = values
    sec["pending"] = []


def report_views(dataset: str | None = None) -> dict:
    """The report's sections of ``dataset`` (default: the active one): ``{page: section}``."""
    registry = st.session_state.get(REPORT, {})
    return registry.get(dataset or session.active_name(), {})


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
    then shows ``options[index]``, the option the page computes with (the browser would
    otherwise keep showing the old choice), instead of failing.
    """
    options = list(options)
    if key in st.session_state and st.session_state[key] not in options:
        # a dataset switch: show (and keep, and put in the URL) the option the page uses,
        # not the old dataset's choice the browser still holds
        st.session_state[key] = options[min(index, len(options) - 1)] if options else None
        index = 0  # the value set above shows; a second default would make Streamlit warn
    return st.selectbox(
        label, options, index=min(index, max(len(options) - 1, 0)), key=key, **kwargs
    )


def need(condition: bool, message: str) -> None:
    """Stop the page with a friendly note when the data cannot support it."""
    if not condition:
        st.info(message)
        st.stop()
