"""AppTest of the Comparison budgets page: curves with bands for every strategy, raw and
debiased; the "comparisons needed" table follows the target; plain notes when the data has no
comparisons or no human reference; the real SummEval verdicts."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import data
from data.arrays import comparisons_to_P, scores_to_matrix
from data.schema import Dataset, empty_table
from pages.services.budgets import STRATEGIES
from ranking import budget_curves
from tests.pages._analysis_apptest import array, charts, need, open_page
from tests.pages._known import judge_rows

PAGE = "pages/budgets/page.py"


def _curve_figure(at):
    return next(
        f for f in charts(at) if "against the number of comparisons" in f["layout"]["title"]["text"]
    )


def _needed_from_lines(lines, rho) -> dict[tuple[str, str], float]:
    """(strategy, debiasing) -> the first plotted budget whose mean reaches ``rho``."""
    out = {}
    for line in lines:
        x, y = array(line["x"]), array(line["y"])
        hit = np.flatnonzero(y >= rho)
        out[tuple(line["name"].split(", "))] = float(x[hit[0]]) if hit.size else math.nan
    return out


def test_demo_curves_for_every_strategy_raw_and_debiased():
    at = open_page(PAGE)
    assert [t.value for t in at.title] == ["Comparison budgets"]
    fig = _curve_figure(at)
    lines = [t for t in fig["data"] if t.get("mode") == "lines"]
    bands = [t for t in fig["data"] if t.get("fill") == "toself"]
    # 4 default strategies x (raw, debiased), each a mean line with its band
    assert len(lines) == 8 and len(bands) == 8
    names = {t["name"] for t in lines}
    assert "adaptive (PoE max-info), debiased" in names and "random, raw" in names
    # each curve is ranking.budget_curves on the judge's P from the tables: win-ratio at
    # tau = 0.5, Spearman, 20 seeded draws, every budget the strategy can spend
    demo = data.demo_dataset()
    judge = "demo-judge (simulated)"
    pm = comparisons_to_P(
        judge_rows(demo, "consistency", judge), attribute="consistency", judge=judge
    )
    ref = scores_to_matrix(demo.human_scores, pm, attribute="consistency")
    names = {v: k for k, v in STRATEGIES.items()}
    for line in lines:
        shown, debiasing = line["name"].split(", ")
        strategy = names[shown]
        grid = np.arange(2, 31, 2) if strategy == "symmetric" else np.arange(1, 31)
        cur = budget_curves(
            pm.P,
            ref,
            budgets=grid,
            strategies=(strategy,),
            debias=(False, True),
            n_draws=20,
            method="win_ratio",
            correlation="spearman",
            tau=0.5,
            random_state=0,
        )
        want = cur.mean[0, int(debiasing == "debiased")]
        np.testing.assert_allclose(array(line["x"]), grid[np.isfinite(want)])
        np.testing.assert_allclose(array(line["y"]), want[np.isfinite(want)])
    # with every comparison the demo judge ranks well
    full = max(array(t["y"])[-1] for t in lines)
    assert full > 0.8
    # symmetric shows pairs in both orders: an odd budget is refused, so its grid is even
    for line in lines:
        x = array(line["x"])
        if line["name"].startswith("symmetric"):
            assert len(x) > 5 and (x % 2 == 0).all()
        else:
            assert (x % 2 == 1).any()
    needed = at.dataframe[0].value
    assert len(needed) == 8
    assert set(needed["debiasing"]) == {"raw", "debiased"}


def test_the_target_drives_the_comparisons_needed():
    at = open_page(PAGE)
    rho = next(n for n in at.number_input if n.key.startswith("budget.rho"))
    rho.set_value(-1.0).run()
    easy = at.dataframe[0].value
    # reached at the first budget a strategy can spend (symmetric needs 2: both orders)
    assert (easy["comparisons_needed"] <= 2).all()
    assert (easy.loc[easy["strategy"] == "random", "comparisons_needed"] == 1).all()
    assert (easy.loc[easy["strategy"] == "symmetric", "comparisons_needed"] == 2).all()
    rho = next(n for n in at.number_input if n.key.startswith("budget.rho"))
    rho.set_value(1.0).run()
    hard = at.dataframe[0].value
    assert hard["comparisons_needed"].isna().all()  # a perfect correlation is never reached


def test_changing_the_band_and_strategies():
    at = open_page(PAGE)
    at.multiselect(key="budget.strategies").set_value(["random"]).run()
    at.radio(key="budget.band").set_value("sd").run()
    assert not at.exception
    fig = _curve_figure(at)
    lines = [t for t in fig["data"] if t.get("mode") == "lines"]
    assert {t["name"] for t in lines} == {"random, raw", "random, debiased"}


def test_notes_without_comparisons_or_without_humans():
    demo = data.demo_dataset()
    no_comp = Dataset(
        name="scores only",
        contexts=demo.contexts,
        candidates=demo.candidates,
        human_scores=demo.human_scores,
        comparisons=empty_table("comparisons"),
    )
    at = open_page(PAGE, no_comp)
    assert any("has no pairwise comparisons" in i.value for i in at.info)
    no_humans = Dataset(
        name="judge only",
        contexts=demo.contexts,
        candidates=demo.candidates,
        comparisons=demo.comparisons,
    )
    at = open_page(PAGE, no_humans)
    assert any("No human reference" in i.value for i in at.info)
    assert not at.error and not charts(at)


@need("summeval")
def test_real_summeval_verdicts():
    at = open_page(PAGE, "summeval")
    assert not at.error
    fig = _curve_figure(at)
    lines = [t for t in fig["data"] if t.get("mode") == "lines"]
    assert len(lines) == 8
    # 11 adjacent system pairs in both orders per document: 22 comparisons at most
    assert max(array(t["x"]).max() for t in lines) == 22
    needed = at.dataframe[0].value
    assert len(needed) == 8
    # the first budget on each plotted curve that reaches the target, and its share of 22
    rho = next(n for n in at.number_input if n.key.startswith("budget.rho")).value
    want = _needed_from_lines(lines, rho)
    got = {
        (s, d): math.nan if n is None or pd.isna(n) else float(n)
        for s, d, n in zip(
            needed["strategy"], needed["debiasing"], needed["comparisons_needed"], strict=True
        )
    }
    assert got.keys() == want.keys()
    np.testing.assert_array_equal([got[k] for k in want], list(want.values()))
    assert any(math.isfinite(v) for v in want.values())
    shares = needed.dropna(subset=["comparisons_needed"])
    np.testing.assert_allclose(
        shares["share_of_available"].astype(float),
        (shares["comparisons_needed"].astype(float) / 22).round(3),
    )


def test_symmetric_budget_grid_is_even():
    from pages.services import budgets as svc

    rng = np.random.default_rng(0)
    big = rng.random((2, 30, 30))
    grid = svc.budget_grid(big, "win_ratio", "symmetric")
    assert grid[0] == 2 and grid[-1] == 30 * 29 and (grid % 2 == 0).all()
    assert len(grid) <= svc.MAX_BUDGET_POINTS
    # about twice as many points as the even budgets of the shared grid would give it
    shared = svc.budget_grid(big, "win_ratio")
    assert len(grid) > 1.5 * (shared % 2 == 0).sum()
    small = rng.random((3, 6, 6))
    np.testing.assert_array_equal(svc.budget_grid(small, "win_ratio", "symmetric"), range(2, 31, 2))
    np.testing.assert_array_equal(svc.budget_grid(small, "win_ratio"), range(1, 31))
    curves = svc.compute_budget(small, rng.normal(size=(3, 6)), "symmetric", n_draws=2)
    assert np.isfinite(curves.mean).all()  # every budget of the grid is spendable


def test_a_fresh_install_waits_for_the_warm_up_or_computes_on_request(monkeypatch):
    """While the background warm-up is on its way to this page and the curves' kernels are
    neither compiled nor on disk, the page shows its settings and waits (no compile beside
    the warm-up); "Compute now" computes here; once the warm-up is past, the curves come."""
    from pages.services import budgets as svc
    from pages.shell import warmup

    monkeypatch.setattr(svc, "kernels_ready", lambda *a, **k: False)
    monkeypatch.setattr(warmup, "pending", lambda page: page == "pages/budgets/page.py")
    at = open_page(PAGE)
    assert at.session_state["budget.waiting"] is True
    assert not charts(at)
    assert "built in the background" in at.info[0].value
    assert at.multiselect(key="budget.strategies").value  # the settings are there
    at.button(key="budget.compile_now").click().run()
    assert not at.exception
    assert charts(at) and at.session_state["budget.waiting"] is False
    monkeypatch.setattr(warmup, "pending", lambda page: False)
    at.run()
    assert charts(at) and at.session_state["budget.waiting"] is False
