"""The Report page's views kept with the workspace: written to its file and its autosave,
read back when it is opened (a refresh, a link, a file), bounded in size.

The registry (``st.session_state[ui.REPORT]``, see :mod:`pages.shell.ui`) holds plotly
figures and pandas tables; :func:`report_json` turns a session's into JSON (figures as
plotly JSON without their template, tables as ``{"columns", "index", "data"}``, settings as
plain values), view by view until ``data.limits.MAX_REPORT_BYTES``, and :func:`restore`
adds a file's views to the session's (the session's own sections win). A file may be
someone else's: only page names the app uses come back, figures through
:func:`pages.shell.ui.figure_from_json` (their text escaped), and a view that does not read
is left out.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
import plotly.io as pio
import streamlit as st

from data.limits import MAX_REPORT_BYTES
from pages.shell import ui

VERSION = 1
#: Page names a report may name (the pages' own are letters and spaces): a page's name is
#: shown as a heading on the Report page.
_PAGE = re.compile(r"[A-Za-z][A-Za-z0-9 _]{0,40}")
_TITLE = 500


def _plain(value, depth: int = 0):
    """``value`` as JSON data: numpy scalars as Python, non-finite numbers as None, tuples
    and sets as lists, anything else as its text."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if abs(value) < 10**20 else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth < 20 and isinstance(value, Mapping):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if depth < 20 and isinstance(value, list | tuple | set | frozenset):
        return [_plain(v, depth + 1) for v in value]
    return str(value)


def _figure(fig) -> dict | None:
    if fig is None:
        return None
    try:
        out = json.loads(pio.to_json(fig, validate=False), parse_constant=lambda _: None)
    except (TypeError, ValueError):
        return None
    out.get("layout", {}).pop("template", None)  # the app's own, applied again on reading
    return out


def _table(df) -> dict | None:
    if not isinstance(df, pd.DataFrame):
        return None
    try:
        out = json.loads(df.to_json(orient="split", date_format="iso", default_handler=str))
    except (TypeError, ValueError, OverflowError):
        return None
    return {"columns": out["columns"], "index": out["index"], "data": out["data"]}


def report_json(
    registry: Mapping, datasets: Iterable[str], limit: int = MAX_REPORT_BYTES
) -> tuple[dict | None, int]:
    """The registry's sections of ``datasets`` as JSON data, at most ``limit`` bytes.

    Returns
    -------
    report : dict or None
        ``{"version", "datasets": {name: {page: {"views": [{"title", "fig", "data",
        "settings"}], "metrics", "settings"}}}}``; None when there is nothing to keep.
    left_out : int
        Views that did not fit in ``limit`` (the first ones registered are kept).
    """
    out: dict = {"version": VERSION, "datasets": {}}
    used, left_out = 64, 0
    for name in datasets:
        pages = registry.get(name) or {}
        for page, sec in pages.items():
            if not isinstance(page, str) or not _PAGE.fullmatch(page):
                continue
            metrics = {
                str(k): {"value": str(m.get("value", "")), "help": str(m.get("help", ""))}
                for k, m in (sec.get("metrics") or {}).items()
            }
            settings = _plain(sec.get("settings") or {})
            overhead = len(json.dumps([metrics, settings], allow_nan=False)) + len(page) + 40
            if used + overhead > limit:
                left_out += len(sec.get("views", {}))
                continue
            views = []
            for title, view in sec.get("views", {}).items():
                item = {
                    "title": str(title)[:_TITLE],
                    "fig": _figure(view.get("fig")),
                    "data": _table(view.get("data")),
                    "settings": _plain(view.get("settings")),
                }
                if item["fig"] is None and item["data"] is None:
                    continue
                size = len(json.dumps(item, allow_nan=False)) + 1
                if used + overhead + size > limit:
                    left_out += 1
                    continue
                used += size
                views.append(item)
            if not views and not metrics:
                continue
            used += overhead
            out["datasets"].setdefault(str(name), {})[page] = {
                "views": views,
                "metrics": metrics,
                "settings": settings,
            }
    return (out if out["datasets"] else None), left_out


def _view(item) -> tuple[str, dict] | None:
    """One view read back (None when it does not read)."""
    if not isinstance(item, dict) or not isinstance(item.get("title"), str):
        return None
    fig = data = None
    if item.get("fig") is not None:
        try:
            fig = ui.figure_from_json(item["fig"])
        except Exception:  # not a figure the pages draw: the view keeps its table, if any
            fig = None
    table = item.get("data")
    if isinstance(table, dict):
        try:
            columns, index = table["columns"], table["index"]
            if not all(isinstance(c, str | int | float) for c in columns + index):
                raise TypeError("not plain labels")
            data = pd.DataFrame(table["data"], columns=columns, index=index)
        except (KeyError, TypeError, ValueError):
            data = None
    if fig is None and data is None:
        return None
    settings = item.get("settings")
    return item["title"][:_TITLE], {
        "fig": fig,
        "data": data,
        "settings": settings if isinstance(settings, dict) else None,
    }


def restore(report, names: Mapping[str, str]) -> int:
    """Add the views of ``report`` (as :func:`report_json` wrote it) to this session's.

    ``names`` maps a dataset name in the file to its name in the session (a dataset renamed
    on a clash); views of datasets not in it are left out, and so are sections the session
    already has (its own views are newer). Returns how many views came back.
    """
    if not isinstance(report, dict) or report.get("version") != VERSION:
        return 0
    datasets = report.get("datasets")
    if not isinstance(datasets, dict):
        return 0
    registry = st.session_state.setdefault(ui.REPORT, {})
    n = 0
    for file_name, pages in datasets.items():
        name = names.get(file_name)
        if name is None or not isinstance(pages, dict):
            continue
        mine = registry.setdefault(name, {})
        for page, sec in pages.items():
            if page in mine or not _PAGE.fullmatch(page) or not isinstance(sec, dict):
                continue
            views = dict(filter(None, map(_view, sec.get("views") or [])))
            metrics = {
                k: {"value": m["value"], "help": m["help"]}
                for k, m in (sec.get("metrics") or {}).items()
                if isinstance(m, dict)
                and isinstance(m.get("value"), str)
                and isinstance(m.get("help"), str)
            }
            if not views and not metrics:
                continue
            settings = sec.get("settings")
            mine[page] = {
                "views": views,
                "metrics": metrics,
                "settings": settings if isinstance(settings, dict) else {},
                "run": None,
                "pending": [],
            }
            n += len(views)
    return n


def signature(registry: Mapping) -> tuple:
    """What the registry holds, cheaply: its views' names and settings and the headline
    numbers (a change means the autosaved report is out of date)."""
    out = []
    for name, pages in registry.items():
        for page, sec in (pages or {}).items():
            metrics = tuple((k, m.get("value")) for k, m in (sec.get("metrics") or {}).items())
            views = tuple(
                (title, repr(view.get("settings"))) for title, view in sec["views"].items()
            )
            out.append((name, page, views, metrics))
    return tuple(out)
