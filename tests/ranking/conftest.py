"""Fixtures several ranking test files share."""

from __future__ import annotations

import pytest

from tests.ranking.agreement_twins import panel_data


@pytest.fixture()
def panel():
    """A fresh ``agreement_twins.panel_data()``: judge and human scores, context and system
    labels of 24 contexts x 8 systems (a new copy per test, so a test may change it)."""
    return panel_data()
