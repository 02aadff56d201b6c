"""The service layer without a Streamlit session: selection of judges and rows, P and the
human reference, rankings and agreement, per-context thresholds against a loop over
contexts, the pairs in both orders, budget tables, how the caches key a dataset, and the
real SummEval."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import data
from data.schema import DataError, Dataset, empty_table
from data.synthetic.simulate import simulate_with_truth
from pages.services import bias as bias_svc
from pages.services import budgets as budgets_svc
from pages.services import common, comparisons
from pages.services import rankings as rankings_svc
from pages.shell import state
from ranking import (
    balanced_threshold,
    bradley_terry,
    elo,
    order_matrix,
    pairwise_accuracy,
    position_bias,
    spearman,
    win_ratio,
)
from tests.pages._analysis_apptest import need
from tests.pages._known import (
    judge_rows,
    seeded_elo,
    spearman_scipy,
    swap_consistency_loop,
    system_games,
    system_human_means,
)

JUDGE = "demo-judge (simulated)"


@pytest.fixture(scope="module")
def demo():
    return data.demo_dataset()


def _comparisons(rows):
    """A comparisons table from (context, judge, first, second, p) tuples."""
    df = pd.DataFrame(rows, columns=["context_id", "judge", "first_id", "second_id", "p_first"])
    df["attribute"] = "overall"
    df["sample"] = 0
    return df


def _pair_dataset(rows, human_scores=None):
    comps = _comparisons(rows)
    cands = (
        pd.concat(
            [
                comps[["context_id", "first_id"]].rename(columns={"first_id": "candidate_id"}),
                comps[["context_id", "second_id"]].rename(columns={"second_id": "candidate_id"}),
            ]
        )
        .drop_duplicates()
        .assign(text="")
    )
    return Dataset(
        name="pairs",
        candidates=cands,
        comparisons=comps,
        human_scores=empty_table("human_scores") if human_scores is None else human_scores,
    )


# --- judges, rows, P ------------------------------------------------------------------


def test_judge_options_pool_human_annotators():
    rows = [("c", j, "a", "b", 1.0) for j in ("gpt", "human:1", "human:2")]
    ds = _pair_dataset(rows)
    assert comparisons.judge_options(ds, "overall") == [
        "gpt",
        comparisons.HUMAN_POOL,
        "human:1",
        "human:2",
    ]
    many = _pair_dataset([("c", f"human:{k}", "a", "b", 1.0) for k in range(12)])
    # too many to list one by one (LLMFAO has 124 crowd workers): the pool only
    assert comparisons.judge_options(many, "overall") == [comparisons.HUMAN_POOL]
    assert comparisons.judge_options(_pair_dataset([("c", "human:1", "a", "b", 1)]), "overall") == [
        "human:1"
    ]


def test_pmatrix_of_the_human_pool_averages_every_annotator():
    ds = _pair_dataset(
        [
            ("c", "human:1", "a", "b", 1.0),
            ("c", "human:2", "a", "b", 0.0),
            ("c", "human:3", "a", "b", 1.0),
            ("c", "gpt", "b", "a", 0.2),
        ]
    )
    pm = comparisons.pmatrix(ds, "overall", comparisons.HUMAN_POOL)
    assert pm.candidate_ids == [["a", "b"]]
    assert pm.P[0, 0, 1] == pytest.approx(2 / 3) and math.isnan(pm.P[0, 1, 0])
    assert pm.counts[0, 0, 1] == 3
    assert not pm.P.flags.writeable  # shared through st.cache_resource


def test_unparsed_comparisons_leave_no_empty_context():
    ds = _pair_dataset([("c1", "gpt", "a", "b", 1.0), ("c2", "gpt", "a", "b", np.nan)])
    pm = comparisons.pmatrix(ds, "overall", "gpt")
    assert pm.context_ids == ["c1"]
    with pytest.raises(DataError, match="no comparisons for attribute 'overall' by judge 'x'"):
        comparisons.pmatrix(ds, "overall", "x")
    with pytest.raises(DataError, match="every comparison .* is unparsed"):
        comparisons.pmatrix(_pair_dataset([("c", "gpt", "a", "b", np.nan)]), "overall", "gpt")


# --- reference ----------------------------------------------------------------------


def test_reference_is_the_mean_human_score(demo):
    pm = comparisons.pmatrix(demo, "fluency", JUDGE)
    ref = comparisons.reference_for(demo, "fluency", pm)
    hs = demo.human_scores
    sel = hs[
        (hs["attribute"] == "fluency")
        & (hs["context_id"] == pm.context_ids[3])
        & (hs["candidate_id"] == pm.candidate_ids[3][2])
    ]
    assert ref.scores[3, 2] == pytest.approx(sel["score"].mean())
    assert ref.source == "mean human score over 3 annotators" and not ref.same_as_judge


def test_reference_from_human_verdicts_leaves_out_the_judged_annotator():
    rows = [
        ("c", "human:1", "a", "b", 1.0),
        ("c", "human:1", "b", "c", 1.0),
        ("c", "human:2", "a", "b", 0.0),
        ("c", "human:2", "b", "c", 0.0),
        ("c", "gpt", "a", "b", 0.9),
        ("c", "gpt", "b", "c", 0.9),
    ]
    ds = _pair_dataset(rows)
    pm = comparisons.pmatrix(ds, "overall", "human:1")
    ref = comparisons.reference_for(ds, "overall", pm)
    # only annotator 2 is left: c beats b beats a
    np.testing.assert_allclose(ref.scores[0], [0.0, 0.5, 1.0])
    pooled = comparisons.reference_for(ds, "overall", comparisons.pmatrix(ds, "overall", "gpt"))
    np.testing.assert_allclose(pooled.scores[0], [0.5, 0.5, 0.5])
    assert "2 human annotator(s)" in pooled.source
    pool = comparisons.reference_for(
        ds, "overall", comparisons.pmatrix(ds, "overall", comparisons.HUMAN_POOL)
    )
    assert pool.same_as_judge


def test_no_reference_without_humans(demo):
    ds = Dataset(name="judge only", candidates=demo.candidates, comparisons=demo.comparisons)
    pm = comparisons.pmatrix(ds, "fluency", JUDGE)
    assert comparisons.reference_for(ds, "fluency", pm) is None


# --- rankings -----------------------------------------------------------------------


def test_every_method_recovers_a_clear_order():
    # candidate k beats every j > k with p = 0.9 in both orders; humans agree
    n = 5
    P = np.full((1, n, n), np.nan)
    for i in range(n):
        for j in range(n):
            if i != j:
                P[0, i, j] = 0.9 if i < j else 0.1
    pm = data.PMatrix(
        P=P,
        context_ids=["c"],
        candidate_ids=[list("abcde")],
        counts=np.isfinite(P).astype(np.int64),
    )
    ref = comparisons.Reference(np.array([[5.0, 4.0, 3.0, 2.0, 1.0]]), "test")
    rk = rankings_svc.compute_rankings(pm, ref)
    agree = rk.agreement.set_index("method")
    for method in rankings_svc.METHODS:
        assert agree.loc[method, "spearman"] == pytest.approx(1.0)
        assert agree.loc[method, "pairwise_accuracy"] == pytest.approx(1.0)
    reversed_ref = comparisons.Reference(ref.scores[:, ::-1].copy(), "test")
    agree = rankings_svc.compute_rankings(pm, reversed_ref).agreement.set_index("method")
    assert agree.loc["win-ratio", "spearman"] == pytest.approx(-1.0)
    assert agree.loc["win-ratio", "pairwise_accuracy"] == pytest.approx(0.0)


def test_order_matrix_against_a_loop():
    rng = np.random.default_rng(3)
    s = rng.integers(0, 4, size=(4, 6)).astype(float)
    s[1, 2] = np.nan
    got = order_matrix(s)
    for c in range(4):
        for i in range(6):
            for j in range(6):
                if i == j or not (np.isfinite(s[c, i]) and np.isfinite(s[c, j])):
                    assert math.isnan(got[c, i, j])
                else:
                    want = 1.0 if s[c, i] > s[c, j] else 0.0 if s[c, i] < s[c, j] else 0.5
                    assert got[c, i, j] == want


def test_context_frame_sorted_by_the_chosen_method(demo):
    pm = comparisons.pmatrix(demo, "consistency", JUDGE)
    ref = comparisons.reference_for(demo, "consistency", pm)
    rk = rankings_svc.compute_rankings(pm, ref)
    for method in rankings_svc.METHODS:
        frame = rankings_svc.context_frame(demo, pm, rk, ref, 2, method)
        assert frame[f"rank: {method}"].is_monotonic_increasing
        assert sorted(frame["candidate"]) == sorted(pm.candidate_ids[2])
        assert (frame["comparisons"] == 10).all()  # 5 others, both orders
    bump = rankings_svc.bump_frame(frame)
    assert set(bump["method"]) == {"human", *rankings_svc.METHODS}
    assert len(bump) == 6 * 4


def test_system_ranking_on_the_demo(demo):
    result = rankings_svc.system_ranking(demo, "consistency", JUDGE)
    table = result.table
    assert len(table) == 6 and table["bt_score"].is_monotonic_decreasing
    assert ((table["lower"] <= table["bt_score"]) & (table["bt_score"] <= table["upper"])).all()
    assert (table["n_comparisons"] == 12 * 10).all()
    # the hallucinator is fluent but wrong: last on consistency for humans and the judge
    assert table["system"].iloc[-1] == "hallucinator"
    assert result.spearman_bt > 0.8
    # the known values: human means and Spearman from the tables, Elo one game at a time
    means = system_human_means(demo, "consistency")
    np.testing.assert_allclose(table["human_mean"], means[table["system"]].to_numpy())
    assert result.spearman_bt == pytest.approx(
        spearman_scipy(table["bt_score"], means[table["system"]])
    )
    systems, ratings = seeded_elo(demo, "consistency", JUDGE)
    by_system = dict(zip(systems, ratings, strict=True))
    np.testing.assert_allclose(table["elo"], [by_system[s] for s in table["system"]])
    assert result.spearman_elo == pytest.approx(
        spearman_scipy(table["elo"], means[table["system"]])
    )
    assert result.spearman_elo > 0.8


def test_system_elo_band_shuffles_the_seeded_order(demo):
    # the band: 200 orderings drawn by the generator that drew the page's order, after it
    fc = system_games(demo, "consistency", JUDGE)
    rng = np.random.default_rng(7)
    order = rng.permutation(len(fc.p))
    want = elo(
        fc.first[order], fc.second[order], fc.p[order], len(fc.items), n_boot=50, random_state=rng
    )
    result = rankings_svc.system_ranking(demo, "consistency", JUDGE, "fisher", 50, 7)
    got = result.table.set_index("system").loc[fc.items]
    np.testing.assert_allclose(got["elo"], want.scores)
    np.testing.assert_allclose(got["elo_lower"], want.lower)
    np.testing.assert_allclose(got["elo_upper"], want.upper)
    assert (got["elo_lower"] < got["elo_upper"]).all()
    # another seed plays the games in another order: other ratings, the same systems
    other = rankings_svc.system_ranking(demo, "consistency", JUDGE, "fisher", 50, 8).table
    assert not np.allclose(other.set_index("system").loc[fc.items, "elo"], want.scores)


# --- position bias and thresholds ------------------------------------------------------


def _random_P(n_contexts=7, n_items=5, seed=0, hard=False):
    rng = np.random.default_rng(seed)
    P = rng.uniform(size=(n_contexts, n_items, n_items))
    if hard:
        P = rng.choice([0.0, 0.5, 1.0], size=P.shape)
    P[rng.uniform(size=P.shape) < 0.2] = np.nan
    idx = np.arange(n_items)
    P[:, idx, idx] = np.nan
    P[:, 0, 1] = 0.5  # every context keeps a comparison
    ref = rng.integers(1, 5, size=(n_contexts, n_items)).astype(float)
    return P, ref


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_context_thresholds_match_a_loop_over_contexts(hard, seed):
    P, ref = _random_P(seed=seed, hard=hard)
    taus = balanced_threshold(P, per_context=True)
    taus[0] = 0.5  # a threshold exactly at present values: ties count half
    got = bias_svc.rerank(P, ref, taus)
    # slow twin: each context alone with the library at its own tau, pooled by counts
    n = np.isfinite(P).sum(axis=(1, 2))
    wins = sum(position_bias(P[c], taus[c]) * n[c] for c in range(len(P)))
    assert got.position_bias == pytest.approx(wins / n.sum())
    rho = [spearman(win_ratio(P[c], taus[c])[0], ref[c]) for c in range(len(P))]
    np.testing.assert_allclose(got.spearman_per_context, rho, equal_nan=True)
    acc = [pairwise_accuracy(P[c], ref[c], taus[c], per_context=True)[0] for c in range(len(P))]
    diff = ref[:, :, None] != ref[:, None, :]
    weights = (np.isfinite(P) & diff).sum(axis=(1, 2))
    ok = np.isfinite(acc)
    assert got.accuracy == pytest.approx(np.sum(np.asarray(acc)[ok] * weights[ok]) / weights.sum())
    # one scalar tau through the same path agrees with the direct library call
    same = bias_svc.rerank(P, ref, np.full(len(P), 0.3))
    direct = bias_svc.rerank(P, ref, 0.3)
    assert same.position_bias == pytest.approx(direct.position_bias)
    assert same.accuracy == pytest.approx(direct.accuracy)
    assert same.spearman == pytest.approx(direct.spearman)


def test_balancing_a_biased_soft_judge_gives_half():
    ds, _truth = simulate_with_truth(
        30, 8, position_bias=1.0, judge_noise=1.0, likert=False, random_state=5
    )
    pm = comparisons.pmatrix(ds, "quality", "simulated")
    n_comparisons = int(np.isfinite(pm.P).sum())
    before = bias_svc.rerank(pm.P, None, 0.5)
    assert before.position_bias > 0.6 and math.isnan(before.accuracy)
    for per_context in (False, True):
        tau = balanced_threshold(pm.P, per_context=per_context)
        after = bias_svc.rerank(pm.P, None, tau)
        assert abs(after.position_bias - 0.5) <= 1 / n_comparisons


def test_undefined_statistics_are_nan_without_a_try_except():
    # comparisons in one order only and a reference tied within every context: swap
    # consistency and pairwise accuracy have nothing to measure; the services get NaN from
    # ranking itself (no exception to catch) and the rest is still computed
    P = np.full((2, 3, 3), np.nan)
    P[:, 0, 1], P[:, 1, 2], P[:, 0, 2] = 0.8, 0.3, 0.6
    ref = np.ones((2, 3))
    for tau in (0.5, np.array([0.5, 0.7])):
        got = bias_svc.rerank(P, ref, tau)
        assert math.isnan(got.swap_consistency) and math.isnan(got.accuracy)
        assert got.position_bias == position_bias(P, tau)
    pm = comparisons.pmatrix(
        _pair_dataset([("c", "j", "a", "b", 0.8), ("c", "j", "b", "d", 0.3)]), "overall", "j"
    )
    tied = comparisons.Reference(np.ones((1, 3)), "tied")
    rk = rankings_svc.compute_rankings(pm, tied)
    assert rk.agreement["pairwise_accuracy"].isna().all()
    table = bias_svc.bias_table(
        _pair_dataset([("c", "j", "a", "b", 0.8), ("c", "j", "b", "d", 0.3)])
    )
    assert table.loc[0, "pairs_both_orders"] == 0 and math.isnan(table.loc[0, "swap_consistency"])


def test_tau_curve_columns_and_end_points(demo):
    curve = bias_svc.tau_curve(demo, "consistency", JUDGE)
    assert len(curve) == 101 and curve["tau"].is_monotonic_increasing
    # tau = 0: the first slot wins everything; tau = 1: nothing (soft p strictly inside)
    assert curve["first_position_win_rate"].iloc[0] == 1.0
    assert curve["first_position_win_rate"].iloc[-1] == 0.0
    assert curve["pairwise_accuracy"].max() > 0.85


def test_bias_table_of_the_demo(demo):
    table = bias_svc.bias_table(demo)
    assert sorted(table["attribute"]) == ["consistency", "fluency"]
    assert (table["first_position_win_rate"] > 0.6).all()  # simulated first-slot bias
    assert (table["balanced_tau"] > 0.5).all()
    assert (table["pairs_both_orders"] == 12 * 15).all()
    assert table["swap_consistency"].between(0, 1).all()
    for row in table.itertuples():  # the known value: the 180 pairs counted one by one
        rows = judge_rows(demo, row.attribute, row.judge)
        P = data.comparisons_to_P(rows, attribute=row.attribute, judge=row.judge).P
        assert row.swap_consistency == pytest.approx(swap_consistency_loop(P))


def test_order_pairs_by_hand():
    ds = _pair_dataset(
        [
            ("c", "j", "a", "b", 0.8),  # a first: 0.8
            ("c", "j", "b", "a", 0.4),  # a second: 1 - 0.4 = 0.6
            ("c", "j", "b", "c", 0.7),  # one order only: left out
        ]
    )
    pairs = bias_svc.order_pairs(ds, "overall", "j")
    assert len(pairs) == 1
    row = pairs.iloc[0]
    assert (row["candidate_i"], row["candidate_j"]) == ("a", "b")
    assert row["i_first"] == pytest.approx(0.8) and row["i_second"] == pytest.approx(0.6)
    assert row["shift"] == pytest.approx(0.2)


# --- budgets ------------------------------------------------------------------------


def test_budget_tables(demo):
    pm = comparisons.pmatrix(demo, "consistency", JUDGE)
    ref = comparisons.reference_for(demo, "consistency", pm)
    grid = budgets_svc.budget_grid(pm.P, "win_ratio")
    np.testing.assert_array_equal(grid, np.arange(1, 31))  # 6 x 5 ordered pairs
    bt_grid = budgets_svc.budget_grid(pm.P, "bradley_terry")
    assert bt_grid[0] == 1 and bt_grid[-1] == 30 and len(bt_grid) <= budgets_svc.BT_BUDGET_POINTS
    curves = [
        budgets_svc.compute_budget(pm.P, ref.scores, s, n_draws=3) for s in ("random", "no-repeat")
    ]
    frame = budgets_svc.budget_frame(curves)
    assert len(frame) == 2 * 2 * 30
    assert set(frame["strategy"]) == {"random", "no-repeat"}
    # no-repeat cannot spend more than one order of each of the 15 pairs
    nr = frame[frame["strategy"] == "no-repeat"]
    assert nr.loc[nr["budget"] > 15, "mean"].isna().all()
    needed = budgets_svc.needed_frame(curves, -1.0, 30)
    assert (needed["comparisons_needed"] == 1).all()
    assert needed["share_of_available"].tolist() == [round(1 / 30, 3)] * 4
    assert budgets_svc.needed_frame(curves, 1.0, 30)["comparisons_needed"].isna().all()
    # 90 % of the best mean correlation any curve reaches, to two decimals
    best = max(np.nanmax(cur.mean) for cur in curves)
    assert budgets_svc.default_target(frame) == round(0.9 * best, 2)
    assert budgets_svc.default_target(frame) == pytest.approx(0.9 * best, abs=0.005)
    # no positive mean to take 90 % of: the fixed 0.5
    assert budgets_svc.default_target(frame.assign(mean=-frame["mean"].abs())) == 0.5
    assert budgets_svc.default_target(frame.iloc[:0]) == 0.5


def test_budget_grid_is_thinned_for_many_comparisons():
    P = np.full((1, 30, 30), 0.5)
    grid = budgets_svc.budget_grid(P, "win_ratio")
    assert grid[0] == 1 and grid[-1] == 30 * 29 and len(grid) <= budgets_svc.MAX_BUDGET_POINTS


# --- how the caches key a dataset ---------------------------------------------------


def test_tokens_follow_objects_not_names(demo):
    other = data.demo_dataset()
    assert state.token(demo) == state.token(demo)
    assert state.token(demo) != state.token(other)
    assert common.HASH_FUNCS == {Dataset: state.token}


def test_changed_gives_a_new_revision_and_new_results():
    ds = _pair_dataset([("c", "j", "a", "b", 0.8)])
    state.add("test changed", ds, activate=False)
    before = state.token(ds)
    assert bias_svc.bias_table(ds).loc[0, "first_position_win_rate"] == 1.0
    # modified in place: without changed() the cache would serve the old table
    ds.comparisons.loc[0, "p_first"] = 0.2
    assert bias_svc.bias_table(ds).loc[0, "first_position_win_rate"] == 1.0
    state.changed("test changed")
    assert state.token(ds) != before and state.token(ds).split(".")[0] == before.split(".")[0]
    assert bias_svc.bias_table(ds).loc[0, "first_position_win_rate"] == 0.0


def test_fmt():
    assert common.fmt(0.12345) == "0.123"
    assert common.fmt(float("nan")) == "n/a" and common.fmt(None) == "n/a"


# --- the real SummEval verdicts -------------------------------------------------------


@need("summeval")
def test_summeval_cached_services_and_threshold():
    ds = data.load_benchmark("summeval")
    judge = "gpt-3.5-turbo-0301/ab-choice"
    assert comparisons.comparison_attributes(ds) == [
        "coherence",
        "consistency",
        "fluency",
        "relevance",
    ]
    assert comparisons.judge_options(ds, "coherence") == [judge]
    pm = comparisons.pmatrix(ds, "coherence", judge)
    assert pm.P.shape == (100, 12, 12)
    assert comparisons.pmatrix(ds, "coherence", judge) is pm  # cache_resource: no copy
    ref = comparisons.human_reference(ds, "coherence", judge)
    assert np.isfinite(ref.scores).all()
    before = bias_svc.threshold_update(ds, "coherence", judge, 0.5)
    tau = bias_svc.balanced_tau(ds, "coherence", judge)
    after = bias_svc.threshold_update(ds, "coherence", judge, tau)
    assert abs(after.position_bias - 0.5) < abs(before.position_bias - 0.5)
    assert after.accuracy != before.accuracy
    rk = rankings_svc.rankings(ds, "coherence", judge)
    assert set(rk.agreement["method"]) >= set(rankings_svc.METHODS)
    result = rankings_svc.system_ranking(ds, "coherence", judge)
    assert len(result.table) == 12
    # the system-level Spearman, from the tables: Bradley–Terry over systems (ranking) and
    # the mean human score per system (pandas), correlated by scipy
    fc = system_games(ds, "coherence", judge)
    bt = bradley_terry(first=fc.first, second=fc.second, outcome=fc.p, n_items=len(fc.items))
    means = system_human_means(ds, "coherence")[fc.items]
    assert result.spearman_bt == pytest.approx(spearman_scipy(bt.scores, means))
    systems, ratings = seeded_elo(ds, "coherence", judge)
    assert result.spearman_elo == pytest.approx(spearman_scipy(ratings, means[systems]))


# ------------------------------------------------------------- debias rules (issue 11, item 7)


def test_resolve_debias_modes(demo):
    P = comparisons.pmatrix(demo, "consistency", JUDGE).P
    off = bias_svc.resolve_debias(demo, "consistency", JUDGE, "off", 0.7)
    assert not off.active and off.rule == off.raw_rule == ("soft", None)
    hard = bias_svc.resolve_debias(demo, "consistency", JUDGE, "tau", 0.7)
    assert hard.rule == ("hard", 0.7) and hard.raw_rule == ("hard", 0.5)
    soft = bias_svc.resolve_debias(demo, "consistency", JUDGE, "alpha", 0.6)
    assert soft.rule == ("alpha", pytest.approx(0.4 / 0.6)) and soft.raw_rule == ("soft", None)
    per = bias_svc.resolve_debias(demo, "consistency", JUDGE, "per_context", 0.5)
    np.testing.assert_allclose(per.tau, balanced_threshold(P, per_context=True))
    assert bias_svc.resolve_debias(demo, "consistency", JUDGE, "nonsense", 0.5).mode == "off"
    with pytest.raises(ValueError):
        bias_svc.resolve_debias(demo, "consistency", JUDGE, "alpha", 1.0)


def test_debiased_outcomes_row_by_row(demo):
    rows = comparisons.select_comparisons(demo, "consistency", JUDGE).copy()
    rows.loc[rows.index[:3], "p_first"] = np.nan  # unparsed stays unparsed
    p = rows["p_first"].to_numpy(float)
    hard = bias_svc.debiased_outcomes(demo, "consistency", JUDGE, rows, ("hard", 0.6))
    want = np.where(np.isnan(p), np.nan, np.where(p > 0.6, 1.0, np.where(p < 0.6, 0.0, 0.5)))
    np.testing.assert_array_equal(hard["p_first"].to_numpy(float), want)
    a = 0.5
    soft = bias_svc.debiased_outcomes(demo, "consistency", JUDGE, rows, ("alpha", a))
    np.testing.assert_allclose(soft["p_first"], a * p / (a * p + 1 - p), equal_nan=True)
    # per context: each row decided at its own context's balanced threshold
    pm = comparisons.pmatrix(demo, "consistency", JUDGE)
    taus = dict(zip(pm.context_ids, balanced_threshold(pm.P, per_context=True), strict=True))
    per = bias_svc.debiased_outcomes(demo, "consistency", JUDGE, rows, ("per_context", None))
    for (_, row), got in zip(rows.iterrows(), per["p_first"], strict=True):
        t = taus[str(row["context_id"])]
        x = row["p_first"]
        assert (math.isnan(x) and math.isnan(got)) or got == (
            1.0 if x > t else (0.0 if x < t else 0.5)
        )
    same = bias_svc.debiased_outcomes(demo, "consistency", JUDGE, rows, ("soft", None))
    assert same is rows


def test_system_ranking_under_a_hard_threshold(demo):
    result = rankings_svc.system_ranking(demo, "consistency", JUDGE, rule=("hard", 0.7))
    fc = system_games(demo, "consistency", JUDGE)
    y = np.where(fc.p > 0.7, 1.0, np.where(fc.p < 0.7, 0.0, 0.5))
    bt = bradley_terry(first=fc.first, second=fc.second, outcome=y, n_items=len(fc.items))
    got = result.table.set_index("system")["bt_score"]
    np.testing.assert_allclose(got[fc.items], bt.scores)
    assert list(result.table["rank"]) == sorted(result.table["rank"])


def test_system_items_fall_back_to_recurring_candidate_ids(demo):
    cands = demo.candidates.drop(columns="system")
    ds = Dataset(
        name="no systems",
        contexts=demo.contexts,
        candidates=cands,
        human_scores=demo.human_scores,
        comparisons=demo.comparisons,
    )
    item, why = rankings_svc.system_items(ds, "consistency", JUDGE)
    assert item == "candidate" and "recur" in why
    item, _ = rankings_svc.system_items(demo, "consistency", JUDGE)
    assert item == "system"


def test_bt_notes_name_contexts_by_id():
    # one context whose only comparison is a sweep: no finite MLE there
    P = np.full((2, 3, 3), np.nan)
    P[0, 0, 1], P[0, 1, 0], P[0, 1, 2], P[0, 2, 1] = 0.7, 0.4, 0.6, 0.3
    P[1, 0, 1], P[1, 1, 2] = 1.0, 1.0
    pm = data.arrays.PMatrix(P, ["ctx-a", "ctx-b"], [["x", "y", "z"]] * 2, np.ones_like(P, int))
    rk = rankings_svc.compute_rankings(pm, None)
    assert any("ctx-b" in n and "never lose or never win" in n for n in rk.notes), rk.notes
    assert not any("[1]" in n for n in rk.notes)


def test_summeval_reference_is_the_pre_averaged_expert_score():
    pytest.importorskip("scipy")
    from tests.pages._analysis_apptest import have

    if not have("summeval"):
        pytest.skip("summeval files absent")
    ds = data.load_benchmark("summeval")
    ref = comparisons.human_reference(ds, "coherence", "gpt-3.5-turbo-0301/ab-choice")
    assert ref.source == "human score 'expert_mean' (already a mean over annotators)"
