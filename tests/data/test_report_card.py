"""data.report_card on hand-made pairs with known answers: gold votes, accuracy with Wilson
intervals, both orders, categories, calibration, the length check, failures, McNemar, bad
input said with counts, cost; and the command line."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from data.report_card import (
    calibration,
    card,
    category_of,
    category_table,
    compare,
    failures,
    gold_pairs,
    judge_table,
    length_table,
    mode_table,
    pair_outcomes,
    problems,
    with_cost,
)
from data.schema import Dataset
from ranking import ece, position_profile, wilson_interval

X, Y = "x", "y"


def _row(ctx, judge, first, second, p, raw="", sample=0):
    return dict(
        context_id=ctx,
        attribute="overall",
        judge=judge,
        first_id=first,
        second_id=second,
        p_first=p,
        sample=sample,
        raw=raw,
    )


def _dataset() -> Dataset:
    """Six pairs (x against y) in two categories, gold mostly x.

    - a/0 .. a/2, b/0: gold x (human:gold, x shown first)
    - b/1: gold tie; b/2: gold unread ("maybe"); c: two humans disagree (conflict)
    - judge J: both orders everywhere, probabilities; wrong on a/2 in the swapped order
    - judge K: a/0 both orders right; a/1 one order (right); a/2 unparsed both orders;
      b/0 nothing
    """
    g = "human:gold"
    rows = [
        _row("a/0", g, X, Y, 1.0),
        _row("a/1", g, X, Y, 1.0),
        _row("a/2", g, X, Y, 1.0),
        _row("b/0", g, Y, X, 0.0),  # gold order y first, x wins
        _row("b/1", g, X, Y, 0.5),
        _row("b/2", g, X, Y, np.nan, raw="maybe"),
        _row("c", "human:ann1", X, Y, 1.0),
        _row("c", "human:ann2", X, Y, 0.0),
        # J: both orders, probabilities
        _row("a/0", "J", X, Y, 0.9),
        _row("a/0", "J", Y, X, 0.2),
        _row("a/1", "J", X, Y, 0.7),
        _row("a/1", "J", Y, X, 0.4),
        _row("a/2", "J", X, Y, 0.8),
        _row("a/2", "J", Y, X, 0.6),  # y shown first wins: wrong
        _row("b/0", "J", Y, X, 0.3),
        _row("b/0", "J", X, Y, 0.65),
        _row("b/1", "J", X, Y, 0.9),
        _row("c", "J", X, Y, 0.9),
        _row("z/9", "J", X, Y, 0.9),  # no human verdict on this pair
        # K: hard verdicts
        _row("a/0", "K", X, Y, 1.0),
        _row("a/0", "K", Y, X, 0.0),
        _row("a/1", "K", X, Y, 1.0),
        _row("a/2", "K", X, Y, np.nan, raw="???"),
        _row("a/2", "K", Y, X, np.nan, raw="???"),
    ]
    comps = pd.DataFrame(rows)
    ctx = sorted(set(comps["context_id"]))
    cands = pd.DataFrame(
        [
            dict(context_id=c, candidate_id=cid, text=text)
            for c in ctx
            for cid, text in ((X, "short answer"), (Y, "a much longer answer than x"))
        ]
    )
    return Dataset(
        "made",
        candidates=cands,
        comparisons=comps,
        contexts=pd.DataFrame({"context_id": ctx, "text": ctx}),
    )


@pytest.fixture
def made():
    return card(_dataset())


def test_gold_votes_statuses_and_unread_values():
    gold = gold_pairs(_dataset().comparisons)
    status = gold.pairs.set_index("context_id")["status"].to_dict()
    assert status == {
        "a/0": "ok",
        "a/1": "ok",
        "a/2": "ok",
        "b/0": "ok",
        "b/1": "tie",
        "b/2": "unread",
        "c": "conflict",
    }
    assert gold.pairs.set_index("context_id").loc["b/0", ["a", "winner"]].tolist() == [Y, X]
    assert gold.n_unread_rows == 1 and gold.unread_values == [("maybe", 1)]
    assert gold.annotators == ["human:ann1", "human:ann2", "human:gold"]
    assert len(gold.scored) == 4


def test_categories_from_the_context_id():
    ids = ["LLMBar/Adversarial/GPTInst/007", "plain", "a/0"]
    assert category_of(ids).tolist() == ["LLMBar/Adversarial/GPTInst", "", "a"]
    assert category_of(ids, "source").tolist() == ["LLMBar", "", "a"]
    with pytest.raises(ValueError):
        category_of(ids, "nope")


def test_accuracy_both_orders_and_wilson(made):
    t = judge_table(made).set_index("judge")
    # J: a/0 both right, a/1 both right (0.4 for y first: x wins), a/2 one right, b/0 both
    j = t.loc["J"]
    assert j["n"] == 4 and j["accuracy"] == pytest.approx(3.5 / 4)
    assert (j["lower"], j["upper"]) == pytest.approx(wilson_interval(3.5, 4))
    assert j["positional_agreement"] == pytest.approx(3 / 4)
    assert j["accuracy_gold_order"] == 1.0 and j["accuracy_swapped"] == pytest.approx(3 / 4)
    assert j["n_both_orders"] == 4 and j["n_one_order"] == 0 and j["probabilities"]
    # consistency and first-position rate are ranking.position_profile's
    o = made.outcomes[made.outcomes["judge"] == "J"]
    prof = position_profile(o["p_gold_order"], o["p_swapped"], n_boot=0)
    assert j["consistency"] == pytest.approx(prof.consistency) == pytest.approx(3 / 4)
    assert j["first_position_rate"] == pytest.approx(prof.first_win_rate)
    # K: a/0 right twice, a/1 right once (one order), a/2 unparsed twice = wrong; b/0 none
    k = t.loc["K"]
    assert k["n"] == 3 and k["accuracy"] == pytest.approx(2 / 3)
    assert k["positional_agreement"] == pytest.approx(1 / 2)  # a/0 yes, a/2 no
    assert k["n_one_order"] == 1 and k["n_unparsed"] == 2 and k["n_gold_not_judged"] == 1
    assert not k["probabilities"] and math.isnan(k["ece"])
    assert t.index.tolist() == ["J", "K"]  # best first


def test_unparsed_can_be_left_out():
    t = judge_table(card(_dataset(), unparsed="skip")).set_index("judge")
    assert t.loc["K", "n"] == 2 and t.loc["K", "accuracy"] == 1.0
    with pytest.raises(ValueError):
        card(_dataset(), unparsed="maybe")


def test_bad_input_is_said_with_counts(made):
    said = "\n".join(problems(made))
    assert "1 of 8 human (gold) verdicts are not A, B or a tie" in said and "'maybe' (1)" in said
    assert "1 pair(s) have a tie as their gold" in said
    assert "1 pair(s) have human verdicts that disagree evenly" in said
    assert "K: no verdict on 1 of the 4 pairs with gold" in said
    assert "K: 1 pair(s) judged in one order only" in said
    assert "K: 2 unparsed verdict(s), counted as wrong" in said
    assert "J: 1 verdict row(s) on pairs without a human verdict" in said


def test_category_table(made):
    cats = category_table(made).set_index(["judge", "category"])
    assert cats.loc[("J", "a"), "n"] == 3 and cats.loc[("J", "a"), "accuracy"] == pytest.approx(
        2.5 / 3
    )
    assert cats.loc[("J", "b"), "accuracy"] == 1.0
    low, high = wilson_interval(2.5, 3)
    assert cats.loc[("J", "a"), ["lower", "upper"]].tolist() == pytest.approx([low, high])


def test_calibration_equals_ranking_ece(made):
    cal = calibration(made, "J", n_bins=5)
    p = np.array([0.9, 0.2, 0.7, 0.4, 0.8, 0.6, 0.3, 0.65])
    y = np.array([1, 0, 1, 0, 1, 0, 0, 1], dtype=float)  # the gold winner x shown first?
    assert cal.n == 8 and cal.probabilities
    assert cal.ece == pytest.approx(ece(p, y, n_bins=5))
    assert cal.diagram["count"].sum() == 8
    # confidence max(p, 1-p): 7 of the 8 decisions are right (a/2 swapped, 0.6, is wrong)
    conf = cal.confidence
    used = conf[conf["count"] > 0]
    assert used["count"].sum() == 8
    assert (used["accuracy"] * used["count"]).sum() == pytest.approx(7)
    assert used["accuracy"].iloc[-1] == 1.0 and used["mean_confidence"].iloc[-1] == 0.9
    assert (used["lower"] <= used["accuracy"]).all() and (used["accuracy"] <= used["upper"]).all()


def test_length_check_and_failures(made):
    lengths = length_table(made, _dataset().candidates).set_index(["judge", "gold_is"])
    assert lengths.loc[("J", "shorter"), "n"] == 4  # x is always the shorter and the gold
    fails = failures(made, "J")
    assert fails["context_id"].tolist() == ["a/2"]
    assert fails.iloc[0][["chose_gold_order", "chose_swapped"]].tolist() == [X, Y]
    k = failures(made, "K")
    assert k.iloc[0]["context_id"] == "a/2" and k.iloc[0]["chose_swapped"] == "unparsed"


def test_compare_is_mcnemar_on_the_shared_pairs(made):
    cmp = compare(made, "K", "J")
    r = cmp.result
    # shared pairs a/0, a/1, a/2: K right on a/0, a/1; J right in every order on a/0, a/1
    assert r.n == 3 and (r.both_right, r.only_a, r.only_b, r.both_wrong) == (2, 0, 0, 1)
    assert r.pvalue == 1.0
    order = compare(made, "K", "J", unit="order").result
    assert order.n == 5  # a/0 x2, a/1 gold order, a/2 x2
    # J right on a/2's gold order where K is unparsed (wrong); both wrong on a/2 swapped
    assert (order.only_b, order.only_a, order.both_wrong) == (1, 0, 1)
    assert order.pvalue == pytest.approx(stats.binomtest(1, 1, 0.5).pvalue)
    with pytest.raises(ValueError):
        compare(made, "K", "J", unit="item")


def test_modes_and_cost(made):
    cards = {"off": made, "skip": card(_dataset(), unparsed="skip")}
    modes = mode_table(cards)
    assert set(modes["mode"]) == {"off", "skip"} and len(modes) == 4
    assert (modes["n_ties"] == 0).all()  # no probability of 1/2 in either card
    tied = made.judged.assign(p=0.5, decision=0.5, winner="", correct=0.0)
    all_ties = dataclasses.replace(made, judged=tied, outcomes=pair_outcomes(tied))
    t = mode_table({"isotonic": all_ties}).set_index("judge")
    assert t.loc["J", "accuracy"] == 0.0 and t.loc["J", "n_ties"] == 10  # a tie is never right
    table = judge_table(made)
    usage = pd.DataFrame(
        [dict(judge="J", model="m", n_calls=9, prompt_tokens=900, completion_tokens=9, usd=0.018)]
    )
    cost = with_cost(table, made, usage).set_index("judge")
    # J's judgments: 8 on the 4 scored pairs, and b/1 and c (gold a tie, a conflict)
    n_j = int((made.judged["judge"] == "J").sum())
    assert cost.loc["J", "usd_per_1k"] == pytest.approx(0.018 * 1000 / n_j)
    assert cost.loc["J", "tokens_per_1k"] == pytest.approx(909 * 1000 / n_j)
    assert math.isnan(cost.loc["K", "usd_per_1k"])


def test_no_gold_or_no_judge_gives_empty_tables():
    ds = _dataset()
    none = card(Dataset("x", comparisons=ds.comparisons[ds.comparisons["judge"] == "J"]))
    assert none.judges == [] and judge_table(none).empty and problems(none) == []
    only_gold = card(
        Dataset("y", comparisons=ds.comparisons[ds.comparisons["judge"] == "human:gold"])
    )
    assert only_gold.judges == [] and len(only_gold.gold.scored) == 4
    assert category_table(only_gold).empty and failures(only_gold, "J").empty


def test_judges_with_the_same_problem_share_one_line():
    """LLMBar: 17 judges ran on the same 419 of its 885 pairs; the card says so in one line
    naming them, not 17 lines."""
    ds = _dataset()
    comps = ds.comparisons
    twin = comps[comps["judge"] == "K"].assign(judge="K2")
    said = problems(card(dataclasses.replace(ds, comparisons=pd.concat([comps, twin]))))
    text = "\n".join(said)
    assert "2 judges (K, K2): no verdict on 1 of the 4 pairs with gold" in text
    assert "2 judges (K, K2): 2 unparsed verdict(s), counted as wrong" in text
    assert not any(line.startswith("K: ") for line in said)
