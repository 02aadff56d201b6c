"""Small building blocks every page uses: palette, metrics with a help line, figures with
downloads, a labelled heatmap, error display, and the registry of views that the Report page
exports."""

from __future__ import annotations

import contextlib
import html
import logging
import re
import sys
import uuid
import weakref

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from data.io.spreadsheet import spreadsheet_csv
from data.schema import DataError
from pages.shell import session
from pages.shell.text import listed, safe, short, unsafe, whole  # noqa: F401  (ui.safe)

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
# plotly_white with ours over it, merged once: a default of "plotly_white+judgescope" merged
# the two templates at every figure (45 ms each; a second visit of Rankings spent 2 of its
# 6 s there under load)
pio.templates["judgescope"] = pio.templates.merge_templates(
    "plotly_white",
    go.layout.Template(
        layout=go.Layout(
            colorway=PALETTE_LONG,
            font=dict(size=13),
            margin=dict(l=40, r=20, t=_MODEBAR_ROOM + _TITLE_LINE + 20, b=40),
            title=dict(x=0, xanchor="left", xref="container", font=dict(size=15)),
            xaxis=_AXIS,
            yaxis=_AXIS,
        )
    ),
)
pio.templates.default = "judgescope"

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

    ``label``, ``value`` and ``help_line`` are Markdown: a name in them goes in escaped
    (:func:`safe`); the report keeps them without the escapes (:func:`unsafe`).
    """
    st.metric(label, value, delta=delta, delta_color=delta_color)
    st.caption(help_line)
    page = page or sys._getframe(1).f_globals.get("PAGE")
    if page and page != "report":
        cards = _section(page)["metrics"]
        base = unsafe(report_label or label)
        name, n = base, 2
        while name in cards:
            name = f"{base} ({n})"
            n += 1
        cards[name] = {"value": unsafe(value), "help": unsafe(help_line)}


def metric_row(cards, *, page: str) -> None:
    """Metrics side by side, one column each: ``cards`` holds (label, value, help line) or
    (label, value, help line, report label) tuples, each drawn by :func:`metric`."""
    for col, (label, value, help_line, *report) in zip(st.columns(len(cards)), cards, strict=True):
        with col:
            metric(label, value, help_line, page=page, report_label=report[0] if report else None)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "figure"


def file_stem(title: str, limit: int = 80) -> str:
    """A download's file name (no extension) from a title: its :func:`slug`, at most
    ``limit`` characters (a title that holds a long id stays a usable file name)."""
    return slug(title)[:limit].rstrip("-") or "figure"


# ------------------------------------------------------------------ plotly text
# Plotly reads its text as HTML (<b>, <i>, <br>, <a href>, <span style>) everywhere: titles,
# tick labels, legend, hover, annotations. User text goes in escaped (:func:`fig_text`);
# :func:`plain_fig_text` does it for a whole figure, once, and every figure shown through
# :func:`figure` or :func:`polish` gets it. Only the tags the app writes itself survive in
# the texts that mix ours and theirs (``<br>`` in hover text, ``<extra>`` in templates).

#: Tick labels of categories (ids, names) longer than this are cut; the hover keeps them whole.
TICK_LIMIT = 40
#: Trace names (the legend) longer than this are cut; the hover keeps them whole.
NAME_LIMIT = 80
_TITLE_LIMIT = 120
_OUR_TAGS = re.compile(r"&lt;(/?extra|br ?/?)&gt;")
#: plotly express writes ``<b>%{hovertext}</b>`` (hover_name): bold around a placeholder,
#: whose value is data (escaped), is the template's own
_BOLD_FIELD = re.compile(r"&lt;b&gt;(%\{[^}<>&]*\})&lt;/b&gt;")
_PLAIN = "_judgescope_plain"  # set on a figure once its text is plain
_NEEDS_ESCAPE = re.compile(r"[<>&]")


def fig_text(value, limit: int | None = None) -> str:
    """``value`` as plotly text: HTML-escaped (``<b>`` shows as ``<b>``); with ``limit``, one
    line cut to that many characters first (:func:`short`)."""
    text = str(value) if limit is None else short(value, limit)
    return html.escape(text, quote=False)


def _rich(text):
    """A text that mixes ours and a user's: escaped but for the tags the app writes."""
    if not isinstance(text, str) or not _NEEDS_ESCAPE.search(text):
        return text
    text = _OUR_TAGS.sub(r"<\1>", html.escape(text, quote=False))
    return _BOLD_FIELD.sub(r"<b>\1</b>", text)


def _plain_values(values, rich: bool = False):
    """An array of values with its strings escaped (other values as they are); the same
    object when nothing needs it."""
    if values is None or isinstance(values, str | bytes | dict):
        return values
    if isinstance(values, np.ndarray) and values.dtype.kind in "biufcmM":
        return values  # numbers and dates: nothing to escape
    try:
        items = list(np.asarray(values, dtype=object).ravel())
    except (TypeError, ValueError):
        return values
    if not any(isinstance(v, str) and _NEEDS_ESCAPE.search(v) for v in items):
        return values
    arr = np.asarray(values, dtype=object)
    escape = _rich if rich else (lambda v: html.escape(v, quote=False))
    out = np.vectorize(lambda v: escape(v) if isinstance(v, str) else v, otypes=[object])(arr)
    return out.tolist() if arr.ndim else out.item()


def _set(obj, attr: str, value) -> None:
    """``obj[attr] = value`` unless it is the value already there (no revalidation)."""
    if value is not obj[attr]:
        obj[attr] = value


def _categories(fig: go.Figure, letter: str, name: str) -> list[str]:
    """The string values (raw) the traces put on axis ``name`` (``xaxis``, ``yaxis2``)."""
    ref = letter + name[5:]  # xaxis2 -> x2
    seen: dict[str, None] = {}
    for trace in fig.data:
        if (getattr(trace, letter + "axis", None) or letter) != ref:
            continue
        values = getattr(trace, letter, None)
        if values is None or isinstance(values, str):
            continue
        try:
            items = np.asarray(values, dtype=object).ravel()
        except (TypeError, ValueError):
            continue
        for v in items:
            if isinstance(v, str):
                seen.setdefault(v, None)
    return list(seen)


def _axis_names(fig: go.Figure) -> set[str]:
    """``xaxis``, ``yaxis2``, ...: the axes the layout has."""
    return {k for k in fig.layout.to_plotly_json() if re.fullmatch(r"[xy]axis\d*", k)}


def _short_ticks(fig: go.Figure) -> None:
    """Axes whose categories are long: cut tick labels (unique), whole text on hover; tick
    labels a page set itself (names) cut the same way."""
    names = {"xaxis", "yaxis"} | _axis_names(fig)
    for name in sorted(names):
        axis = fig.layout[name]
        if axis.ticktext is not None:
            given = list(axis.ticktext)
            if any(isinstance(t, str) and len(t) > TICK_LIMIT for t in given):
                axis.ticktext = _tick_labels([str(t) for t in given])
            continue
        if axis.tickvals is not None:
            continue
        cats = _categories(fig, name[0], name)
        if not cats or max(len(c) for c in cats) <= TICK_LIMIT:
            continue
        order = list(axis.categoryarray) if axis.categoryarray is not None else cats
        order = [c for c in order if c in set(cats)] + [c for c in cats if c not in set(order)]
        step = max(1, -(-len(order) // 100))  # at most 100 labels
        shown = order[::step]
        axis.update(tickmode="array", tickvals=shown, ticktext=_tick_labels(shown))


def _tick_labels(values: list[str], limit: int = TICK_LIMIT) -> list[str]:
    """Each value on one line in at most ``limit`` characters, all different: the start
    cut with "…"; where two starts are alike, start…end; still alike, numbered."""
    labels = [short(v, limit) for v in values]
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    tail = limit // 3
    for k, v in enumerate(values):
        if counts[labels[k]] > 1:
            text = short(v, None)
            labels[k] = text[: limit - tail - 1].rstrip() + "…" + text[-tail:].lstrip()
    seen: dict[str, int] = {}
    for k, label in enumerate(labels):
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            mark = f" ({seen[label]})"
            labels[k] = short(label, limit - len(mark)) + mark
    return labels


def plain_fig_text(fig: go.Figure) -> go.Figure:
    """Every text of ``fig`` made plain for plotly (in place, once; returned for chaining).

    Categories (``x``, ``y``, ``labels``, category orders, tick values) and trace names are
    HTML-escaped whole; texts that mix ours and a user's (titles, hover text and templates,
    ``text``, ``customdata``, annotations) are escaped but for the ``<br>`` and ``<extra>``
    tags the app writes. Long category labels are cut on the axis (:data:`TICK_LIMIT`,
    still unique), long trace names in the legend (:data:`NAME_LIMIT`); the hover shows
    them whole. A clickable chart's event returns the escaped category: map it back with
    ``{fig_text(id): id}``.
    """
    if getattr(fig, _PLAIN, False):
        return fig
    _short_ticks(fig)  # from the raw categories, before they are escaped
    for trace in fig.data:
        for attr in ("x", "y", "labels", "parents"):
            if attr in trace and trace[attr] is not None:
                _set(trace, attr, _plain_values(trace[attr]))
        for attr in ("legendgroup", "offsetgroup", "alignmentgroup"):  # ids, never shown:
            if attr in trace and isinstance(trace[attr], str):  # escaped alike, to be sure
                _set(trace, attr, html.escape(trace[attr], quote=False))
        if "name" in trace and isinstance(trace.name, str):
            name = trace.name
            if len(name) > NAME_LIMIT and trace.showlegend is not False:
                name = short(name, NAME_LIMIT)
            trace.name = html.escape(name, quote=False)
        for attr in ("text", "hovertext", "customdata", "hovertemplate", "texttemplate"):
            if attr in trace and trace[attr] is not None:
                value = trace[attr]
                _set(
                    trace,
                    attr,
                    _rich(value) if isinstance(value, str) else _plain_values(value, rich=True),
                )
        if "legendgrouptitle" in trace and trace.legendgrouptitle.text:
            trace.legendgrouptitle.text = _rich(trace.legendgrouptitle.text)
        bar = (
            getattr(getattr(trace, "marker", None), "colorbar", None) if "marker" in trace else None
        )
        for holder in (trace.colorbar if "colorbar" in trace else None, bar):
            if holder is not None and holder.title and holder.title.text:
                holder.title.text = _rich(holder.title.text)
    layout = fig.layout
    if layout.title and layout.title.text:
        layout.title.text = _rich(layout.title.text)
    for name in _axis_names(fig):
        axis = layout[name]
        if axis.title and axis.title.text:
            axis.title.text = _rich(axis.title.text)
        for attr in ("categoryarray", "tickvals", "ticktext"):
            if axis[attr] is not None:
                _set(axis, attr, _plain_values(axis[attr]))
    if layout.legend and layout.legend.title and layout.legend.title.text:
        layout.legend.title.text = _rich(layout.legend.title.text)
    if layout.coloraxis and layout.coloraxis.colorbar.title.text:
        layout.coloraxis.colorbar.title.text = _rich(layout.coloraxis.colorbar.title.text)
    for note in layout.annotations or ():
        if note.text:
            note.text = _rich(note.text)
        if note.hovertext:
            note.hovertext = _rich(note.hovertext)
    object.__setattr__(fig, _PLAIN, True)
    return fig


#: Trace types a figure read back from a file may have (the ones the pages draw).
_RESTORED_TRACES = frozenset({"scatter", "scattergl", "bar", "heatmap", "histogram", "box"})
#: Layout parts a figure read back from a file loses: remote images and maps, buttons and
#: sliders, the template (the app's own is applied), free-form metadata.
_RESTORED_DROP = frozenset(
    {"images", "updatemenus", "sliders", "template", "mapbox", "map", "geo", "meta"}
)


def _plain_json(value, depth: int = 0):
    if isinstance(value, str):
        return _rich(html.unescape(value))
    if depth > 40:
        raise ValueError("the figure nests too deep")
    if isinstance(value, list):
        return [_plain_json(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain_json(v, depth + 1) for k, v in value.items()}
    return value


def figure_from_json(value) -> go.Figure:
    """A figure read back from a file (the report's views in a workspace), its text plain.

    The file may be someone else's, so only the trace types the pages draw are taken, the
    layout's images, maps, buttons, sliders, template and metadata are dropped, and every
    text, whatever attribute holds it, is decoded (the figure was saved plain) and escaped
    again but for the tags the app writes (:func:`plain_fig_text`): a crafted file shows its
    tags as text. The figure is marked plain, so it is not escaped twice.

    Raises
    ------
    ValueError
        Not a figure (``{"data": [...], "layout": {...}}``), a trace type not taken, a
        property plotly does not know.
    """
    if not isinstance(value, dict):
        raise ValueError("not a figure")
    data, layout = value.get("data", []), value.get("layout", {})
    if not isinstance(data, list) or not isinstance(layout, dict):
        raise ValueError("not a figure")
    for trace in data:
        if not isinstance(trace, dict) or trace.get("type", "scatter") not in _RESTORED_TRACES:
            raise ValueError("a trace type the pages do not draw")
    layout = {k: v for k, v in layout.items() if k not in _RESTORED_DROP}
    fig = go.Figure(_plain_json({"data": data, "layout": layout}))
    object.__setattr__(fig, _PLAIN, True)
    return fig


def polish(fig: go.Figure, title: str) -> go.Figure:
    """The house style every page's figure gets (in place; returned for chaining).

    The title sits left, on its own line below plotly's mode bar (which covered the titles
    of half-width charts); a long one gets a smaller font. Its text is the title given, as
    plain text (HTML-escaped, one line, at most 120 characters; tests and the report find
    figures by it). Every other text of the figure is made plain too
    (:func:`plain_fig_text`). An axis whose title names ranks gets integer ticks.
    """
    plain_fig_text(fig)
    top = fig.layout.margin.t if fig.layout.margin.t is not None else 0
    fig.update_layout(
        title=dict(
            text=fig_text(title, _TITLE_LIMIT),
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
        "toImageButtonOptions": {"format": "png", "filename": file_stem(title), "scale": 2},
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


def judge_bars(table: pd.DataFrame, y: str, **kwargs) -> go.Figure:
    """A share (0 to 1) per judge as grouped bars, one colour per attribute (``judge`` and
    ``attribute`` columns of ``table``); ``kwargs`` go to ``px.bar`` (hover data, labels)."""
    return px.bar(
        table, x="judge", y=y, color="attribute", barmode="group", range_y=[0, 1], **kwargs
    )


def unbiased_line(fig: go.Figure, text: str, position: str) -> None:
    """The dashed black line at 0.5, the first-position win rate of a judge with no position
    bias, annotated with ``text`` at ``position``."""
    fig.add_hline(
        y=0.5,
        line_dash="dash",
        line_color="black",
        annotation_text=text,
        annotation_position=position,
    )


def dot_series(
    fig: go.Figure,
    table: pd.DataFrame,
    row: str,
    column: str,
    name: str,
    *,
    hovertemplate: str,
    customdata=None,
    **marker,
) -> None:
    """One series of a dot plot whose rows are ``table[row]`` (systems, judges): a marker
    at ``table[column]`` on each row, named ``name``; ``marker`` its colour, size, symbol."""
    fig.add_trace(
        go.Scatter(
            x=table[column],
            y=table[row],
            mode="markers",
            name=name,
            marker=marker,
            customdata=customdata,
            hovertemplate=hovertemplate,
        )
    )


def reliability_figure(name: str, colour: str) -> go.Figure:
    """A reliability diagram to draw on: the diagonal of a calibrated judge (its probability
    is the share observed), dashed in ``colour``, named ``name`` in the legend."""
    return go.Figure(
        go.Scatter(
            x=[0, 1], y=[0, 1], mode="lines", name=name, line=dict(color=colour, dash="dash")
        )
    )


def table(df: pd.DataFrame, title: str, *, page: str, show: bool = True, **kwargs) -> None:
    """Show a table with a CSV download button (formulas neutralised); keep it for the report.

    ``title`` is plain text (the names in it are escaped on the button)."""
    if show:
        st.dataframe(df, **kwargs)
        remember(page, title, data=df)
    st.download_button(
        f"⬇ CSV: {safe(title, 100)}",
        spreadsheet_csv(df).encode("utf-8"),
        file_name=f"{file_stem(title)}.csv",
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
    """A readable message, never a stack trace. ``what`` (which may name a file) and the
    error's text (which may quote ids and cells) are shown escaped, one line each."""
    head = f"{safe(what, 200)}: " if what else ""
    if isinstance(err, DataError):
        st.error(
            head + f"{len(err.problems)} problem(s) found. Nothing already loaded was changed."
        )
        st.markdown("\n".join(f"- {safe(p, 500)}" for p in err.problems[:50]))
    else:
        st.error(f"{head}{safe(err, 1000)}")


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
    kwargs.setdefault("format_func", short)  # options are ids: one line, long ones cut
    return st.selectbox(
        label, options, index=min(index, max(len(options) - 1, 0)), key=key, **kwargs
    )


def need(condition: bool, message: str) -> None:
    """Stop the page with a friendly note when the data cannot support it."""
    if not condition:
        st.info(message)
        st.stop()
