"""API key and endpoint of an OpenAI-compatible server.

The key comes from the argument (the app reads its Streamlit secret in the page layer and
passes it in) or the ``OPENAI_API_KEY`` environment variable; it is handed to the ``openai``
client only, never kept on a backend, described, logged or stored. Endpoints are shown and
stored without user:password, query or fragment (:func:`public_url`).
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

from judge.backends.base import BackendError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Placeholder for local servers that ignore the key (vLLM, Ollama, llama.cpp); the openai
# client refuses to start without one.
NO_KEY = "not-needed"


def resolve_api_key(api_key: str | None = None, base_url: str | None = None) -> str:
    """The key to use: the argument, else ``OPENAI_API_KEY``.

    The app reads Streamlit secrets in the page layer and passes the key in. A custom ``base_url`` (a local vLLM/Ollama server) may need no key; a placeholder is
    used then. Raises :class:`BackendError` when OpenAI itself is the endpoint and no key
    is found.
    """
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if base_url:
        return NO_KEY
    raise BackendError(
        "no OpenAI API key: set the OPENAI_API_KEY environment variable (in the app: or put "
        "OPENAI_API_KEY in .streamlit/secrets.toml), or pass api_key=...; for a local OpenAI-compatible "
        "server pass its base_url"
    )


def public_url(url: str) -> str:
    """``url`` without user:password, query or fragment (safe to store and show)."""
    parts = urlsplit(str(url))
    netloc = parts.hostname or ""
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def openai_describe(model: str, base_url: str | None = None) -> dict:
    """What :meth:`OpenAIBackend.describe` returns for ``model`` at ``base_url``, without a client
    (estimates look up cached answers with it)."""
    url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    return {"kind": "openai", "model": model, "base_url": public_url(url)}


def approx_tokens(text: str) -> int:
    """Tokens of ``text`` for an API model, roughly: about 4 characters a token for English
    BPE vocabularies (what estimates count when no tokenizer is at hand)."""
    return max(1, round(len(text) / 4))


__all__ = [
    "DEFAULT_BASE_URL",
    "NO_KEY",
    "approx_tokens",
    "openai_describe",
    "public_url",
    "resolve_api_key",
]
