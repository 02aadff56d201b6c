"""The calibration debias modes (issue 13, item 4): "swap" and "isotonic" in the shared
setting, ranked with by Rankings, shown on Position bias with a caption (no slider), the
fallback to "off" with its reason, and the "as set" budget curve."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import data
import ranking
from data.arrays import comparisons_to_P, scores_to_matrix
from pages.services import bias
from pages.services import budgets as budgets_svc
from tests.pages._analysis_apptest import agreement_tab, array, charts, open_page
from tests.pages._known import SHOWN, judge_rows, mean_spearman

JUDGE = "demo-judge (simulated)"
ATTRIBUTE = "consistency"


def _demo_P():
    demo = data.demo_dataset()
    pm = comparisons_to_P(judge_rows(demo, ATTRIBUTE, JUDGE), attribute=ATTRIBUTE, judge=JUDGE)
    return demo, pm, scores_to_matrix(demo.human_scores, pm, attribute=ATTRIBUTE)


def _one_order(ds):
    """The dataset with each pair judged in one order only (and no human scores)."""
    c = ds.comparisons
    keep = c["first_id"].astype(str) < c["second_id"].astype(str)
    return dataclasses.replace(
        ds, name="demo, one order", comparisons=c[keep], human_scores=ds.human_scores.iloc[:0]
    )


@pytest.mark.parametrize("mode", ["swap", "isotonic"])
def test_a_calibration_mode_ranks_the_calibrated_P(mode):
    demo, pm, ref = _demo_P()
    want = ranking.calibrate(pm.P, mode, ref if mode == "isotonic" else None, random_state=0)
    setting = bias.resolve_debias(demo, ATTRIBUTE, JUDGE, mode, 0.7)
    assert setting.mode == mode and setting.active and setting.unavailable is None
    assert setting.rule == ("calibrate", mode) and setting.raw_rule == ("soft", None)
    assert ("swap calibration" if mode == "swap" else "calibrated to humans") in setting.label
    P, tau = bias.debiased_P(demo, ATTRIBUTE, JUDGE, setting.rule)
    assert tau is None
    np.testing.assert_allclose(P, want.P, equal_nan=True)
    # comparison rows (the system rankings, the leaderboard): mapped by the fitted map
    rows = judge_rows(demo, ATTRIBUTE, JUDGE)
    out = bias.debiased_outcomes(demo, ATTRIBUTE, JUDGE, rows, setting.rule)
    np.testing.assert_allclose(out["p_first"], np.interp(rows["p_first"], want.x, want.y))
    assert out.index.equals(rows.index)


def test_unavailable_calibrations_fall_back_to_off_with_the_reason():
    ds = _one_order(data.demo_dataset())
    swap = bias.resolve_debias(ds, ATTRIBUTE, JUDGE, "swap", 0.5)
    assert swap.mode == "off" and not swap.active and "both orders" in swap.unavailable
    assert swap.rule == ("soft", None)
    iso = bias.resolve_debias(ds, ATTRIBUTE, JUDGE, "isotonic", 0.5)
    assert iso.mode == "off" and "human" in iso.unavailable
    # a stale calibrate rule still ranks as off
    P, tau = bias.debiased_P(ds, ATTRIBUTE, JUDGE, ("calibrate", "swap"))
    np.testing.assert_array_equal(P, bias.pmatrix(ds, ATTRIBUTE, JUDGE).P)
    rows = judge_rows(ds, ATTRIBUTE, JUDGE)
    same = bias.debiased_outcomes(ds, ATTRIBUTE, JUDGE, rows, ("calibrate", "swap"))
    assert same is rows


def test_position_bias_shows_a_caption_not_a_slider_and_rankings_uses_it():
    at = open_page("pages/position_bias/page.py")
    at.radio(key="app.debias.mode").set_value("swap").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert not [s for s in at.slider if s.key == "app.debias.tau"]
    captions = " ".join(c.value for c in at.caption)
    assert "learnt without labels" in captions and "In force: swap calibration" in captions
    at.switch_page("pages/rankings/page.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.radio(key="app.debias.mode").value == "swap"
    assert any("swap calibration" in e.label for e in at.expander)
    _, pm, ref = _demo_P()
    P = ranking.calibrate(pm.P, "swap").P
    want = [
        mean_spearman(ranking.win_ratio(P, tau=0.5), ref),
        mean_spearman(ranking.ml_ranking(P).scores, ref),
        mean_spearman(ranking.bradley_terry(P).scores, ref),
    ]
    got = [float(m.value) for m in at.metric if m.label == "Spearman"]
    np.testing.assert_allclose(got, want, atol=SHOWN)


def test_position_bias_says_why_a_calibration_is_unavailable():
    ds = _one_order(data.demo_dataset())
    at = open_page("pages/position_bias/page.py", ds)
    at.radio(key="app.debias.mode").set_value("swap").run()
    assert not at.exception, [e.value for e in at.exception]
    warning = " ".join(w.value for w in at.warning)
    assert "not available" in warning and "both orders" in warning and "off" in warning
    at.switch_page("pages/rankings/page.py").run()
    assert not at.exception
    assert any("unavailable" in e.label for e in at.expander)


def test_budgets_draw_an_as_set_curve_for_a_calibration():
    at = open_page("pages/position_bias/page.py")
    at.radio(key="app.debias.mode").set_value("isotonic").run()
    at.switch_page("pages/budgets/page.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    fig = next(
        f for f in charts(at) if "against the number of comparisons" in f["layout"]["title"]["text"]
    )
    lines = {t["name"]: t for t in fig["data"] if t.get("mode") == "lines"}
    assert "random, as set" in lines and "random, raw" in lines and "random, debiased" in lines
    _, pm, ref = _demo_P()
    P = ranking.calibrate(pm.P, "isotonic", ref, random_state=0).P
    curves = budgets_svc.compute_budget(P, ref, "random", debias=(False,))
    want = curves.mean[0, 0]
    got = array(lines["random, as set"]["y"])
    np.testing.assert_allclose(got, want[np.isfinite(want)], atol=1e-9)
    assert "as set" in " ".join(c.value for c in at.caption)
    needed = next(d.value for d in at.dataframe if "comparisons_needed" in d.value.columns)
    assert "as set" in set(needed["debiasing"])


def test_debiased_dataset_turns_model_judges_into_outcomes_and_keeps_humans():
    from pages.services.calibration import debiased_dataset

    demo = data.demo_dataset()
    human = demo.comparisons.assign(judge="human:ann1", verdict="A", p_first=1.0)
    ds = dataclasses.replace(demo, comparisons=pd.concat([demo.comparisons, human]))
    out, notes = debiased_dataset(ds, "tau", 0.7)
    assert notes == [] and out.comparisons.index.equals(ds.comparisons.index)
    model = ~out.comparisons["judge"].str.startswith("human:")
    p = ds.comparisons.loc[model, "p_first"].to_numpy(float)
    want = np.where(p > 0.7, 1.0, np.where(p < 0.7, 0.0, 0.5))
    np.testing.assert_array_equal(out.comparisons.loc[model, "p_first"], want)
    assert out.comparisons.loc[model, "verdict"].isna().all()  # read from the debiased p
    pd.testing.assert_frame_equal(out.comparisons[~model], ds.comparisons[~model])
    assert debiased_dataset(ds, "off", 0.5)[0] is ds
    one, notes = debiased_dataset(_one_order(demo), "swap", 0.5)
    assert len(notes) == 2 and all("both orders" in n for n in notes)  # two attributes
    pd.testing.assert_frame_equal(one.comparisons, _one_order(demo).comparisons)


def test_human_agreement_judges_pairwise_judges_under_the_shared_setting():
    from data.agreement import pairwise_accuracy_table
    from pages.services.calibration import debiased_dataset

    at = open_page("pages/position_bias/page.py")
    at.radio(key="app.debias.mode").set_value("tau").run()
    at.slider(key="app.debias.tau").set_value(0.7).run()
    at.switch_page("pages/agreement/page.py").run()
    at = agreement_tab(at, "pairwise")  # the page's questions are tabs; only the open one runs
    line = " ".join(c.value for c in at.caption if "Debiasing of the pairwise judges" in c.value)
    assert "Threshold tau (tau = 0.70)" in line, line
    fig = next(c for c in charts(at) if "accuracy" in str(c.get("layout", {})).lower())
    shown = sorted(float(y) for trace in fig["data"] for y in array(trace["y"]))
    demo = data.demo_dataset()
    want = pairwise_accuracy_table(debiased_dataset(demo, "tau", 0.7)[0])["accuracy"]
    raw = pairwise_accuracy_table(demo)["accuracy"]
    np.testing.assert_allclose(shown, sorted(want), rtol=1e-9)
    assert not np.allclose(sorted(want), sorted(raw))  # the setting changed the numbers
