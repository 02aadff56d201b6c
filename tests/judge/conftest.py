"""Fixtures of the judge tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def model_dirs(tmp_path_factory) -> dict[str, Path]:
    """The tiny models' folders (tests.judge.tiny_models.tiny_model_dirs), built once per
    session, with transformers' progress bars off."""
    from transformers.utils import logging

    from tests.judge.tiny_models import tiny_model_dirs

    logging.disable_progress_bar()
    return tiny_model_dirs(tmp_path_factory)
