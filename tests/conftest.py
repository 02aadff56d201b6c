"""Suite-wide settings: the real data must be there, caches go to a temporary folder, no hub.

The tests check JudgeScope against the public benchmarks in the data folder
(``JUDGESCOPE_DATA``, default ../shared/data). Without it they would skip and prove nothing,
so the run stops at once with a message saying where the folder is expected.
"""

from __future__ import annotations

import os
import tempfile

import pytest

from data.paths import data_dirs

# Set before any test module imports transformers or the run store.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("JUDGESCOPE_OFFLINE", "1")
os.environ["JUDGESCOPE_CACHE"] = tempfile.mkdtemp(prefix="judgescope-test-cache-")


def pytest_configure(config):
    folder = data_dirs()[0]
    if not (folder / "summeval_llm_eval" / "PROVENANCE.md").is_file():
        raise pytest.UsageError(
            f"The benchmark data folder {folder} is missing or incomplete. The tests need the "
            "public benchmarks: put them there (../shared/data beside the repository) or set "
            "JUDGESCOPE_DATA to their folder."
        )
