"""Build the shareable report (one self-contained HTML file) and the zip of every table.

Pure functions, no Streamlit, so they are tested directly. The input is what the pages
registered with ``ui.remember`` / ``ui.settings`` / ``ui.metric`` for ONE dataset:
``{page: {"views": {title: {"fig", "data", "settings"}}, "metrics": {label: {"value",
"help"}}, "settings": {...}}}`` (``ui.report_views(dataset)``). The whole registry
(``{dataset: {page: section}}``) is accepted too, with ``dataset`` picking one; a report
never mixes datasets.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import io
import json
import re
import unicodedata
import zipfile

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from data.io.spreadsheet import spreadsheet_csv
from data.natural import natural_key
from pages.shell.ui import plain_fig_text, short

#: The pseudo-title of a page's headline metric cards in ``chosen`` (tick them like a view).
HEADLINE = "Headline numbers"
#: Pages in the app's order (their registry names and the headings shown for them).
PAGE_NAMES = {
    "data": "Data",
    "judge": "Judge",
    "Rankings": "Rankings",
    "Leaderboard": "Leaderboard",
    "Examples": "Examples",
    "Position bias": "Position bias",
    "Comparison budgets": "Comparison budgets",
    "agreement": "Human agreement",
    "prompts": "Prompt sensitivity",
}
MAX_TABLE_ROWS = 200
MAX_TABLE_COLS = 12
#: A text cell of the report's tables shows at most this many characters, on one line (an
#: instruction used as an id, a judge's whole answer); the zip of CSVs has the whole text.
MAX_CELL = 300

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222}
h1{margin-bottom:0}h2{border-bottom:2px solid #0072B2;padding-bottom:.2em;margin-top:2em}
h3{margin:1.4em 0 .3em}
table{border-collapse:collapse;font-size:13px;margin:.5em 0 1em}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f3f6fa}
.meta{color:#666}.summary{background:#f3f6fa;padding:.8em 1.2em;border-radius:6px}
.scroll{overflow-x:auto;max-width:100%}
.cards{display:flex;flex-wrap:wrap;gap:.8em;margin:1em 0}
.card{border:1px solid #dde3ea;border-radius:8px;padding:.6em .9em;min-width:150px;max-width:260px}
.card .label{font-size:13px;color:#555}.card .value{font-size:26px;font-weight:600}
.card .help{font-size:12px;color:#777}
table.settings td,table.settings th{text-align:left;font-size:12px}
table.settings th{width:12em}
"""


# ----------------------------------------------------------------------------- inputs


def page_name(page: str) -> str:
    """The heading a registered page gets ("agreement" -> "Human agreement")."""
    return PAGE_NAMES.get(page, page.replace("_", " ").capitalize())


def _page_order(page: str) -> tuple:
    names = list(PAGE_NAMES)
    return (names.index(page), "") if page in names else (len(names), page)


def sections_of(views: dict, dataset: str, settings: dict | None = None) -> dict:
    """The sections of ``dataset``, whatever form ``views`` has.

    ``views`` is the whole registry (``{dataset: {page: section}}``), one dataset's sections
    (``{page: section}``) or the older flat form ``{page: {title: {"fig", "data"}}}`` whose
    settings come from ``settings`` (``{page: {...}}``). Pages come in the app's order.
    """
    if is_registry(views):
        views = views.get(dataset, {})
    elif not _are_sections(views):
        views = {
            page: {
                "views": {
                    t: {**v, "settings": v.get("settings", (settings or {}).get(page))}
                    for t, v in items.items()
                },
                "metrics": {},
                "settings": (settings or {}).get(page) or {},
            }
            for page, items in views.items()
        }
    return {page: views[page] for page in sorted(views, key=_page_order)}


def _are_sections(obj) -> bool:
    return bool(obj) and all(isinstance(s, dict) and "views" in s for s in obj.values())


def is_registry(obj) -> bool:
    """Whether ``obj`` is the whole registry, ``{dataset: {page: section}}``."""
    return bool(obj) and all(
        isinstance(p, dict) and (not p or _are_sections(p)) for p in obj.values()
    )


def _picked(sections: dict, chosen) -> dict:
    """Each page's chosen view titles and whether its headline cards go in."""
    out = {}
    for page, sec in sections.items():
        titles = [t for t in sec["views"] if chosen is None or (page, t) in chosen]
        cards = bool(sec.get("metrics")) and (chosen is None or (page, HEADLINE) in chosen)
        if titles or cards:
            out[page] = (titles, cards)
    return out


# ----------------------------------------------------------------------------- pieces


def summary(sections: dict, dataset: str, chosen=None) -> list[str]:
    """A few sentences built from the registered headline numbers, one per page.

    Only numbers the pages showed are used: "On demo, Rankings (judge X, attribute
    coherence): Spearman 0.907; pairwise accuracy 0.901."
    """
    out = []
    for page, (_, cards) in _picked(sections, chosen).items():
        metrics = sections[page].get("metrics") or {}
        if not cards or not metrics:
            continue
        given = sections[page].get("settings") or {}
        about = [f"{k} {given[k]}" for k in ("judge", "model", "attribute") if given.get(k)]
        where = f"{page_name(page)} ({', '.join(about)})" if about else page_name(page)
        values = "; ".join(f"{label} {m['value']}" for label, m in metrics.items())
        out.append(f"On {dataset}, {where}: {values}.")
    return out


def setting_text(v) -> str:
    """One setting's value as short text (lists joined, floats to 4 significant digits)."""
    if isinstance(v, (list, tuple, set)):
        return ", ".join(str(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, default=str)
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def settings_table(values: dict | None) -> str:
    """Settings as a small two-column table (setting, value)."""
    if not values:
        return ""
    rows = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(setting_text(v))}</td></tr>"
        for k, v in values.items()
    )
    return f"<table class='settings'><tbody>{rows}</tbody></table>"


def cards_html(metrics: dict) -> str:
    """The page's headline numbers as cards: label, value, the line saying what it means."""
    cards = "".join(
        f"<div class='card'><div class='label'>{html.escape(label)}</div>"
        f"<div class='value'>{html.escape(m['value'])}</div>"
        f"<div class='help'>{html.escape(m.get('help', ''))}</div></div>"
        for label, m in metrics.items()
    )
    return f"<div class='cards'>{cards}</div>"


def table_html(df: pd.DataFrame) -> str:
    """A table capped at MAX_TABLE_ROWS x MAX_TABLE_COLS, in a box that scrolls sideways
    itself (the page never does); text cells on one line, cut at MAX_CELL characters
    (escaped as HTML by pandas)."""
    shown = df.iloc[:MAX_TABLE_ROWS, :MAX_TABLE_COLS]
    shown = shown.map(lambda v: short(v, MAX_CELL) if isinstance(v, str) else v)
    shown.columns = [short(c, MAX_CELL) if isinstance(c, str) else c for c in shown.columns]
    cut = []
    if len(df) > MAX_TABLE_ROWS:
        cut.append(f"first {MAX_TABLE_ROWS} of {len(df):,} rows")
    if df.shape[1] > MAX_TABLE_COLS:
        cut.append(f"first {MAX_TABLE_COLS} of {df.shape[1]} columns")
    note = f"<p class='meta'>{'; '.join(cut).capitalize()}; the zip of CSVs has all.</p>"
    body = shown.to_html(index=False, float_format=lambda x: f"{x:.4g}", na_rep="–", border=0)
    return f"<div class='scroll'>{body}</div>" + (note if cut else "")


def _figure_html(fig: go.Figure, include_js: bool) -> str:
    shown = go.Figure(plain_fig_text(fig))  # text escaped (once); a copy keeps the title
    shown.update_layout(title=None, margin=dict(t=30))  # the h3 above is its title
    return pio.to_html(
        shown,
        full_html=False,
        include_plotlyjs=include_js,
        default_height="450px",
        config={"displaylogo": False},
    )


# ----------------------------------------------------------------------------- documents


def report_html(
    views: dict,
    settings: dict | None = None,
    *,
    dataset: str,
    title: str | None = None,
    chosen=None,
) -> str:
    """One HTML file with one dataset's chosen views, their settings and headline numbers.

    Parameters
    ----------
    views
        The registry, or one dataset's sections (see :func:`sections_of`).
    settings
        ``{page: settings}`` for the older flat form of ``views`` only.
    dataset
        The dataset reported on; nothing of another dataset goes in.
    title
        The document's title (default "JudgeScope report — <dataset>").
    chosen
        A set of ``(page, title)`` to include (``(page, HEADLINE)`` for a page's metric
        cards); None includes everything.

    plotly.js is embedded once, so the file opens offline.
    """
    title = title or f"JudgeScope report — {dataset}"
    sections = sections_of(views, dataset, settings)
    picked = _picked(sections, chosen)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='meta'>Dataset: <b>{html.escape(dataset)}</b> · generated "
        f"{dt.datetime.now().strftime('%Y-%m-%d %H:%M')} by JudgeScope</p>",
    ]
    lines = summary(sections, dataset, chosen)
    if lines:
        parts.append(
            "<div class='summary'><h2 style='border:0;margin-top:0'>Summary</h2>"
            + "".join(f"<p>{html.escape(s)}</p>" for s in lines)
            + "</div>"
        )
    plotly_included = False
    for page, (titles, cards) in picked.items():
        sec = sections[page]
        parts.append(f"<h2>{html.escape(page_name(page))}</h2>")
        if cards:
            parts.append(cards_html(sec["metrics"]))
        shown_settings = None
        for name in titles:
            view = sec["views"][name]
            parts.append(f"<h3>{html.escape(name)}</h3>")
            if view.get("settings") and view["settings"] != shown_settings:
                parts.append(settings_table(view["settings"]))
                shown_settings = view["settings"]
            if view.get("fig") is not None:
                parts.append(_figure_html(view["fig"], not plotly_included))
                plotly_included = True
            elif view.get("data") is not None:
                parts.append(table_html(view["data"]))
    if not picked:
        parts.append(
            f"<p>No views of {html.escape(dataset)} chosen: open the analysis pages on it "
            "(or tick some views), then export again.</p>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)


#: Longest file or folder name in the zip of tables, in UTF-8 bytes (file systems allow
#: 255 per name; a dataset folder, a page folder and a file make one path).
MAX_ENTRY_BYTES = 80
_NOT_WORD = re.compile(r"[\W_]+")
#: Names Windows keeps for devices: a file of that name cannot be extracted there.
_DEVICES = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
)


def entry_stem(title: str, limit: int = MAX_ENTRY_BYTES) -> str:
    """A readable file name (no extension) for ``title`` in any script: lower case letters
    and digits kept (连贯性 stays 连贯性), every run of other characters one "-", at most
    ``limit`` UTF-8 bytes (cut at a character); "table" when nothing is left."""
    text = unicodedata.normalize("NFKC", str(title)).lower()
    stem = _NOT_WORD.sub("-", text).strip("-")
    stem = stem.encode("utf-8")[:limit].decode("utf-8", "ignore").rstrip("-") or "table"
    return f"{stem}-table" if stem in _DEVICES else stem


class EntryNames:
    """Unique, length-capped names in one folder of the zip: a title's :func:`entry_stem`,
    or, when another title of the folder already has that stem, the stem cut shorter with a
    short hash of the whole title (and a counter should even that be taken)."""

    def __init__(self, limit: int = MAX_ENTRY_BYTES):
        self.limit, self.used = limit, set()

    def __call__(self, title: str) -> str:
        stem = entry_stem(title, self.limit)
        if stem in self.used:
            digest = hashlib.sha1(str(title).encode("utf-8")).hexdigest()[:8]
            base = entry_stem(title, self.limit - 9)
            stem, n = f"{base}-{digest}", 2
            while stem in self.used:
                stem = f"{base}-{digest}-{n}"
                n += 1
        self.used.add(stem)
        return stem


def tables_zip(views: dict, *, dataset: str | None = None, chosen=None) -> bytes:
    """A zip with one CSV per registered table (figures' data included) of one dataset.

    ``views`` as for :func:`report_html`; the whole registry needs ``dataset``. The CSVs are
    for spreadsheets, so text that would start a formula is neutralised
    (``data.io.spreadsheet``); the registered tables themselves are not changed. Every
    folder and file name is unique and at most :data:`MAX_ENTRY_BYTES` bytes
    (:class:`EntryNames`): two titles that read alike ("… — 连贯性", "… — 流畅性") or share a
    long beginning keep their own files.
    """
    if dataset is None and is_registry(views):  # every dataset, one folder each
        folders = EntryNames()
        parts = [(f"{folders(name)}/", sections_of(views, name)) for name in views]
    else:
        parts = [("", sections_of(views, dataset or "", None))]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for prefix, sections in parts:
            pages = EntryNames()
            for page, (titles, _) in _picked(sections, chosen).items():
                folder, files = pages(page), EntryNames()
                for name in sorted(titles, key=natural_key):
                    df = sections[page]["views"][name].get("data")
                    if isinstance(df, pd.DataFrame):
                        path = f"{prefix}{folder}/{files(name)}.csv"
                        zf.writestr(path, spreadsheet_csv(df))
    return buf.getvalue()
