"""The Judge bias page on a file of pairwise verdicts a user uploads (issue 22, item 8): loaded
through the Data page's reader, every section either draws or says why it cannot, and no
section fails. Without texts: the sections that need none (position-bias profile, cycles,
calibration, ties) draw, length and style say they need the texts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.io import read_upload
from tests.pages._analysis_apptest import open_page

PAGE = "pages/judge_bias/page.py"


def _verdicts_csv(seed: int = 0) -> bytes:
    """An Arena-like file: questions, two models per row, a winner, both orders of most pairs."""
    rng = np.random.default_rng(seed)
    systems = [f"model-{i}" for i in range(5)]
    strength = dict(zip(systems, [1.5, 1.0, 0.5, 0.0, -0.5], strict=True))
    rows = []
    for q in range(40):
        for a in systems:
            for b in systems:
                if a == b or rng.random() < 0.3:
                    continue
                p = 1 / (1 + np.exp(-(strength[a] - strength[b]) - 0.4))  # a first-slot bonus
                u = rng.random()
                winner = "A" if u < p - 0.05 else ("tie" if u < p + 0.05 else "B")
                rows.append(
                    {"question_id": f"q{q:02d}", "model_a": a, "model_b": b, "winner": winner}
                )
    return pd.DataFrame(rows).to_csv(index=False).encode()


@pytest.fixture(scope="module")
def uploaded():
    ds = read_upload("arena_verdicts.csv", _verdicts_csv(), kind="pairwise")
    assert len(ds.comparisons) > 500  # verdicts only: no candidate has a text
    texts = ds.candidates["text"] if len(ds.candidates) else pd.Series(dtype=object)
    assert not texts.fillna("").astype(str).str.strip().str.len().any()
    return ds


def test_every_section_draws_or_says_why_without_texts(uploaded):
    at = open_page(PAGE, uploaded)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    heads = [h.value for h in at.subheader]
    for section in ("Position-bias profile", "Length and style", "Transitivity", "Calibration"):
        assert any(section in h for h in heads), heads
    labels = {m.label for m in at.metric}
    assert {"Position consistency", "First-position win rate"} <= labels, labels
    infos = " ".join(i.value for i in at.info)
    assert "need the candidates' texts" in infos, infos
    # the sidebar counts the file's contexts (it has no contexts table)
    assert "40 contexts" in " ".join(c.value for c in at.sidebar.caption)
