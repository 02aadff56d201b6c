"""The session's data: the loaded datasets, which one is active, and the kept settings.

Keys are namespaced ``app.*``; each page keeps its own widgets under its own prefix.
Benchmarks are loaded once per server (``st.cache_resource``) and treated as read-only.
Kept settings (:func:`keep`) survive page visits; the settings a link names are taken from
the session's first query parameters (the seed) when their widget is first kept.

The lower shell modules (scope, workspace, url) build on this one; pages use
:mod:`pages.shell.state`, which adds what needs them (the once-per-run sync, the sidebar,
autosave after a change).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.state import get_session_state

import data
from data.schema import Dataset
from data.scope.readings import READINGS
from pages.services.calibration import DEBIAS_MODES
from pages.shell import tokens
from pages.shell.text import safe

DATASETS = "app.datasets"
ACTIVE = "app.active"
DEMO = "demo"

# Datasets shared by every session of this server (the cached benchmarks and the demo), by
# id: [weak reference, source name]. The workspace file names them instead of copying them.
_shared: dict[int, tuple[weakref.ref, str]] = {}
_shared_lock = threading.Lock()


def _mark_shared(ds: Dataset, source: str) -> Dataset:
    with _shared_lock:
        _shared[id(ds)] = (weakref.ref(ds), source)
    return ds


def shared_source(ds: Dataset) -> str | None:
    """ "demo" or the benchmark name when ``ds`` is the server's unchanged copy; else None."""
    with _shared_lock:
        entry = _shared.get(id(ds))
    return entry[1] if entry is not None and entry[0]() is ds else None


@st.cache_resource(show_spinner="Loading benchmark…")
def load_benchmark(name: str) -> Dataset:
    return _mark_shared(data.load_benchmark(name), name)


@st.cache_resource(show_spinner=False)
def demo() -> Dataset:
    return _mark_shared(data.demo_dataset(), DEMO)


def datasets() -> dict[str, Dataset]:
    if DATASETS not in st.session_state:
        st.session_state[DATASETS] = {DEMO: demo()}
        st.session_state[ACTIVE] = DEMO
    return st.session_state[DATASETS]


def register(name: str, ds: Dataset, *, activate: bool = True) -> None:
    """Register ``ds`` under ``name`` (replacing an older one of that name), with a new
    revision; :func:`pages.shell.state.add` also autosaves."""
    datasets()[name] = ds
    if activate:
        st.session_state[ACTIVE] = name
    tokens.bump(ds)


def active_name() -> str:
    datasets()
    name = st.session_state.get(ACTIVE, DEMO)
    return name if name in st.session_state[DATASETS] else DEMO


def active() -> Dataset:
    return datasets()[active_name()]


# ------------------------------------------------------------------ notes
_NOTES = "app.url.notes"  # what the link asked for and could not be done


def note(text: str) -> None:
    """A short note shown once in the sidebar (what a link asked for and could not get)."""
    st.session_state.setdefault(_NOTES, []).append(text)


def take_notes() -> list[str]:
    """The notes not shown yet (they are shown once)."""
    return st.session_state.pop(_NOTES, [])


# ------------------------------------------------------------------ settings in the URL
_SEED = "app.url.seed"  # query parameters of the session's first run, not yet used

#: Settings shared by every page, and their query parameter.
SHARED_URL = {
    "app.attribute": "attribute",
    "app.judge": "judge",
    "app.debias.mode": "debias",
    "app.debias.tau": "tau",
    "app.exclude": "exclude",
    "app.reading": "reading",
}
#: Page keys mirrored to the URL (``keep(key, url=...)``): key -> (parameter, parser).
_url_keys: dict[str, tuple[str, Callable[[str], object]]] = {}


def _parse_tau(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 1.0:
        raise ValueError("not between 0 and 1")
    return value


def debias_modes() -> tuple[str, ...]:
    """The debias modes a link may ask for: the keys of
    ``pages.services.calibration.DEBIAS_MODES`` (the one list)."""
    return tuple(DEBIAS_MODES)


def _parse_mode(text: str) -> str:
    modes = debias_modes()
    if text not in modes:
        raise ValueError(f"not one of {', '.join(modes)}")
    return text


def parse_exclude(text: str) -> list[str]:
    """``exclude=Human,GPT-2`` -> ["Human", "GPT-2"]; an empty text leaves nothing out."""
    return [s.strip() for s in str(text).split(",") if s.strip()]


def parse_reading(text: str) -> str:
    if text not in READINGS:
        raise ValueError(f"not one of {', '.join(READINGS)}")
    return text


_SHARED_PARSE: dict[str, Callable[[str], object]] = {
    "app.attribute": str,
    "app.judge": str,
    "app.debias.mode": _parse_mode,
    "app.debias.tau": _parse_tau,
    "app.exclude": parse_exclude,
    "app.reading": parse_reading,
}


def url_name(key: str) -> tuple[str, Callable[[str], object]] | None:
    """(query parameter, parser) of the kept setting ``key``; None when it has none."""
    if key in SHARED_URL:
        return SHARED_URL[key], _SHARED_PARSE[key]
    return _url_keys.get(key)


def url_keys() -> list[str]:
    """Every kept setting mirrored to the URL: the shared ones, then the pages' own."""
    return list(SHARED_URL) + sorted(_url_keys)


def seed_key(key: str, kept_values: dict) -> None:
    """Take ``key``'s value from the first run's query parameters, once."""
    seed = st.session_state.get(_SEED)
    named = url_name(key)
    if not seed or named is None or named[0] not in seed:
        return
    name, parse = named
    text = seed.pop(name)
    try:
        kept_values[key] = parse(text)
    except (TypeError, ValueError) as err:
        note(f"Link: {name}='{safe(text)}' ignored ({safe(err, 120)}).")


# ------------------------------------------------------------------ kept settings
#: key -> last value of every kept setting (:func:`keep`), the truth between pages.
_KEPT = "app.kept"
_DRAWN, _DRAWN_LAST = "app.kept.drawn", "app.kept.drawn_last"
_RUN = "app.kept.run"  # the run the drawn sets were last turned over in
_PAGE = "app.kept.page"  # the page of the last run


def _run_token() -> object:
    """An object that lives exactly as long as the current script run."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return None if ctx is None else ctx.parallel_coordinator


def _page() -> str:
    ctx = get_script_run_ctx(suppress_warning=True)
    return "" if ctx is None else str(ctx.page_script_hash)


def _set_by_page(key: str) -> bool:
    """Whether code of this run (or a callback before it) wrote ``key`` to session state."""
    try:
        return get_session_state().is_new_state_value(key)
    except Exception:  # no runtime (plain python): nothing was written
        return False


def new_run() -> bool:
    """Turn over the sets of drawn widgets at the start of a run; True once per run (the
    first call of the run), False on later calls."""
    ss = st.session_state
    run = _run_token()
    if run is not None and ss.get(_RUN) is run:
        return False
    ss[_RUN] = run
    # Values are kept when their widget is drawn (keep), never read here: on a page change
    # the browser sends no widget states and Streamlit's fallback values are stale.
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is not None and getattr(ctx, "fragment_ids_this_run", None):
        # a fragment's rerun draws only its own widgets: the page's others still live
        ss[_DRAWN_LAST] = set(ss.get(_DRAWN, set()))
    else:
        ss[_DRAWN_LAST], ss[_DRAWN] = ss.get(_DRAWN, set()), set()
    page = _page()
    if ss.get(_PAGE) != page:  # another page: its widgets are new ones (ids hash the page)
        ss[_PAGE], ss[_DRAWN_LAST] = page, set()
    return True


def keep(key: str, url: str | None = None, parse: Callable[[str], object] = str) -> str:
    """Give back ``key`` after making sure its widget shows the setting's last value.

    Streamlit forgets a widget's value when a run does not draw it (another page is open).
    A page names the widget ``key=state.keep("app.attribute")`` and the value survives
    visits elsewhere; a key used by several pages (``app.attribute``, ``app.judge``,
    ``app.debias.*``) is one setting for all of them. ``url`` mirrors the setting to that
    query parameter (a refresh or a shared link brings it back; ``parse`` turns the text
    back into a value and raises ValueError on a bad one).

    When the widget was not drawn in the previous run (on this page), its kept value is
    written to session state before the widget is drawn: the browser then shows it.
    A widget given a default value as well makes Streamlit warn ("created with a default
    value but also had its value set via the Session State API"): pass the default as
    :func:`initial` gives it, after calling ``keep``::

        key = state.keep("judge.model")
        st.text_input("Model", state.initial(key, "gpt-4o-mini"), key=key)
    """
    if url is not None:
        _url_keys[key] = (url, parse)
    ss = st.session_state
    kept_values = ss.setdefault(_KEPT, {})
    seed_key(key, kept_values)
    drawn = ss.setdefault(_DRAWN, set())
    if _set_by_page(key) or (key in ss.get(_DRAWN_LAST, set()) and key in ss):
        # chosen by the page (or a link) this run, or the live widget of the last run on
        # this page: its value is this run's, the one to keep
        kept_values[key] = ss[key]
    elif key in kept_values and key not in drawn:
        ss[key] = kept_values[key]
    drawn.add(key)
    return key


def initial(key: str, default):
    """The default to give the widget ``key`` (after :func:`keep`): None when its value was
    set through session state this run (restored, or set by the page), else ``default``.

    Streamlit warns about a widget that has both; with None it has only the kept value.
    """
    return None if _set_by_page(key) else default


def put(key: str, value) -> None:
    """Set a kept setting from code (a button, a loaded workspace), drawn or not this run."""
    ss = st.session_state
    ss.setdefault(_KEPT, {})[key] = value
    for name in (_DRAWN, _DRAWN_LAST):
        ss.setdefault(name, set()).discard(key)  # the widget takes it when next drawn


def kept() -> dict:
    """A copy of every kept setting (for the workspace file), current values first."""
    ss = st.session_state
    out = dict(ss.get(_KEPT, {}))
    for key in ss.get(_DRAWN, set()):
        if key in ss:
            out[key] = ss[key]
    return out
