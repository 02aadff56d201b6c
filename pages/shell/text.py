"""User text (ids, names, file names, URL parameters) made safe to show: one line, cut with
an ellipsis (:func:`short`), escaped for Markdown (:func:`safe`), a long list cut with a
count (:func:`listed`).

The bottom of the shell: no Streamlit and no other shell module, so every shell module can
escape what it echoes (a link's parameters reach :mod:`~pages.shell.session`'s notes).
Pages use them through :mod:`pages.shell.ui` (``ui.safe``, ``ui.short``), which re-exports
them beside the plotly side (``ui.fig_text``, ``ui.plain_fig_text``).
"""

from __future__ import annotations

import re

#: Every ASCII punctuation character: CommonMark lets a backslash escape each of them, and
#: Streamlit's Markdown extensions start with some of them (``:red[...]``, ``:material/x:``,
#: emoji shortcodes, ``$math$``, ``~strike~``).
_MD_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")
_MD_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
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


def unsafe(text) -> str:
    """The plain text behind :func:`safe`'s escapes (for places that are not Markdown: the
    HTML report's cards keep what the page showed, without backslashes)."""
    return _MD_ESCAPED.sub(r"\1", str(text))


def listed(values, limit: int = 5, each: int | None = 40, quote: str = "") -> str:
    """Names from a user or a link as one short, escaped Markdown list: the first ``limit``,
    each :func:`safe` at ``each`` characters (between ``quote`` marks), then "and 9,995
    more" (a note never echoes a parameter of 10,000 names whole)."""
    values = list(values)
    shown = ", ".join(f"{quote}{safe(v, each)}{quote}" for v in values[:limit])
    rest = len(values) - limit
    return shown + (f" and {rest:,} more" if rest > 0 else "")


def whole(value, limit: int = 60) -> str | None:
    """The whole of ``value``, escaped, for a widget's ``help`` when its label shows it cut
    (longer than ``limit``); None when the label shows all of it."""
    return safe(value, None) if len(short(value, None)) > limit else None
