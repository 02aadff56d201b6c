"""data.comparative.ties.tie_models: half-win, Davidson and Rao–Kupper on LLMFAO's human verdicts, ChatGPT's
SummEval verdicts, a judge without ties, and data with holes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import data
from data.comparative.ties import tie_models
from data.flat import flat_comparisons
from data.schema import DataError
from ranking import bradley_terry, kendall
from tests.data._benchmark_files import need

POOL = "human (pooled)"
CHATGPT = "gpt-3.5-turbo-0301/ab-choice"


def llmfao_pool():
    ds = data.load_benchmark("llmfao")
    c = ds.comparisons
    rows = c[c["judge"].astype(str).str.startswith("human:")].assign(judge=POOL)
    return ds, rows


def by_hand_loglik(fc, table, model, param):
    """Three-outcome log-likelihood straight from the textbook formulas (slow twin)."""
    score = table.set_index("system")
    name = {"Davidson": "davidson", "Rao–Kupper": "rao_kupper"}[model]
    pi = np.exp(score[name].loc[fc.items].to_numpy())
    a, b = pi[fc.first], pi[fc.second]
    if model == "Davidson":
        den = a + b + param * np.sqrt(a * b)
        pw, pt, pl = a / den, param * np.sqrt(a * b) / den, b / den
    else:
        pw, pl = a / (a + param * b), b / (b + param * a)
        pt = (param**2 - 1) * a * b / ((a + param * b) * (param * a + b))
    y = fc.p
    return float(np.sum(np.where(y == 1, np.log(pw), np.where(y == 0, np.log(pl), np.log(pt)))))


@need("llmfao")
def test_llmfao_human_pool():
    ds, rows = llmfao_pool()
    tm = tie_models(rows, attribute="overall", judge=POOL, candidates=ds.candidates)
    fc = flat_comparisons(rows, attribute="overall", judge=POOL, item="system",
                          candidates=ds.candidates)  # fmt: skip
    s = tm.summary.set_index("model")
    observed = float(np.mean(fc.p == 0.5))
    assert 0.35 < observed < 0.42  # about 39 % ties among the pooled human verdicts
    np.testing.assert_allclose(s["observed_tie_rate"], observed)
    # Davidson's MLE reproduces the observed tie rate exactly (its score equation in nu)
    assert s.loc["Davidson", "predicted_tie_rate"] == pytest.approx(observed, abs=1e-6)
    for model in ("Davidson", "Rao–Kupper"):
        assert s.loc[model, "tie_low"] < s.loc[model, "tie_param"] < s.loc[model, "tie_high"]
        assert s.loc[model, "log_lik"] > s.loc["half-win", "log_lik"]
        ll = by_hand_loglik(fc, tm.table, model, s.loc[model, "tie_param"])
        assert s.loc[model, "log_lik"] == pytest.approx(ll, rel=1e-9)
    assert s.loc["Rao–Kupper", "tie_param"] > 1.0
    plain = bradley_terry(first=fc.first, second=fc.second, outcome=fc.p, n_items=len(fc.items))
    half = tm.table.set_index("system")["half_win"].loc[fc.items].to_numpy()
    np.testing.assert_allclose(half, plain.scores, atol=1e-9)
    t = tm.table
    assert len(t) == len(fc.items) == 59
    assert s.loc["Davidson", "kendall_vs_half_win"] == pytest.approx(
        kendall(t["davidson"].to_numpy(), t["half_win"].to_numpy())
    )
    assert s.loc["Rao–Kupper", "kendall_vs_half_win"] > 0.85
    assert list(t["rank_half_win"]) == sorted(t["rank_half_win"])  # best first
    assert t["n_ties"].sum() == 2 * int((fc.p == 0.5).sum())


@need("summeval")
def test_summeval_chatgpt_verdicts():
    ds = data.load_benchmark("summeval")
    tm = tie_models(ds.comparisons, attribute="coherence", judge=CHATGPT,
                    candidates=ds.candidates)  # fmt: skip
    s = tm.summary.set_index("model")
    assert 0.01 < s.loc["Davidson", "observed_tie_rate"] < 0.06
    assert 0 < s.loc["Davidson", "tie_param"] < 0.2
    assert 1 < s.loc["Rao–Kupper", "tie_param"] < 1.2
    # "a tie is half a win" read as a three-outcome model predicts far more ties than seen
    assert s.loc["half-win", "predicted_tie_rate"] > 5 * s.loc["half-win", "observed_tie_rate"]
    assert s.loc["Davidson", "log_lik"] > s.loc["half-win", "log_lik"]
    assert tm.table["system"].tolist()[:2] == ["M22", "M12"]


def toy(p, systems=("M10", "M2", "M1")):
    """Three contexts where every pair of three systems meets both ways."""
    rows, cands = [], []
    k = 0
    for ctx in ("c1", "c2", "c3"):
        for s in systems:
            cands.append({"context_id": ctx, "candidate_id": f"{ctx}-{s}", "system": s})
        for i in systems:
            for j in systems:
                if i != j:
                    rows.append({"context_id": ctx, "attribute": "q", "judge": "j",
                                 "first_id": f"{ctx}-{i}", "second_id": f"{ctx}-{j}",
                                 "p_first": p[k % len(p)]})  # fmt: skip
                    k += 1
    return pd.DataFrame(rows), pd.DataFrame(cands)


def test_judge_without_ties_is_the_boundary():
    comps, cands = toy([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    tm = tie_models(comps, attribute="q", judge="j", candidates=cands)
    s = tm.summary.set_index("model")
    assert s.loc["Davidson", "tie_param"] == 0.0 and s.loc["Rao–Kupper", "tie_param"] == 1.0
    assert (s["observed_tie_rate"] == 0).all()
    np.testing.assert_allclose(tm.table["davidson"], tm.table["half_win"], atol=1e-7)
    np.testing.assert_allclose(tm.table["rao_kupper"], tm.table["half_win"], atol=1e-7)
    assert any("no tie" in n for n in tm.notes)


def test_holes_and_natural_order():
    comps, cands = toy([0.5, 1.0, np.nan, 0.0, 0.5, 1.0, 0.0, 0.5])
    tm = tie_models(comps, attribute="q", judge="j", candidates=cands)
    assert tm.n_comparisons == int(comps["p_first"].notna().sum())
    assert tm.summary["tie_param"].iloc[1:].notna().all()
    everything_tied, _ = toy([0.5])
    tm = tie_models(everything_tied, attribute="q", judge="j", candidates=cands)
    assert (tm.table["half_win"] == 0).all()
    assert tm.table["system"].tolist() == ["M1", "M2", "M10"]  # equal scores: natural order
    assert tm.summary["tie_param"].iloc[1] == np.inf
    assert any("every comparison is a tie" in n for n in tm.notes)


def test_nothing_usable_says_so():
    comps, cands = toy([np.nan])
    with pytest.raises(DataError, match="no usable comparison of 'q' by 'j'"):
        tie_models(comps, attribute="q", judge="j", candidates=cands)
