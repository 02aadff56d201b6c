"""data.ppi on the real benchmarks (read through the data-folder setting): the estimates
equal what pandas and ranking compute straight from the tables, the width curve behaves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.benchmarks import load_benchmark
from data.ppi import (
    METHODS,
    effective_labels,
    labels_needed,
    ppi_estimates,
    ppi_judges,
    ppi_units,
    trusted,
    width_curve,
)
from data.schema import DataError
from ranking import bradley_terry

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


@pytest.fixture(scope="module")
def summeval():
    return load_benchmark("summeval")


@pytest.fixture(scope="module")
def pandalm():
    return load_benchmark("pandalm")


def _by(table, method):
    return table[table["method"] == method].set_index("system")


def test_summeval_means_equal_pandas(summeval):
    units = ppi_units(summeval, "coherence", "gpt-4-0314/rts", "rts")
    assert units.n_labels == 100 and len(units.systems) == 12
    table = ppi_estimates(units)
    assert list(table["method"].unique()) == list(METHODS)
    hs = summeval.human_scores
    hs = hs[hs["attribute"] == "coherence"].groupby("candidate_id")["score"].mean()
    r = summeval.ratings
    r = r[(r["judge"] == "gpt-4-0314/rts") & (r["attribute"] == "coherence")]
    js = r.groupby(["context_id", "candidate_id"])["score"].mean().groupby("candidate_id").mean()
    human, judge, ppi = _by(table, "human only"), _by(table, "judge only"), _by(table, "PPI++")
    for s in units.systems:  # SummEval systems are the candidate ids
        assert human.loc[s, "estimate"] == pytest.approx(hs[s], abs=1e-12)
        assert judge.loc[s, "estimate"] == pytest.approx(js[s], abs=1e-12)
    # every label used: PPI++ has nothing to add and equals human-only
    np.testing.assert_allclose(ppi["estimate"], human["estimate"])
    assert (ppi["lam"] == 0).all() and (ppi["n_unlabeled"] == 0).all()
    # GPT-4's 1-5 scores sit well above the experts' means: the judge alone is biased
    gap = judge["estimate"] - human["estimate"]
    assert (gap > 0.3).mean() > 0.8
    assert ((judge["lower"] > human["upper"]) | (judge["upper"] < human["lower"])).mean() > 0.5


def test_summeval_few_labels_ppi_tunes_and_narrows(summeval):
    units = ppi_units(summeval, "coherence", "gpt-4-0314/rts", "rts")
    table = ppi_estimates(units, n_labels=25, seed=3)
    human, ppi = _by(table, "human only"), _by(table, "PPI++")
    assert (human["n_labeled"] == 25).all() and (ppi["n_unlabeled"] == 75).all()
    assert ppi["lam"].between(0, 1).all() and (ppi["lam"] > 0).mean() > 0.8
    assert (ppi["width"] <= human["width"] * 1.02).all()
    assert (ppi["width"] < human["width"]).mean() > 0.8


def test_summeval_width_curve(summeval):
    units = ppi_units(summeval, "coherence", "gpt-4-0314/rts", "rts")
    curve = width_curve(units, repeats=10, seed=1)
    human = curve[curve["method"] == "human only"].set_index("n_labels")["width"]
    ppi = curve[curve["method"] == "PPI++"].set_index("n_labels")["width"]
    assert human.index[0] == 10 and human.index[-1] == 100
    assert human.is_monotonic_decreasing
    assert (ppi <= human * 1.01).all() and ppi.iloc[-1] == pytest.approx(human.iloc[-1])
    full = curve[curve["n_labels"] == 100]
    assert (full.loc[full["method"] != "judge only", "coverage"] == 1).all()
    mid = curve[(curve["n_labels"] >= 28) & (curve["method"] != "judge only")]
    assert (mid["coverage"] >= 0.85).all()
    assert trusted(curve).any()
    n_eff = effective_labels(curve, 20)
    need = labels_needed(curve, 20)
    assert 20 <= n_eff <= 40 and 10 <= need <= 20


def test_summeval_win_rate_units_by_hand(summeval):
    units = ppi_units(
        summeval, "coherence", "gpt-4-0314/rts", "rts", quantity="win_rate", baseline="M11"
    )
    f = units.frame
    assert set(f["opponent"]) == {"M11"} and "M11" not in set(f["system"])
    hs = summeval.human_scores
    h = hs[hs["attribute"] == "coherence"].pivot_table(
        index="context_id", columns="candidate_id", values="score"
    )
    want = np.sign(h["M8"] - h["M11"]).map({1.0: 1.0, 0.0: 0.5, -1.0: 0.0})
    got = f[f["system"] == "M8"].set_index("label_id")["human"]
    pd.testing.assert_series_equal(
        got.sort_index(), want.loc[got.index].sort_index(), check_names=False
    )
    table = ppi_estimates(units, n_labels=40, seed=0)
    assert table["estimate"].dropna().between(-0.2, 1.2).all()


def test_pandalm_bradley_terry_from_verdicts(pandalm):
    j = ppi_judges(pandalm, "overall")
    assert set(j["judge"]) == {"gpt-3.5-turbo", "pandalm-7b"} and (j["kind"] == "verdicts").all()
    units = ppi_units(pandalm, "overall", "gpt-3.5-turbo", quantity="bradley_terry")
    assert len(units.systems) == 5 and "25 comparison(s)" in units.notes[0]
    assert units.n_labels == 974
    table = ppi_estimates(units)
    f = units.frame
    code = {s: i for i, s in enumerate(units.systems)}
    ref = bradley_terry(
        first=f["system"].map(code).to_numpy(),
        second=f["opponent"].map(code).to_numpy(),
        outcome=f["human"].to_numpy(float),
        n_items=5,
    )
    human = _by(table, "human only").loc[units.systems, "estimate"].to_numpy()
    np.testing.assert_allclose(human, ref.scores, atol=1e-6)
    few = ppi_estimates(units, n_labels=200, seed=2)
    assert _by(few, "PPI++")["lam"].iloc[0] > 0
    assert few["width"].notna().all()


def test_pandalm_win_rate(pandalm):
    units = ppi_units(pandalm, "overall", "pandalm-7b", quantity="win_rate", baseline="llama-7b")
    f = units.frame
    assert set(f["opponent"]) == {"llama-7b"} and f["human"].between(0, 1).all()
    table = ppi_estimates(units)
    human = _by(table, "human only")
    # the human outcome is the mean of the three annotators' votes, seen from the system
    assert human["estimate"].between(0.1, 0.6).all()


def test_other_scales_and_sets():
    hanna = load_benchmark("hanna")
    units = ppi_units(hanna, "coherence", "BERTScore F1", "automatic")  # a 0-1 measure
    table = ppi_estimates(units, n_labels=30)
    assert _by(table, "judge only")["estimate"].between(0, 1).all()
    assert _by(table, "PPI++")["estimate"].between(1, 5).all()  # on the humans' scale
    tc = load_benchmark("topicalchat")
    units = ppi_units(tc, "coherence", "gpt-3.5-turbo/geval", "geval")
    assert units.n_labels == 60 and len(units.systems) == 6
    assert ppi_estimates(units, n_labels=20)["width"].notna().all()


def test_bad_requests(summeval, pandalm):
    with pytest.raises(DataError, match="needs a judge of the other kind"):
        ppi_units(summeval, "coherence", "gpt-4-0314/rts", "rts", quantity="bradley_terry")
    with pytest.raises(DataError, match="baseline"):
        ppi_units(summeval, "coherence", "gpt-4-0314/rts", "rts", quantity="win_rate")
    with pytest.raises(DataError, match="no rated item"):
        ppi_units(
            summeval, "coherence", "gpt-4-0314/rts", "rts", quantity="win_rate", baseline="M99"
        )
    with pytest.raises(DataError, match="no comparison"):
        ppi_units(pandalm, "overall", "nobody", quantity="bradley_terry")
    assert ppi_judges(load_benchmark("webnlg2020"), "fluency").empty  # humans, no judge
