"""The Judge page's backend column: an OpenAI-compatible endpoint (model, base URL, key) or a
transformers model loaded once per server.

Each backend's fields are kept settings (:func:`pages.shell.state.keep`): switching the backend and
back, or visiting another page, keeps the model and base URL typed. The API key is kept in
the session's memory too, and never written: workspace files drop every ``*api_key*`` key.

The API key comes from the password box, else (when ``OPENAI_API_KEY`` is not set) from
``.streamlit/secrets.toml``: secrets are read here, in the page layer, and handed down to the
backend as ``api_key``; ``judge/`` never imports streamlit.

The key goes only to a host the user chose (issue 23): OpenAI's (or ``OPENAI_BASE_URL``'s),
a base URL typed in this browser session, or one confirmed on this page. A base URL that
came from a workspace file or a link (kept settings restored with it) is shown with a
question, and until the user confirms its host nothing is sent there: no run, no batch, no
key. The answer is remembered for this browser session only (:data:`CHOSEN`, never saved).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

import streamlit as st

from pages.judge import PAGE
from pages.services import judge as svc
from pages.shell import state, ui


@dataclass
class ChosenBackend:
    """The backend chosen in the left column (the API key is never put into settings)."""

    kind: str  # key of svc.BACKENDS
    model: str
    base_url: str = ""
    device: str = "auto"
    api_key: str | None = None
    loaded: object | None = None  # a loaded transformers backend
    confirmed: bool = True  # False: the base URL's host waits for the user's confirmation


#: Endpoint hosts the user typed or confirmed in this browser session. Session state only:
#: not a kept setting, so no workspace file, autosave or link holds it or sets it.
CHOSEN = f"{PAGE}.hosts_chosen"
#: OpenAI's own endpoint (the client's default).
OPENAI_URL = "https://api.openai.com/v1"


def endpoint_host(base_url: str | None) -> str | None:
    """Where requests to ``base_url`` go: ``scheme://host[:port]`` (no credentials, the
    default port left out); None for an empty base URL (the client's default); the text
    itself, cut, when it is not a URL with a scheme and a host."""
    text = str(base_url or "").strip()
    if not text:
        return None
    parts = urlsplit(text)
    try:
        host, port = (parts.hostname or "").lower(), parts.port
    except ValueError:  # a port that is not a number
        host, port = "", None
    if not parts.scheme or not host:
        return text[:200]
    scheme = parts.scheme.lower()
    if port is None or port == {"http": 80, "https": 443}.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def host_chosen(host: str | None) -> bool:
    """Whether the key may go to ``host``: the default endpoint (OpenAI, or the server's
    ``OPENAI_BASE_URL``), or a host typed or confirmed in this browser session."""
    defaults = {endpoint_host(OPENAI_URL), endpoint_host(os.environ.get("OPENAI_BASE_URL"))}
    return host is None or host in defaults or host in st.session_state.get(CHOSEN, set())


def _choose(host: str | None) -> None:
    if host is not None:
        st.session_state.setdefault(CHOSEN, set()).add(host)


def _typed(key: str) -> None:
    """The Base URL box changed in the browser: the user typed this host."""
    _choose(endpoint_host(st.session_state.get(key)))


def choose_backend() -> ChosenBackend:
    """The backend widgets; for OpenAI the key typed, else the one in secrets.toml."""
    st.subheader("Backend")
    kind = st.radio(
        "Backend",
        list(svc.BACKENDS),
        key=state.keep(f"{PAGE}.backend"),
        format_func=svc.BACKENDS.get,
        label_visibility="collapsed",
    )
    if kind == "openai":
        key = state.keep(f"{PAGE}.model")
        model = st.text_input("Model", state.initial(key, "gpt-4o-mini"), key=key)
        url_key = state.keep(f"{PAGE}.base_url")
        base_url = st.text_input(
            "Base URL",
            "",
            key=url_key,
            placeholder=OPENAI_URL,
            help="Empty: OpenAI (or OPENAI_BASE_URL). A local server: e.g. "
            "http://localhost:8000/v1 (vLLM) or http://localhost:11434/v1 (Ollama).",
            on_change=_typed,
            args=(url_key,),
        )
        host = endpoint_host(base_url)
        confirmed = host_chosen(host)
        if not confirmed:
            st.warning(
                f"This base URL sends the API key to **{ui.safe(host, 120)}**. It came "
                "from a workspace file or a link, not from you: nothing is sent there (no "
                "run, no batch, no key) until you confirm that host. Not yours? Clear the "
                "box or type your own.",
                icon=":material/gpp_maybe:",
            )
            # the click's callback runs before the next run: that run sends to the host
            st.button(
                "Use this endpoint",
                key=f"{PAGE}.confirm_host",
                on_click=_choose,
                args=(host,),
                help=f"Send this session's requests, and the API key, to {ui.safe(host, 200)}",
            )
        api_key = st.text_input(
            "API key",
            type="password",
            key=state.keep(f"{PAGE}.api_key"),  # memory only: workspaces drop *api_key*
            help="Kept in this browser session's memory only: never written to disk, "
            "logs, the run store or exports. Empty: OPENAI_API_KEY or "
            ".streamlit/secrets.toml.",
        )
        if not api_key and os.environ.get("OPENAI_API_KEY"):
            st.caption("Using the key in the OPENAI_API_KEY environment variable.")
        elif not api_key:
            # the page layer reads the secret and hands it down: judge/ never imports streamlit
            api_key = svc.secret_api_key()
            if api_key:
                st.caption("Using the key OPENAI_API_KEY in .streamlit/secrets.toml.")
        if not confirmed:
            api_key = None  # not even handed on before the host is confirmed
        return ChosenBackend(kind, model, base_url, api_key=api_key or None, confirmed=confirmed)

    key = state.keep(f"{PAGE}.hf_model")
    model = st.text_input(
        "Model id or local folder",
        state.initial(key, "google/flan-t5-small"),
        key=key,
        help="Loaded with transformers; offline, only models already downloaded "
        "(or saved in a folder) can be used.",
    )
    device = st.selectbox("Device", ["auto", "cpu", "cuda"], key=state.keep(f"{PAGE}.device"))
    chosen = ChosenBackend(kind, model, device=device)
    loaded = st.session_state.get(f"{PAGE}.hf_loaded") == (model, device)
    if st.button("Load model", key=f"{PAGE}.hf_load", disabled=loaded):
        with ui.guard(f"Loading {model}"):
            svc.hf_backend(model, device)
            st.session_state[f"{PAGE}.hf_loaded"] = (model, device)
            loaded = True
    if loaded:
        chosen.loaded = backend = svc.hf_backend(model, device)
        st.caption(
            f"Loaded: {ui.safe(backend.model_id, 100)} ({backend.kind}, {backend.device}, "
            f"{ui.safe(backend.dtype)})"
        )
    return chosen
