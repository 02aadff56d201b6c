"""The Judge page's backend column: an OpenAI-compatible endpoint (model, base URL, key) or a
transformers model loaded once per server.

Each backend's fields are kept settings (:func:`pages.shell.state.keep`): switching the backend and
back, or visiting another page, keeps the model and base URL typed. The API key is kept in
the session's memory too, and never written: workspace files drop every ``*api_key*`` key.

The API key comes from the password box, else (when ``OPENAI_API_KEY`` is not set) from
``.streamlit/secrets.toml``: secrets are read here, in the page layer, and handed down to the
backend as ``api_key``; ``judge/`` never imports streamlit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

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
        base_url = st.text_input(
            "Base URL",
            "",
            key=state.keep(f"{PAGE}.base_url"),
            placeholder="https://api.openai.com/v1",
            help="Empty: OpenAI (or OPENAI_BASE_URL). A local server: e.g. "
            "http://localhost:8000/v1 (vLLM) or http://localhost:11434/v1 (Ollama).",
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
        return ChosenBackend(kind, model, base_url, api_key=api_key or None)

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
