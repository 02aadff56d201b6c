"""Comparison weights through the pages' services, on a file read by the Data page's reader.

An Arena-Hard-style upload (graded verdicts ``A>>B`` ... ``B>>A``, every model against one
baseline in both games, strength policy "weight": a strong verdict counts 3 times) is read
by ``data.io.read_upload``; the Leaderboard, the Rankings page (systems and per context)
and Position bias must count each comparison with its weight, and "battles" must count
rows. Arena-Hard's score (Bradley–Terry on the weighted games, the win rate against the
baseline sigmoid(theta_model - theta_baseline)) is computed here independently by a
logistic regression written out with scipy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from data.flat import flat_comparisons
from data.io import PairwiseMapping, read_upload
from pages.services.bias import bias_table, weights_note
from pages.services.budgets import budget, compute_budget
from pages.services.budgets import weights_note as budget_note
from pages.services.comparisons import human_reference, pmatrix
from pages.services.leaderboard import leaderboard, system_ranking, win_rates
from pages.services.rankings import compute_rankings
from ranking import elo, spearman, win_ratio

JUDGE = "gpt-4.1"
MODELS = ["m1", "m2", "m3", "m4"]
LABELS = ["A>>B", "A>B", "A=B", "B>A", "B>>A"]
# p_first and weight of each label under Arena-Hard's rule (show_result.py: weight=3)
SCORE = {"A>>B": (1.0, 3.0), "A>B": (1.0, 1.0), "A=B": (0.5, 1.0), "B>A": (0.0, 1.0),
         "B>>A": (0.0, 3.0)}  # fmt: skip


def _lines(n_questions=25, seed=7, copies=False):
    """The judgment file: per question and model, game 1 (baseline first) and game 2
    (model first). ``copies``: every strong verdict written 3 times as a weak one instead."""
    rng = np.random.default_rng(seed)
    skill = dict(zip(MODELS, [-1.0, -0.3, 0.4, 1.2], strict=True))
    rows = ["question_id,model_a,model_b,verdict,judge,game"]
    for q in range(n_questions):
        for m in MODELS:
            for game, (a, b) in enumerate([("base", m), (m, "base")], start=1):
                edge = skill[m] if a == m else -skill[m]
                p = expit(edge + rng.normal(0, 1.0))
                label = LABELS[int(np.clip(np.round((1 - p) * 4 + rng.normal(0, 0.6)), 0, 4))]
                if copies and label in ("A>>B", "B>>A"):
                    weak = label.replace(">>", ">")
                    rows += [f"q{q},{a},{b},{weak},{JUDGE},{game * 10 + k}" for k in range(3)]
                else:
                    rows.append(f"q{q},{a},{b},{label},{JUDGE},{game}")
    return rows


MAPPING = PairwiseMapping(
    first_system="model_a",
    second_system="model_b",
    verdict="verdict",
    context_id="question_id",
    judge="judge",
    sample="game",
)


def _read(rows, strength="weight"):
    mapping = PairwiseMapping(**{**MAPPING.__dict__, "strength": strength})
    return read_upload("arena_hard.csv", "\n".join(rows).encode(), kind="pairwise", mapping=mapping)


@pytest.fixture(scope="module")
def arena():
    return _read(_lines())


def _games(rows):
    """(first, second, y, w) of the file's games, by hand from its lines."""
    out = []
    for line in rows[1:]:
        _q, a, b, label, _j, _g = line.split(",")
        out.append((a, b, *SCORE[label]))
    return pd.DataFrame(out, columns=["a", "b", "y", "w"])


def test_the_reader_keeps_weights(arena):
    c = arena.comparisons
    assert len(c) == 25 * len(MODELS) * 2
    games = _games(_lines())
    np.testing.assert_array_equal(c["weight"].to_numpy(), games["w"].to_numpy())
    assert (c["weight"] == 3).sum() > 10 and (c["weight"] == 1).sum() > 10


def test_arena_hard_score_equals_weighted_logistic_regression(arena):
    games = _games(_lines())
    names = ["base", *MODELS]
    idx = {n: k for k, n in enumerate(names)}
    a = games["a"].map(idx).to_numpy()
    b = games["b"].map(idx).to_numpy()
    y, w = games["y"].to_numpy(), games["w"].to_numpy()

    def loss(free):  # theta_base fixed at 0, as Arena-Hard's one-hot against the baseline
        theta = np.r_[0.0, free]
        d = theta[a] - theta[b]
        return -(w * (y * log_expit(d) + (1 - y) * log_expit(-d))).sum()

    fit = minimize(loss, np.zeros(len(MODELS)), method="BFGS", options={"gtol": 1e-10})
    expected = expit(fit.x)  # win rate of each model against the baseline
    table = system_ranking(arena, "overall", JUDGE).table.set_index("system")
    got = expit(table.loc[MODELS, "bt_score"] - table.loc["base", "bt_score"]).to_numpy()
    np.testing.assert_allclose(got, expected, atol=1e-6)
    # without the weights (a strong verdict a plain win) the scores differ
    collapsed = system_ranking(_read(_lines(), "collapse"), "overall", JUDGE).table
    collapsed = collapsed.set_index("system")
    plain = expit(collapsed.loc[MODELS, "bt_score"] - collapsed.loc["base", "bt_score"])
    assert np.abs(plain.to_numpy() - expected).max() > 0.01


def test_battles_count_rows_and_weights_equal_copies_for_the_fit(arena):
    weighted = system_ranking(arena, "overall", JUDGE)
    copies = system_ranking(_read(_lines(copies=True)), "overall", JUDGE)
    t, r = weighted.table.set_index("system"), copies.table.set_index("system")
    # the same likelihood: the same scores and Fisher intervals
    for col in ("bt_score", "lower", "upper"):
        np.testing.assert_allclose(t[col], r.loc[t.index, col], atol=1e-6)
    # battles are rows: 25 questions x 2 games per model, 4 x that for the baseline
    assert t.loc[MODELS, "n_comparisons"].tolist() == [50] * 4
    assert t.loc["base", "n_comparisons"] == 200
    assert (r.loc[MODELS, "n_comparisons"] > 50).all()
    assert any("weight other than 1" in n for n in weighted.notes)
    lb = leaderboard(arena, "overall")
    long = lb.long.set_index("system")
    assert long.loc[MODELS, "battles"].tolist() == [50] * 4


def test_bootstrap_draws_a_weighted_row_as_one_game(arena):
    kw = dict(intervals="bootstrap", n_boot=200, random_state=0)
    weighted = system_ranking(arena, "overall", JUDGE, **kw).table.set_index("system")
    copies = system_ranking(_read(_lines(copies=True)), "overall", JUDGE, **kw).table
    copies = copies.set_index("system").loc[weighted.index]
    width_w = (weighted["upper"] - weighted["lower"]).loc[MODELS]
    width_c = (copies["upper"] - copies["lower"]).loc[MODELS]
    # fewer games than copies: wider intervals, on every model
    assert (width_w > 1.05 * width_c).all(), (width_w, width_c)


def test_elo_takes_the_weights(arena):
    res = system_ranking(arena, "overall", JUDGE, n_boot=20)
    fc = flat_comparisons(
        arena.comparisons, judge=JUDGE, attribute="overall", item="system",
        candidates=arena.candidates,
    )  # fmt: skip
    order = np.random.default_rng(0).permutation(len(fc.p))
    args = (fc.first[order], fc.second[order], fc.p[order], len(fc.items))
    expected = elo(*args, weights=fc.weight[order]).scores
    got = res.table.set_index("system").loc[fc.items, "elo"].to_numpy()
    np.testing.assert_allclose(got, expected)
    assert not np.allclose(got, elo(*args).scores)


def test_win_rates_are_weighted_and_battles_are_rows(arena):
    rate, battles = win_rates(arena, "overall", JUDGE)
    games = _games(_lines())
    for m in MODELS:
        g = games[(games["a"] == m) | (games["b"] == m)]
        won = np.where(g["a"] == m, g["y"], 1 - g["y"])
        assert rate.loc[m, "base"] == pytest.approx((g["w"] * won).sum() / g["w"].sum())
        assert battles.loc[m, "base"] == len(g) == 50


def test_position_bias_is_weighted_and_says_so(arena):
    row = bias_table(arena).iloc[0]
    games = _games(_lines())
    assert row["first_position_win_rate"] == pytest.approx(
        (games["w"] * games["y"]).sum() / games["w"].sum()
    )
    assert row["n_comparisons"] == len(games) and bool(row["weighted"])
    assert "weight" in weights_note(arena, "overall", JUDGE)
    collapsed = _read(_lines(), "collapse")
    assert weights_note(collapsed, "overall", JUDGE) is None
    assert not bool(bias_table(collapsed).iloc[0]["weighted"])


def test_rankings_per_context_win_ratio_is_weighted(arena):
    pm = pmatrix(arena, "overall", JUDGE)
    res = compute_rankings(pm, None)
    games = _games(_lines())
    lines = _lines()[1:]
    q0 = games[[line.startswith("q0,") for line in lines]]
    c = pm.context_ids.index("q0")
    for k, cand in enumerate(pm.candidate_ids[c]):
        g = q0[(q0["a"] == cand) | (q0["b"] == cand)]
        won = np.where(g["a"] == cand, g["y"], 1 - g["y"])
        assert res.scores["win-ratio"][c, k] == pytest.approx((g["w"] * won).sum() / g["w"].sum())
    assert any("carry weights" in n for n in res.notes)


def _with_human_labels():
    """The Arena-Hard-style upload with a human verdict column (seeded A/B labels), read
    through the Data page's reader."""
    rows = _lines(n_questions=8)
    rng = np.random.default_rng(3)
    rows = [rows[0] + ",label"] + [f"{r},{rng.choice(['A', 'B'])}" for r in rows[1:]]
    mapping = PairwiseMapping(**{**MAPPING.__dict__, "human_verdict": "label"})
    return read_upload("arena_gold.csv", "\n".join(rows).encode(), kind="pairwise", mapping=mapping)


def test_budget_win_ratio_curves_count_the_weights():
    ds = _with_human_labels()
    pm = pmatrix(ds, "overall", JUDGE)
    ref = human_reference(ds, "overall", JUDGE).scores
    curves = budget(ds, "overall", JUDGE, "random", n_draws=3)
    # the whole budget (8 comparisons a question: 4 models x 2 games): every comparison
    # seen, each with its weight, as the weighted win-ratio at 0.5
    assert curves.budgets[-1] == 8
    weighted = np.nanmean(spearman(win_ratio(pm.P, tau=0.5, weights=pm.weights), ref))
    unweighted = np.nanmean(spearman(win_ratio(pm.P, tau=0.5), ref))
    assert curves.mean[0, 0, -1] == pytest.approx(weighted)
    assert weighted != pytest.approx(unweighted)
    for method in ("win_ratio", "poe", "bradley_terry"):
        assert "counts with its weight" in budget_note(ds, "overall", JUDGE, method)


def test_budget_bradley_terry_curves_count_the_weights():
    """The Bradley–Terry budget curves of the page's service on the Arena-Hard-style
    upload: with the file's weights they differ from the curves without; at the whole
    budget each draw's value is the Spearman of ``bradley_terry(P, weights=)``."""
    from ranking import bradley_terry
    from ranking.budget.bt_kernel import _snap_rows

    ds = _with_human_labels()
    pm = pmatrix(ds, "overall", JUDGE)
    assert pm.weights is not None and (pm.weights == 3.0).any()
    ref = human_reference(ds, "overall", JUDGE).scores
    curves = budget(ds, "overall", JUDGE, "random", method="bradley_terry", n_draws=3)
    unweighted = compute_budget(pm.P, ref, "random", method="bradley_terry", n_draws=3)
    assert curves.budgets[-1] == 8
    assert not np.allclose(curves.values, unweighted.values, equal_nan=True)
    scores = bradley_terry(P=pm.P, weights=pm.weights).scores
    _snap_rows(scores)
    ok = np.isfinite(ref)
    want = np.nanmean(spearman(np.where(ok, scores, np.nan), ref))
    np.testing.assert_allclose(curves.values[0, 0, :, -1], want, atol=1e-12)
    assert curves.mean[0, 0, -1] != pytest.approx(unweighted.mean[0, 0, -1])
