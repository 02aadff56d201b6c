"""The analysis scope: which systems the analyses leave out and which reading of the judge
ratings they use (issue 12, item 1).

The sidebar's "Analysis scope" section (under the dataset switcher) sets both: "Leave out
systems" (default: the dataset's reference systems, e.g. HANNA's human-written story) and,
for a dataset whose published ratings differ from the cleaned ones, "Judge ratings" (as
published / cleaned). Both are kept settings (``app.exclude``, ``app.reading``), mirrored to
the URL (``exclude=Human,GPT-2``, ``reading=published``), remembered per dataset in the
session. Every analysis page analyses :func:`analysed`: the active dataset seen through
``data.scope.analysis_view``, one object per (dataset, revision, exclusion, reading), so the
services' caches (keyed by :func:`pages.shell.session.token`) keep their results.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import streamlit as st

from data.schema import Dataset
from data.scope.analysis_view import analysis_view
from data.scope.readings import READINGS, has_readings, reading_note
from data.scope.systems import default_excluded, systems_of
from pages.shell import session
from pages.shell.session import parse_exclude
from pages.shell.text import listed, safe, short
from pages.shell.tokens import token

EXCLUDE = "app.exclude"
READING = "app.reading"
#: The dataset the kept scope belongs to (a kept setting, so a workspace file keeps it).
FOR = "app.scope.for"
#: dataset name -> {"exclude": [...], "reading": ...}: each dataset's last scope this session.
_MEMORY = "app.scope.memory"
#: (dataset name, exclude, reading) resolved by the sidebar in this run.
_NOW = "app.scope.now"

READING_LABELS = {"published": "as published", "cleaned": "cleaned"}
EXCLUDE_HELP = (
    "Analyses leave these systems out, e.g. HANNA's human-written story, which the paper "
    "does not count as a system. Their candidates, human scores, ratings and comparisons "
    "are set aside on every analysis page (the Data and Judge pages show everything)."
)
READING_HELP = (
    "HANNA's published LLM ratings are means over three tries, and a failed try entered "
    "some means with a failure code (0 or -1). **As published**: the means as released "
    "(the paper's numbers come from them). **Cleaned**: means outside the 1-5 scale left "
    "out as unparsed."
)

# Server-wide memo of views and of has_readings, by dataset token (object and revision):
# the same view object comes back, so caches keyed on it hit across runs and sessions.
_MAX_VIEWS = 8
_views: OrderedDict[tuple, Dataset] = OrderedDict()
_readings: dict[str, bool] = {}
_lock = threading.Lock()


def readings_differ(ds: Dataset) -> bool:
    """``data.scope.readings.has_readings``, computed once per dataset object and revision."""
    tok = token(ds)
    with _lock:
        if tok in _readings:
            return _readings[tok]
    value = has_readings(ds)
    with _lock:
        if len(_readings) > 64:
            _readings.clear()
        _readings[tok] = value
    return value


def view(ds: Dataset, exclude, reading: str | None) -> Dataset:
    """``data.scope.analysis_view(ds, exclude, reading)``, one object per (token, exclude, reading)."""
    key = (token(ds), tuple(exclude), reading)
    with _lock:
        if key in _views:
            _views.move_to_end(key)
            return _views[key]
    out = analysis_view(ds, list(exclude), reading)
    with _lock:
        out = _views.setdefault(key, out)  # another session may have made it meanwhile
        _views.move_to_end(key)
        while len(_views) > _MAX_VIEWS:
            _views.popitem(last=False)
    return out


# ------------------------------------------------------------------ the URL
def check_link(ds: Dataset, name: str, seed: dict) -> None:
    """Drop from the link's ``exclude=`` the systems ``ds`` does not have, with a note."""
    text = seed.get("exclude")
    if text is None:
        return
    systems = set(systems_of(ds))
    wanted = parse_exclude(text)
    unknown = [s for s in wanted if s not in systems]
    if unknown:
        seed["exclude"] = ",".join(s for s in wanted if s in systems)
        names = listed(unknown, quote="'")
        session.note(f"Link: system(s) {names} to leave out are not in **{safe(name)}**; ignored.")


# ------------------------------------------------------------------ the sidebar
def _defaults(ds: Dataset, has: bool) -> dict:
    return {"exclude": default_excluded(ds), "reading": READINGS[0] if has else None}


def _resolve(ds: Dataset, name: str, has: bool) -> dict:
    """The scope to show for dataset ``name``: the kept one when it is this dataset's, else
    the one this session last used on it, else the dataset's defaults; systems it does not
    have are dropped."""
    ss = st.session_state
    values = session.kept()
    memory = ss.setdefault(_MEMORY, {})
    if values.get(FOR) in (name, None) and EXCLUDE in values:
        scope = {"exclude": values.get(EXCLUDE), "reading": values.get(READING)}
    else:
        scope = dict(memory.get(name) or _defaults(ds, has))
    systems = systems_of(ds)
    exclude = scope.get("exclude")
    exclude = default_excluded(ds) if exclude is None else exclude
    scope["exclude"] = [s for s in systems if s in set(map(str, exclude))]
    if has and scope.get("reading") not in READINGS:
        scope["reading"] = READINGS[0]
    return scope


def _show(key: str, value) -> None:
    """Put ``value`` in widget ``key`` before it is drawn (only when it differs)."""
    ss = st.session_state
    if key not in ss or ss[key] != value:
        ss[key] = value


def sidebar_section(ds: Dataset, name: str) -> None:
    """ "Leave out systems" and "Judge ratings" (the latter only when the readings differ),
    inside ``st.sidebar``; resolves the scope :func:`analysed` uses in this run."""
    systems = systems_of(ds)
    has = readings_differ(ds)
    key_x = session.keep(EXCLUDE)
    key_r = session.keep(READING) if has else None
    scope = _resolve(ds, name, has)
    exclude, reading = scope["exclude"], scope["reading"] if has else None
    if systems or has:
        st.markdown("**Analysis scope**")
    if systems:
        _show(key_x, exclude)
        exclude = st.multiselect(
            "Leave out systems",
            systems,
            default=session.initial(key_x, exclude),
            key=key_x,
            format_func=short,  # system names: one line, long ones cut
            help=EXCLUDE_HELP,
            placeholder="none: every system analysed",
        )
    if has:
        _show(key_r, reading)
        reading = st.radio(
            "Judge ratings",
            list(READINGS),
            format_func=READING_LABELS.get,
            key=key_r,
            horizontal=True,
            help=READING_HELP + " " + reading_note(ds, reading),
        )
    exclude = [s for s in systems if s in set(exclude)]
    if session.kept().get(FOR) != name:
        session.put(FOR, name)
    st.session_state.setdefault(_MEMORY, {})[name] = {"exclude": exclude, "reading": reading}
    st.session_state[_NOW] = (name, exclude, reading)


# ------------------------------------------------------------------ what pages call
def current(ds: Dataset | None = None, name: str | None = None) -> tuple[list[str], str | None]:
    """(systems left out, reading or None) in use for the active dataset."""
    name = session.active_name() if name is None else name
    ds = session.active() if ds is None else ds
    now = st.session_state.get(_NOW)
    if now is not None and now[0] == name:
        return list(now[1]), now[2]
    has = readings_differ(ds)
    scope = _resolve(ds, name, has)
    return scope["exclude"], scope["reading"] if has else None


def analysed() -> Dataset:
    """The active dataset as the analysis pages see it (systems left out, reading applied)."""
    ds, name = session.active(), session.active_name()
    exclude, reading = current(ds, name)
    return view(ds, exclude, reading)


def scope_text(ds: Dataset | None = None) -> str:
    """One line of Markdown: what is left out (names escaped, a long list cut) and which
    reading is in use ("" when neither applies)."""
    ds = session.active() if ds is None else ds
    exclude, reading = current(ds)
    parts = []
    if systems_of(ds):
        parts.append(f"Left out: {listed(exclude, 10)}" if exclude else "No system left out")
    if reading is not None:
        parts.append(f"judge ratings {READING_LABELS[reading]}")
    return " · ".join(parts)


def settings() -> dict:
    """The scope as report settings: {"left out": ..., "judge ratings": ...} where they
    apply (a dataset without reference systems and nothing left out records nothing)."""
    ds = session.active()
    exclude, reading = current(ds)
    out = {}
    if exclude or default_excluded(ds):  # said when it matters: something out, or in
        out["left out"] = ", ".join(exclude) or "none"
    if reading is not None:
        out["judge ratings"] = READING_LABELS[reading]
    return out


def caption() -> None:
    """The scope line under an analysis page's title."""
    text = scope_text()
    if text:
        st.caption(f":material/filter_alt: {text} (Analysis scope, in the sidebar).")
