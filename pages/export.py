"""Build the shareable report (one self-contained HTML file) and the zip of every table.

Pure functions, no Streamlit, so they are tested directly. The inputs are the views the pages
registered with ``ui.remember``: ``{page: {title: {"fig": Figure | None, "data": DataFrame | None}}}``.
"""

from __future__ import annotations

import datetime as dt
import html
import io
import json
import zipfile

import pandas as pd
import plotly.io as pio

from data.spreadsheet import spreadsheet_csv
from pages.ui import slug

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222}
h1{margin-bottom:0}h2{border-bottom:2px solid #0072B2;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;font-size:13px;margin:.5em 0 1.5em}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f3f6fa}
.meta{color:#666}.settings{background:#f7f7f7;padding:.6em 1em;border-radius:6px;font-size:13px}
"""

MAX_TABLE_ROWS = 200


def _table_html(df: pd.DataFrame) -> str:
    shown = df.head(MAX_TABLE_ROWS)
    note = (
        f"<p class='meta'>First {MAX_TABLE_ROWS} of {len(df):,} rows; the zip of CSVs has all.</p>"
        if len(df) > MAX_TABLE_ROWS
        else ""
    )
    return shown.to_html(index=False, float_format=lambda x: f"{x:.4g}", na_rep="–") + note


def report_html(
    views: dict,
    settings: dict | None = None,
    *,
    dataset: str,
    title: str = "JudgeScope report",
) -> str:
    """One HTML file holding every registered figure (interactive) and table.

    plotly.js is embedded once, so the file opens offline.
    """
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='meta'>Dataset: <b>{html.escape(dataset)}</b> · generated "
        f"{dt.datetime.now().strftime('%Y-%m-%d %H:%M')} by JudgeScope</p>",
    ]
    plotly_included = False
    for page, items in views.items():
        parts.append(f"<h2>{html.escape(page.replace('_', ' ').capitalize())}</h2>")
        page_settings = (settings or {}).get(page)
        if page_settings:
            pretty = html.escape(json.dumps(page_settings, indent=1, default=str), quote=False)
            parts.append(f"<pre class='settings'>{pretty}</pre>")
        for name, view in items.items():
            parts.append(f"<h3>{html.escape(name)}</h3>")
            if view.get("fig") is not None:
                parts.append(
                    pio.to_html(
                        view["fig"],
                        full_html=False,
                        include_plotlyjs=not plotly_included,
                        default_height="450px",
                    )
                )
                plotly_included = True
            elif view.get("data") is not None:
                parts.append(_table_html(view["data"]))
    if not views:
        parts.append("<p>No views yet: open the analysis pages first, then export again.</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def tables_zip(views: dict) -> bytes:
    """A zip with one CSV per registered table (figures' data included).

    The CSVs are for spreadsheets, so text that would start a formula is neutralised
    (``data.spreadsheet``); the registered tables themselves are not changed.
    """
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for page, items in views.items():
            for name, view in items.items():
                df = view.get("data")
                if isinstance(df, pd.DataFrame):
                    zf.writestr(f"{slug(page)}/{slug(name)}.csv", spreadsheet_csv(df))
    return buf.getvalue()
