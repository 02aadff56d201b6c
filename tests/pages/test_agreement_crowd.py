"""Human verdicts from many annotators (a crowd, as LLMFAO's 124 workers): the vectorised
verdict agreement table against a pair-by-pair computation, each annotator against the
others' majority, and the page's aggregated view above 20 annotators (heatmap below)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

import ranking as rk
from data.agreement import annotator_summary_table, verdict_agreement_table
from data.schema import Dataset
from pages.services import agreement as svc
from tests.pages._analysis_apptest import figures, metrics, need, open_page

LABELS = ("A", "B", "tie")


def _crowd(n_workers: int, n_pairs: int = 60, per_pair: int = 4, seed: int = 0) -> Dataset:
    """Random crowd votes: each pair judged by ``per_pair`` random workers, plus one model."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n_pairs):
        truth = rng.choice(LABELS, p=[0.45, 0.45, 0.1])
        workers = rng.choice(n_workers, size=per_pair, replace=False)
        for w in workers:
            v = truth if rng.random() < 0.7 else rng.choice(LABELS)
            rows.append((f"c{k % 7}", f"human:worker{w}", f"s{k}", f"t{k}", v))
        rows.append(
            (f"c{k % 7}", "model-x", f"s{k}", f"t{k}", truth if rng.random() < 0.8 else "B")
        )
    comps = pd.DataFrame(rows, columns=["context_id", "judge", "first_id", "second_id", "verdict"])
    p = comps["verdict"].map({"A": 1.0, "B": 0.0, "tie": 0.5})
    comps = comps.assign(p_first=p, attribute="overall", sample=0)
    return Dataset(name=f"crowd{n_workers}", comparisons=comps)


def _labels(ds: Dataset) -> dict[str, dict[tuple, str]]:
    c = ds.comparisons
    out: dict[str, dict[tuple, str]] = {}
    for r in c.itertuples(index=False):
        out.setdefault(r.judge, {})[(r.context_id, r.first_id, r.second_id)] = r.verdict
    return out


def test_table_matches_cohen_kappa_pair_by_pair():
    ds = _crowd(12)
    by = _labels(ds)
    humans = sorted(j for j in by if j.startswith("human:"))
    table = verdict_agreement_table(ds).set_index(["judge", "annotator"])
    checked = 0
    for j in by:
        for h in humans:
            if j == h:
                continue
            keys = sorted(set(by[j]) & set(by[h]))
            row = table.loc[(j, h)]
            assert row["n_pairs"] == len(keys)
            if not keys:
                assert row["reason"] == "no pair judged by both"
                continue
            a = np.array([by[j][k] for k in keys], dtype=object)
            b = np.array([by[h][k] for k in keys], dtype=object)
            assert row["agreement"] == pytest.approx(float((a == b).mean()))
            want = rk.cohen_kappa(a, b)
            if math.isnan(want.value):
                assert math.isnan(row["cohen_kappa"]) and row["reason"] == want.reason
            else:
                assert row["cohen_kappa"] == pytest.approx(want.value, abs=1e-12)
                checked += 1
    assert checked > 20
    # natural order: worker2 before worker10
    judges = list(dict.fromkeys(table.index.get_level_values(0)))
    assert judges[0] == "model-x"
    nums = [int(j.removeprefix("human:worker")) for j in judges[1:]]
    assert nums == sorted(nums)


def test_annotator_summary_against_the_others_majority_by_hand():
    ds = _crowd(25, n_pairs=80)
    by = _labels(ds)
    summary = annotator_summary_table(ds).set_index("annotator")
    humans = [j for j in by if j.startswith("human:")]
    assert set(summary.index) == set(humans)
    for h in humans:
        own, ref = [], []
        for key, v in by[h].items():
            others = Counter(by[o][key] for o in humans if o != h and key in by[o])
            if not others:
                continue
            (top, n), *rest = others.most_common()
            if rest and rest[0][1] == n:
                continue  # the others tie: no majority
            own.append(v)
            ref.append(top)
        row = summary.loc[h]
        assert row["n_verdicts"] == len(by[h])
        assert row["n_pairs"] == len(own)
        if own:
            assert row["agreement"] == pytest.approx(np.mean(np.array(own) == np.array(ref)))
            want = rk.cohen_kappa(np.array(own, dtype=object), np.array(ref, dtype=object))
            if math.isnan(want.value):
                assert math.isnan(row["cohen_kappa"])
            else:
                assert row["cohen_kappa"] == pytest.approx(want.value, abs=1e-12)
    order = [int(a.removeprefix("human:worker")) for a in summary.index]
    assert order == sorted(order)


def test_top_bottom_leaves_out_nan_and_orders():
    table = pd.DataFrame(
        {"annotator": ["w10", "w2", "w3", "w4"], "cohen_kappa": [0.5, 0.5, np.nan, -0.1]}
    )
    high, low = svc.top_bottom(table, "cohen_kappa", n=2)
    assert list(high["annotator"]) == ["w2", "w10"]  # tie broken in natural order
    assert list(low["annotator"]) == ["w4", "w2"]


def test_page_aggregates_a_crowd_and_keeps_the_heatmap_for_a_few():
    at = open_page("pages/agreement/page.py", _crowd(25))
    figs = figures(at)
    assert "Annotators by agreement with the others" in figs
    assert "Agreement against number of verdicts" in figs
    assert "Cohen's kappa with the human verdicts" not in figs
    assert metrics(at)["Annotators"] == "25"
    frames = [d.value for d in at.dataframe]
    assert any(len(f) == 25 and "n_verdicts" in f.columns for f in frames)  # all annotators
    assert any(list(f["judge"]) == ["model-x"] for f in frames if "judge" in f.columns)

    at = open_page("pages/agreement/page.py", _crowd(12))
    figs = figures(at)
    assert "Annotators by agreement with the others" not in figs
    heat = figs["Cohen's kappa with the human verdicts"]["data"][0]
    cols = heat["x"]
    assert cols[-1] == "human majority"
    nums = [int(c.removeprefix("human:worker")) for c in cols[:-1]]
    assert nums == sorted(nums)  # worker2 before worker10


@need("llmfao")
def test_llmfao_crowd_view():
    at = open_page("pages/agreement/page.py", "llmfao")
    assert not at.exception
    assert "Annotators by agreement with the others" in figures(at)
    assert metrics(at)["Annotators"] == "124"
