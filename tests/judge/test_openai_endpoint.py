"""The API key (argument, environment; never Streamlit secrets from the judge layer) and the
endpoint's public URL."""

from __future__ import annotations

import importlib.machinery
import sys
import types

import pytest

from judge.backends.base import BackendError
from judge.backends.openai_compat import NO_KEY, public_url, resolve_api_key


@pytest.fixture(autouse=True)
def _no_ambient_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_key_resolution(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_api_key("arg-key") == "arg-key"
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    assert resolve_api_key(None) == "env-key"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert resolve_api_key(None, "http://localhost:8000/v1") == NO_KEY
    with pytest.raises(BackendError, match="no OpenAI API key"):
        resolve_api_key(None, None)
    # the judge layer never reads Streamlit secrets itself (the page passes the key in)
    fake_st = types.ModuleType("streamlit")
    fake_st.__spec__ = importlib.machinery.ModuleSpec("streamlit", None)
    fake_st.secrets = {"OPENAI_API_KEY": "secret-key"}
    monkeypatch.setitem(sys.modules, "streamlit", fake_st)
    with pytest.raises(BackendError, match="no OpenAI API key"):
        resolve_api_key(None)


def test_public_url_strips_credentials():
    assert (
        public_url("https://user:pw@host.example:8443/v1/?token=x")
        == "https://host.example:8443/v1"
    )
