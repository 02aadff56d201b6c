"""The URL side of the session state: kept settings mirrored to query parameters.

A link (or a refresh) opens what its query parameters name: the dataset, the workspace and
the kept settings (:func:`pages.state.keep`). :data:`SHARED_URL` names the parameter of each
setting shared by every page; a page's own keys join through ``keep(key, url=...)``
(:data:`_url_keys`). :func:`pages.state.sync` calls :func:`_first_run` once per session and
:func:`write_url` on every run; :func:`note` collects what a link asked for and could not
get, shown once in the sidebar.

Split out of :mod:`pages.state`, which re-exports the public names (``SHARED_URL``,
``debias_modes``, ``note``, ``url_params``, ``write_url``); this module reaches the state
through it at call time (the two import each other).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import streamlit as st

_SEED = "app.url.seed"  # query parameters of the session's first run, not yet used
_NOTES = "app.url.notes"  # what the link asked for and could not be done

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
    ``pages.services.calibration.DEBIAS_MODES`` (the one list; imported here when needed, as
    the services build on this module)."""
    from pages.services.calibration import DEBIAS_MODES

    return tuple(DEBIAS_MODES)


def _parse_mode(text: str) -> str:
    modes = debias_modes()
    if text not in modes:
        raise ValueError(f"not one of {', '.join(modes)}")
    return text


_SHARED_PARSE: dict[str, Callable[[str], object]] = {
    "app.attribute": str,
    "app.judge": str,
    "app.debias.mode": _parse_mode,
    "app.debias.tau": _parse_tau,
    "app.exclude": lambda text: _scope().parse_exclude(text),
    "app.reading": lambda text: _scope().parse_reading(text),
}


def _state():
    from pages import state  # the state builds on this module

    return state


def _scope():
    from pages import scope  # the scope builds on the state

    return scope


def _url_name(key: str) -> tuple[str, Callable[[str], object]] | None:
    if key in SHARED_URL:
        return SHARED_URL[key], _SHARED_PARSE[key]
    return _url_keys.get(key)


def note(text: str) -> None:
    """A short note shown once in the sidebar (what a link asked for and could not get)."""
    st.session_state.setdefault(_NOTES, []).append(text)


def _seed_key(key: str, kept_values: dict) -> None:
    """Take ``key``'s value from the first run's query parameters, once."""
    seed = st.session_state.get(_SEED)
    named = _url_name(key)
    if not seed or named is None or named[0] not in seed:
        return
    name, parse = named
    text = seed.pop(name)
    try:
        kept_values[key] = parse(text)
    except (TypeError, ValueError) as err:
        note(f"Link: {name}={text!r} ignored ({err}).")


def _first_run() -> None:
    """A new session: open what the query parameters name (dataset, workspace, settings)."""
    from pages import workspace  # the workspace module builds on this one

    seed = {k: st.query_params.get(k) for k in st.query_params}
    st.session_state[_SEED] = seed
    workspace.restore_from_url(seed)
    name = seed.pop("dataset", None)
    if name:
        _open_from_url(name)
    state = _state()
    ds = state.active()
    attrs, judges = set(ds.attributes), set(ds.judges)
    for key, valid in (("app.attribute", attrs), ("app.judge", judges)):
        text = seed.get(SHARED_URL[key])
        if text is not None and text not in valid:
            seed.pop(SHARED_URL[key])
            note(f"Link: {SHARED_URL[key]} {text!r} is not in **{state.active_name()}**; ignored.")
    _scope().check_link(ds, state.active_name(), seed)
    kept_values = st.session_state.setdefault(state._KEPT, {})
    for key in SHARED_URL:
        _seed_key(key, kept_values)


def _open_from_url(name: str) -> None:
    state = _state()
    if name in state.datasets():
        st.session_state[state.ACTIVE] = name
        return
    import data

    if name in {b.name for b in data.list_benchmarks()}:
        try:
            state.add(name, state.load_benchmark(name))
        except Exception as err:  # missing files offline: say so, keep the demo
            note(f"Link: benchmark **{name}** could not be loaded ({err}); showing the demo.")
        return
    note(
        f"Link: dataset **{name}** was an upload of another session and cannot come back "
        "from the link alone; open its workspace file (sidebar, Workspace)."
    )


def url_params() -> dict[str, str]:
    """The query parameters of the current state: dataset, ws and the kept settings."""
    from pages import workspace

    ss = st.session_state
    params = {"dataset": _state().active_name()}
    ws = workspace.workspace_id()
    if ws:
        params["ws"] = ws
    values = _state().kept()
    for key in list(SHARED_URL) + sorted(_url_keys):
        named = _url_name(key)
        if key in values and values[key] is not None and named is not None:
            value = values[key]
            if isinstance(value, float):
                params[named[0]] = f"{value:g}"
            elif isinstance(value, (list, tuple)):  # exclude=Human,GPT-2
                params[named[0]] = ",".join(map(str, value))
            else:
                params[named[0]] = str(value)
    seed = ss.get(_SEED) or {}
    for name, text in seed.items():  # a page not visited yet keeps its parameters
        params.setdefault(name, text)
    return params


def write_url() -> None:
    """Mirror the state to the query parameters (only the ones that changed)."""
    from pages import workspace

    workspace.autosave_settings()
    try:
        wanted = url_params()
        for name, text in wanted.items():
            if st.query_params.get(name) != text:
                st.query_params[name] = text
    except Exception as err:  # the URL is a convenience: never break a page for it
        logging.getLogger("judgescope").warning("query parameters not written: %s", err)
