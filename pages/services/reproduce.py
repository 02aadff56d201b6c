"""The Reproduce page's computation: a paper's reproduction table, cached per paper."""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd

from data.reproduce import rows
from pages.services.common import cache_data

#: The Reproduce page's colour of each status (see ``data.reproduce.ROW_COLUMNS``).
STATUS_COLOURS = {
    "ok": "#d9f2d9",
    "noted": "#fff2cc",
    "off": "#f8d0d0",
    "unpublished": "#eeeeee",
}
STATUS_LABELS = {
    "ok": "within the paper's rounding",
    "noted": "documented difference (see the note)",
    "off": "differs, no explanation",
    "unpublished": "no published number (computed on our data)",
}


@cache_data(show_spinner="Computing the paper's numbers from the benchmark files…", max_entries=8)
def reproduction(paper: str) -> pd.DataFrame:
    """``data.reproduce.rows(paper)`` from the data folder, plus ``link``: the app URL (page
    and query parameters) that shows the row's number."""
    table = rows(paper)
    table["link"] = [page_url(p, s) for p, s in zip(table["page"], table["settings"], strict=True)]
    return table


def page_url(page: str, settings: dict) -> str:
    """The app's relative URL of ``page`` opened with ``settings`` as query parameters."""
    if not page:
        return ""
    query = urlencode({k: v for k, v in settings.items() if v is not None})
    return f"/{page}?{query}" if query else f"/{page}"
