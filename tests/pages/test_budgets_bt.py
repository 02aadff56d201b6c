"""Comparison budgets with Bradley–Terry: the page offers every budget, and its curves are
``ranking.budget_curves(method="bradley_terry")`` on the judge's P at every budget."""

from __future__ import annotations

import numpy as np

import data
from pages.services import budgets as svc
from tests.pages._analysis_apptest import array, charts, open_page
from tests.pages._known import demo_budget_curve, judge_matrices

PAGE = "pages/budgets/page.py"


def _lines(at):
    fig = next(
        f for f in charts(at) if "against the number of comparisons" in f["layout"]["title"]["text"]
    )
    return [t for t in fig["data"] if t.get("mode") == "lines"]


def test_bradley_terry_on_every_budget():
    at = open_page(PAGE)
    at.selectbox(key="budget.method").set_value("bradley_terry").run()
    at.multiselect(key="budget.strategies").set_value(["random", "symmetric"]).run()
    at.checkbox(key="budget.full").check().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("warm started" in c.value for c in at.caption)
    lines = _lines(at)
    assert {t["name"] for t in lines} == {
        "random, raw",
        "random, debiased",
        "symmetric, raw",
        "symmetric, debiased",
    }
    pm, ref = judge_matrices(data.demo_dataset(), "consistency", "demo-judge (simulated)")
    for line in lines:
        strategy, debiasing = line["name"].split(", ")
        x, y = demo_budget_curve(pm, ref, strategy, debiasing == "debiased", method="bradley_terry")
        np.testing.assert_allclose(array(line["x"]), x)
        np.testing.assert_allclose(array(line["y"]), y, atol=1e-12)


def test_full_grid_is_every_budget_for_every_method():
    rng = np.random.default_rng(1)
    big = rng.random((2, 16, 16))
    for method in svc.BUDGET_METHODS:
        thin = svc.budget_grid(big, method)
        assert len(thin) <= svc.MAX_BUDGET_POINTS and thin[-1] == 240
        np.testing.assert_array_equal(svc.budget_grid(big, method, full=True), range(1, 241))
        np.testing.assert_array_equal(
            svc.budget_grid(big, method, "symmetric", full=True), range(2, 241, 2)
        )
    # Bradley–Terry is no longer held to a shorter grid than the other methods
    np.testing.assert_array_equal(
        svc.budget_grid(big, "bradley_terry"), svc.budget_grid(big, "win_ratio")
    )
    curves = svc.compute_budget(
        big, rng.normal(size=(2, 16)), "random", method="bradley_terry", n_draws=2, full=True
    )
    np.testing.assert_array_equal(curves.budgets, range(1, 241))
    assert np.isfinite(curves.mean).all()
