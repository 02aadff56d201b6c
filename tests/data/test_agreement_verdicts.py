"""data.agreement.verdict_agreement_table: pairwise judges against the human annotators' verdicts.

Checked on the real PandaLM verdicts against an independent computation written here (the
verdicts read by hand, Cohen's kappa from scipy's contingency table), and on a small set.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy.stats.contingency import crosstab

import data
from data import agreement as da
from data.paths import data_dirs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pandalm():
    folder = "pandalm_testset"
    if not (data_dirs()[0] / folder).is_dir():
        pytest.skip(f"{folder} not in {data_dirs()[0]} (real data absent)")
    return data.load_benchmark("pandalm")


def twin_verdict(verdict, p_first):
    """A / B / tie of one comparison: the stated verdict, else read from p_first."""
    if verdict in ("A", "B", "tie"):
        return verdict
    if not np.isfinite(p_first):
        return None
    return "A" if p_first > 0.5 else "B" if p_first < 0.5 else "tie"


def twin_kappa(a, b):
    """Cohen's kappa from the contingency table (scipy), by the definition."""
    cats = sorted(set(a) | set(b))
    O = crosstab(np.asarray(a, object), np.asarray(b, object), levels=(cats, cats)).count
    O = O / O.sum()
    pe = O.sum(axis=1) @ O.sum(axis=0)
    return (np.trace(O) - pe) / (1 - pe)


def test_pandalm_verdict_agreement_against_twin(pandalm):
    table = da.verdict_agreement_table(pandalm).set_index(["judge", "annotator"])
    c = pandalm.comparisons
    key = ["context_id", "attribute", "first_id", "second_id", "sample"]
    assert not c.duplicated(key + ["judge"]).any()  # one verdict per judge and pair
    c = c.assign(
        label=[twin_verdict(v, p) for v, p in zip(c["verdict"], c["p_first"], strict=True)]
    )
    wide = c.pivot_table(index=key, columns="judge", values="label", aggfunc="first")
    humans = [j for j in wide.columns if j.startswith("human:")]
    assert len(humans) == 3

    def majority(row):
        votes = Counter(v for v in row[humans] if isinstance(v, str)).most_common()
        if not votes or (len(votes) > 1 and votes[0][1] == votes[1][1]):
            return None
        return votes[0][0]

    wide["human majority"] = [majority(r) for _, r in wide.iterrows()]
    pairs = [
        (j, h)
        for j in ("gpt-3.5-turbo", "pandalm-7b", *humans)
        for h in (*humans, "human majority")
        if j != h
    ]
    assert len(table) == len(pairs)
    for j, h in pairs:
        both = wide[[j, h]].dropna()
        row = table.loc[(j, h)]
        assert row["n_pairs"] == len(both) > 900
        assert row["agreement"] == pytest.approx((both[j] == both[h]).mean(), abs=1e-12)
        assert row["cohen_kappa"] == pytest.approx(twin_kappa(both[j], both[h]), abs=1e-12)
        assert row["is_human"] == j.startswith("human:")
    # the judges agree with the human majority well above chance, PandaLM-7B less than GPT-3.5
    maj = table.xs("human majority", level="annotator")
    assert 0.5 < maj.loc["pandalm-7b", "agreement"] < maj.loc["gpt-3.5-turbo", "agreement"]


def test_verdict_agreement_reasons_on_a_small_set():
    comps = pd.DataFrame(
        [
            ("c0", "human:h1", "x", "y", 1.0, "A"),
            ("c1", "human:h1", "x", "y", 1.0, "A"),
            ("c0", "m", "x", "y", 1.0, "A"),
            ("c1", "m", "x", "y", 1.0, "A"),
            ("c2", "late", "x", "y", 0.0, "B"),
        ],
        columns=["context_id", "judge", "first_id", "second_id", "p_first", "verdict"],
    ).assign(attribute="overall", sample=0)
    out = da.verdict_agreement_table(data.Dataset(name="v", comparisons=comps))
    out = out.set_index("judge")
    # both always say A: agreement 1, kappa undefined and said why
    assert out.loc["m", "agreement"] == 1.0 and np.isnan(out.loc["m", "cohen_kappa"])
    assert "undefined" in out.loc["m", "reason"]
    assert out.loc["late", "n_pairs"] == 0 and out.loc["late", "reason"] == "no pair judged by both"
    assert "human majority" not in set(out["annotator"])  # one human: no majority
    no_humans = comps[~comps["judge"].str.startswith("human:")]
    assert da.verdict_agreement_table(data.Dataset(name="v", comparisons=no_humans)).empty
