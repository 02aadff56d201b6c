"""Shared set-up for the tests that read the real benchmark files (no downloads).

The files are read from ``data.paths.data_dirs()[0]`` (``JUDGESCOPE_DATA``, default
``../shared/data``); a test that needs a benchmark runs whenever its files are there.
"""

from __future__ import annotations

import pytest

import data
from data.benchmarks import benchmark_info
from data.paths import data_dirs

DATA = data_dirs()[0]


def have(name: str) -> bool:
    """Whether every file of benchmark ``name`` is in :data:`DATA`."""
    return all((DATA / rel).is_file() for rel in benchmark_info(name).files)


def need(name: str):
    """Mark a test to skip when the files of benchmark ``name`` are absent."""
    return pytest.mark.skipif(not have(name), reason=f"benchmark files of {name!r} not in {DATA}")


def real(name: str):
    """Benchmark ``name`` read from :data:`DATA` by ``data.load_benchmark`` (what the app
    reads); the calling test or fixture skips when its files are absent."""
    if not have(name):
        pytest.skip(f"benchmark files of {name!r} not in {DATA}")
    return data.load_benchmark(name)


def go_offline(monkeypatch, tmp_path_factory) -> None:
    """Downloads off, and the user cache a fresh temp folder (for an autouse fixture)."""
    monkeypatch.setenv("JUDGESCOPE_OFFLINE", "1")
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path_factory.mktemp("cache")))
