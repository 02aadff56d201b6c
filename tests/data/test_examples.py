"""data.comparative.examples: the pair table of the Examples page, on a set worked by hand and on SummEval.

The hand-made set (context c1, candidates M2, M3, M10, two annotators):

- (M2, M10): M2 first twice (0.8, 0.6: mean 0.7, M2 wins), M10 first once (0.9: M10 wins):
  the decision flips; the judge's pick (0.7 + 0.1) / 2 = 0.4 -> M10; humans M2 4, M10 5 ->
  M10: no disagreement.
- (M2, M3): M2 first 0.2 -> M3, M3 first 0.9 -> M3: no flip; pick M3; humans M2 4 > M3 2:
  the judge disagrees.
- (M3, M10): M3 first only: one unparsed answer ("garbage") and 0.0 -> M10; flips unknown.
- context c2 (X, Y): one tie at exactly 0.5 each way, no human scores.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from data.comparative.examples import (
    human_scores_of,
    pair_samples,
    pair_table,
    search_pairs,
)
from data.natural import natural_key, natural_sorted
from tests.pages._analysis_apptest import need, summeval_with_a_hole


def _rows():
    spec = [
        # context, first, second, p_first, sample, raw
        ("c1", "M2", "M10", 0.8, 0, "A"),
        ("c1", "M2", "M10", 0.6, 1, "A, probably"),
        ("c1", "M10", "M2", 0.9, 0, "A"),
        ("c1", "M2", "M3", 0.2, 0, "B"),
        ("c1", "M3", "M2", 0.9, 0, "A"),
        ("c1", "M3", "M10", math.nan, 0, "garbage"),
        ("c1", "M3", "M10", 0.0, 1, "B"),
        ("c2", "X", "Y", 0.5, 0, "tie"),
        ("c2", "Y", "X", 0.5, 0, "tie"),
    ]
    df = pd.DataFrame(
        spec, columns=["context_id", "first_id", "second_id", "p_first", "sample", "raw"]
    )
    return df.assign(attribute="overall", judge="j", verdict=None)


def _reference():
    return pd.DataFrame(
        {"context_id": ["c1"] * 3, "candidate_id": ["M2", "M3", "M10"], "score": [4.0, 2.0, 5.0]}
    )


def _human_scores():
    rows = [
        ("c1", "M2", "overall", "ann2", 4.0),
        ("c1", "M2", "overall", "ann10", 4.0),
        ("c1", "M3", "overall", "ann2", 1.0),
        ("c1", "M3", "overall", "ann10", 3.0),
        ("c1", "M10", "overall", "ann2", 5.0),
        ("c1", "M10", "fluency", "ann2", 2.0),
    ]
    return pd.DataFrame(
        rows, columns=["context_id", "candidate_id", "attribute", "annotator", "score"]
    )


def test_natural_order_puts_m2_before_m10():
    assert natural_sorted(["M10", "M2", "m1", "M2"]) == ["m1", "M2", "M10"]
    assert natural_key("worker9") < natural_key("worker10")


def test_pair_table_by_hand():
    t = pair_table(_rows(), _reference())
    assert list(zip(t.context_id, t.a, t.b, strict=True)) == [
        ("c1", "M2", "M3"),
        ("c1", "M2", "M10"),
        ("c1", "M3", "M10"),
        ("c2", "X", "Y"),
    ]
    by = {(r.a, r.b): r for r in t.itertuples()}
    flip = by["M2", "M10"]
    assert flip.p_a_first == pytest.approx(0.7)
    assert flip.p_a_second == pytest.approx(0.1)
    assert (flip.decision_a_first, flip.decision_a_second) == ("M2", "M10")
    assert flip.flips
    assert flip.judge_pick == "M10" and flip.human_pick == "M10"
    assert not flip.disagrees and flip.n_samples == 3 and not flip.unparsed

    dis = by["M2", "M3"]
    assert (dis.p_a_first, dis.p_a_second) == pytest.approx((0.2, 0.1))
    assert (dis.decision_a_first, dis.decision_a_second) == ("M3", "M3")
    assert not dis.flips
    assert dis.judge_pick == "M3" and dis.human_pick == "M2" and dis.disagrees

    hole = by["M3", "M10"]
    assert hole.p_a_first == 0.0 and math.isnan(hole.p_a_second)
    assert hole.decision_a_first == "M10" and pd.isna(hole.decision_a_second)
    assert pd.isna(hole.flips)
    assert hole.unparsed and hole.n_unparsed == 1 and hole.n_samples == 2
    assert hole.human_pick == "M10" and not hole.disagrees

    # a judge tie against a human preference is no disagreement (nor an agreement)
    c2 = pd.DataFrame({"context_id": ["c2", "c2"], "candidate_id": ["X", "Y"], "score": [1, 2]})
    tied = pair_table(_rows(), pd.concat([_reference(), c2])).set_index(["a", "b"])
    assert tied.loc[("X", "Y"), "human_pick"] == "Y" and tied.loc[("X", "Y"), "judge_pick"] == "tie"
    assert pd.isna(tied.loc[("X", "Y"), "disagrees"])
    tie = by["X", "Y"]
    assert (tie.decision_a_first, tie.decision_a_second, tie.judge_pick) == ("tie",) * 3
    assert not tie.flips
    assert pd.isna(tie.human_pick) and pd.isna(tie.disagrees)  # no human scores in c2
    assert t["flips"].sum() == 1 and t["disagrees"].sum() == 1 and t["unparsed"].sum() == 1


def test_pair_table_without_reference_or_rows():
    t = pair_table(_rows())
    assert t["human_pick"].isna().all() and t["disagrees"].isna().all()
    empty = pair_table(_rows().iloc[:0])
    assert len(empty) == 0 and "flips" in empty


def test_every_answer_unparsed_keeps_the_pair():
    rows = _rows().assign(p_first=np.nan)
    t = pair_table(rows, _reference())
    assert len(t) == 4 and t["unparsed"].all()
    assert t["p_a_first"].isna().all() and t["judge_pick"].isna().all()
    assert t["flips"].isna().all() and t["disagrees"].isna().all()
    assert list(t["human_pick"].iloc[:3]) == ["M2", "M10", "M10"]


def test_search_looks_in_context_candidate_texts_ids_and_raw_answers():
    rows = _rows()
    t = pair_table(rows, _reference())
    contexts = pd.DataFrame({"context_id": ["c1", "c2"], "text": ["A story about a cat", "x"]})
    candidates = pd.DataFrame(
        {
            "context_id": ["c1", "c1", "c1", "c2", "c2"],
            "candidate_id": ["M2", "M3", "M10", "X", "Y"],
            "text": ["one", "a PURPLE dog", "three", None, ""],
        }
    )

    def found(q):
        mask = search_pairs(t, q, rows=rows, contexts=contexts, candidates=candidates)
        return [(a, b) for a, b in zip(t.a[mask], t.b[mask], strict=True)]

    assert found("purple") == [("M2", "M3"), ("M3", "M10")]
    assert found("GARBAGE") == [("M3", "M10")]
    assert found("probably") == [("M2", "M10")]
    assert found("cat") == [("M2", "M3"), ("M2", "M10"), ("M3", "M10")]
    assert found("x") == [("X", "Y")]  # an id (and the text of c2)
    assert found("  ") == [(a, b) for a, b in zip(t.a, t.b, strict=True)]
    assert found("no such words") == []
    # a dataset without texts
    none = search_pairs(
        t,
        "cat",
        rows=rows.drop(columns="raw"),
        contexts=contexts.iloc[:0],
        candidates=candidates.iloc[:0],
    )
    assert not none.any()


def test_pair_samples_lists_both_orders_and_marks_unparsed():
    s = pair_samples(_rows(), "c1", "M10", "M3")  # M10 was never shown first
    assert list(s["order"]) == ["M3 first", "M3 first"]
    s = pair_samples(_rows(), "c1", "M3", "M10")
    assert list(s["order"]) == ["M3 first", "M3 first"]
    assert list(s["parsed"]) == ["UNPARSED", "yes"] and list(s["raw"]) == ["garbage", "B"]
    s = pair_samples(_rows(), "c1", "M2", "M10")
    assert list(s["order"]) == ["M2 first", "M2 first", "M10 first"]
    assert list(s["sample"]) == [0, 1, 0]
    assert list(s["p_first"]) == pytest.approx([0.8, 0.6, 0.9])


def test_human_scores_per_annotator_and_mean():
    h = human_scores_of(_human_scores(), "c1", ["M3", "M10"])
    assert list(h.columns) == ["attribute", "annotator", "M3", "M10"]
    # fluency: one annotator, no mean row; overall: ann2, ann10 (natural order), then the mean
    assert list(zip(h.attribute, h.annotator, strict=True)) == [
        ("fluency", "ann2"),
        ("overall", "ann2"),
        ("overall", "ann10"),
        ("overall", "mean"),
    ]
    overall_mean = h.iloc[3]
    assert overall_mean["M3"] == pytest.approx(2.0) and overall_mean["M10"] == pytest.approx(5.0)
    assert math.isnan(h.iloc[0]["M3"]) and h.iloc[0]["M10"] == 2.0
    assert len(human_scores_of(_human_scores(), "c9", ["M3"])) == 0
    assert len(human_scores_of(_human_scores().iloc[:0], "c1", ["M3"])) == 0


@need("summeval")
def test_real_summeval_flips_and_disagreements_counted_pair_by_pair():
    ds, holes, doc = summeval_with_a_hole()
    attribute, judge = "coherence", "gpt-3.5-turbo-0301/ab-choice"
    rows = holes.comparisons[
        (holes.comparisons.attribute == attribute) & (holes.comparisons.judge == judge)
    ]
    hs = ds.human_scores[ds.human_scores.attribute == attribute]
    human = hs.groupby(["context_id", "candidate_id"])["score"].mean().to_dict()
    ref = pd.DataFrame(
        [(c, k, v) for (c, k), v in human.items()], columns=["context_id", "candidate_id", "score"]
    )
    t = pair_table(rows, ref)

    # the same numbers, one comparison at a time
    p = {}
    for r in rows.itertuples():
        p.setdefault((r.context_id, r.first_id, r.second_id), []).append(r.p_first)
    pairs = {(c, *sorted((f, s))) for c, f, s in p}
    assert len(t) == len(pairs) == 100 * 11
    flips = disagree = unparsed = 0
    for c, x, y in pairs:
        xy, yx = p[c, x, y], p[c, y, x]
        if any(math.isnan(v) for v in xy + yx):
            unparsed += 1
            continue
        first = x if np.mean(xy) > 0.5 else y if np.mean(xy) < 0.5 else "tie"
        second = y if np.mean(yx) > 0.5 else x if np.mean(yx) < 0.5 else "tie"
        flips += first != second
        px = (np.mean(xy) + 1 - np.mean(yx)) / 2
        pick = x if px > 0.5 else y if px < 0.5 else "tie"
        hx, hy = human[c, x], human[c, y]
        if hx != hy and pick != "tie":
            disagree += pick != (x if hx > hy else y)
    assert unparsed == 11 and int(t["unparsed"].sum()) == 11
    assert int(t["flips"].sum()) == flips > 0
    assert int(t["disagrees"].sum()) == disagree > 0
    hole = t[t.context_id == doc]
    assert len(hole) == 11 and hole["flips"].isna().all() and hole["human_pick"].notna().any()
