"""Bradley–Terry and Elo against evalica's golden scores shipped with the LLMFAO votes.

evalica (dustalov/evalica) conventions, read from its source: a tie counts half a win for each
side (win_weight 1, tie_weight 0.5) in Bradley–Terry, whose strengths are normalised to sum to
1; Elo uses initial 1000, k 4, base 10, scale 400 over the games in file order. The golden
files are read from the data folder (``data.paths.data_dirs()[0]``), never copied.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.paths import data_dirs
from ranking import bradley_terry, elo

FOLDER = data_dirs()[0] / "llmfao_evalica"
DATASETS = ("simple", "food", "llmfao")

pytestmark = pytest.mark.skipif(
    not (FOLDER / "llmfao.csv").exists(), reason=f"LLMFAO reference files not in {FOLDER}"
)


def _load(name):
    votes = pd.read_csv(FOLDER / f"{name}.csv", dtype=str)
    golden = pd.read_csv(FOLDER / f"{name}-golden.csv", dtype=str)
    golden["score"] = golden["score"].astype(float)
    items = list(dict.fromkeys([*votes["left"], *votes["right"]]))
    index = {item: k for k, item in enumerate(items)}
    first = votes["left"].map(index).to_numpy(dtype=np.int64)
    second = votes["right"].map(index).to_numpy(dtype=np.int64)
    winner = votes["winner"].to_numpy(dtype=object)
    assert set(winner) <= {"left", "right", "tie"}
    outcome = np.where(winner == "left", 1.0, np.where(winner == "right", 0.0, 0.5))
    return items, first, second, outcome, golden


def _golden(golden, algorithm, items):
    series = golden[golden["algorithm"] == algorithm].set_index("item")["score"]
    assert len(series) == len(items)
    return series.loc[items].to_numpy()


@pytest.mark.parametrize("name", DATASETS)
def test_bradley_terry_matches_evalica_golden(name):
    items, first, second, outcome, golden = _load(name)
    res = bradley_terry(first=first, second=second, outcome=outcome, n_items=len(items))
    assert res.converged and res.finite_mle and res.n_components == 1
    strength = np.exp(res.scores)
    strength /= strength.sum()
    expected = _golden(golden, "bradley_terry", items)
    # evalica's own tests use rtol 1e-4; the exact MLE reproduces its numbers far closer
    np.testing.assert_allclose(strength, expected, rtol=1e-9)


@pytest.mark.parametrize("name", DATASETS)
def test_bradley_terry_P_path_with_vote_weights_matches_golden(name):
    # repeated votes on an ordered pair do not fit one P cell: aggregate them into a mean
    # outcome with the vote count as weight, which leaves the likelihood unchanged
    items, first, second, outcome, golden = _load(name)
    n = len(items)
    res_flat = bradley_terry(first=first, second=second, outcome=outcome, n_items=n)
    # per ordered pair: weight = number of votes, p = mean outcome -> identical likelihood
    W = np.zeros((n, n))
    S = np.zeros((n, n))
    np.add.at(W, (first, second), 1.0)
    np.add.at(S, (first, second), outcome)
    P = np.where(W > 0, S / np.where(W > 0, W, 1.0), np.nan)
    res_P = bradley_terry(P, weights=np.where(W > 0, W, 0.0))
    np.testing.assert_allclose(res_P.scores[0], res_flat.scores, atol=1e-9)
    strength = np.exp(res_P.scores[0])
    np.testing.assert_allclose(
        strength / strength.sum(), _golden(golden, "bradley_terry", items), rtol=1e-9
    )


@pytest.mark.parametrize("name", DATASETS)
def test_elo_matches_evalica_golden(name):
    items, first, second, outcome, golden = _load(name)
    res = elo(first, second, outcome, len(items), k=4.0, initial=1000.0, base=10.0, scale=400.0)
    np.testing.assert_allclose(res.scores, _golden(golden, "elo", items), rtol=0, atol=1e-9)


def test_llmfao_counts_match_provenance():
    items, first, _, outcome, _ = _load("llmfao")
    assert len(items) == 59 and len(first) == 8931
    assert (outcome == 0.5).sum() == 3471
