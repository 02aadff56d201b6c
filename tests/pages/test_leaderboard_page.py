"""AppTest of the Leaderboard page: the systems ranked by every judge on the demo, SummEval,
PandaLM and LLMFAO, on a pairwise-verdict upload (the systems are the candidate ids), and a
plain note when nothing recurs across contexts. Scores, battles and win rates are checked
against values computed here from the comparison rows (pandas, ``ranking.bradley_terry``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import data
from data.natural import natural_key
from data.schema import Dataset, empty_table
from pages.services import comparisons
from pages.shell.text import unsafe
from ranking import bradley_terry
from tests.pages._analysis_apptest import array, figures, metrics, need, open_page, rejudged
from tests.pages._known import judge_rows, system_games

PAGE = "pages/leaderboard/page.py"
JUDGE = "demo-judge (simulated)"
MODELS = ["gpt-4", "llama-2-70b", "mistral-7b", "model-10", "model-2"]


def _tables(at):
    """(systems x judges ranks, one judge's leaderboard)."""
    return at.dataframe[0].value, at.dataframe[1].value


def _hand_win_rates(first: list, second: list, p: np.ndarray) -> dict:
    """(a, b) -> (share of battles a won, battles), one battle at a time."""
    won, n = {}, {}
    for a, b, x in zip(first, second, p, strict=True):
        y = 1.0 if x > 0.5 else (0.0 if x < 0.5 else 0.5)
        for s, t, w in ((a, b, y), (b, a, 1.0 - y)):
            won[s, t] = won.get((s, t), 0.0) + w
            n[s, t] = n.get((s, t), 0) + 1
    return {k: (won[k] / n[k], n[k]) for k in n}


def _check_win_matrix(at, judge, expected):
    fig = figures(at)[f"Win rate, row beats column, {judge}"]["data"][0]
    z = array(fig["z"])
    rows, cols = fig["y"], fig["x"]
    assert rows == cols
    for i, a in enumerate(rows):
        for j, b in enumerate(cols):
            if (a, b) in expected:
                assert z[i][j] == pytest.approx(expected[a, b][0])
                assert f"of {expected[a, b][1]} battle" in fig["customdata"][i][j]
            else:
                assert np.isnan(z[i][j]) and fig["customdata"][i][j] == "never met"


def test_demo_ranks_systems_with_intervals_battles_and_win_rates():
    at = open_page(PAGE)
    assert not at.exception and not at.error
    assert [t.value for t in at.title] == ["Leaderboard"]
    ranks, one = _tables(at)
    demo = data.demo_dataset()
    fc = system_games(demo, "consistency", JUDGE)
    bt = bradley_terry(
        first=fc.first, second=fc.second, outcome=fc.p, n_items=len(fc.items), intervals="fisher"
    )
    want = pd.Series(bt.scores, index=fc.items).sort_values(ascending=False)
    assert list(ranks.columns) == ["system", "mean rank", JUDGE]
    assert list(ranks["system"]) == list(want.index)
    assert list(one["system"]) == list(want.index)
    np.testing.assert_allclose(one["bt_score"], want.round(3), atol=1e-9)
    np.testing.assert_allclose(
        one["lower"], pd.Series(bt.lower, index=fc.items)[want.index].round(3), atol=1e-9
    )
    battles = pd.Series(np.bincount(fc.first) + np.bincount(fc.second), index=fc.items)
    assert list(one["battles"]) == list(battles[want.index])
    assert metrics(at)["Battles"] == str(len(fc.p))
    names = [fc.items[k] for k in range(len(fc.items))]
    _check_win_matrix(
        at,
        JUDGE,
        _hand_win_rates([names[k] for k in fc.first], [names[k] for k in fc.second], fc.p),
    )


@pytest.mark.parametrize("mode", ["tau", "swap"])
def test_the_shared_debias_setting_ranks_the_systems(mode):
    import ranking
    from data.arrays import comparisons_to_P
    from data.flat import flat_comparisons

    at = open_page("pages/position_bias/page.py")
    at.radio(key="app.debias.mode").set_value(mode).run()
    if mode == "tau":
        at.slider(key="app.debias.tau").set_value(0.66).run()
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    line = " ".join(unsafe(m.value) for m in at.markdown if m.value.startswith("Debiasing:"))
    assert ("tau = 0.66" if mode == "tau" else "swap calibration") in line, line
    assert "Position bias" in [link.proto.label for link in at.get("page_link")][0]
    demo = data.demo_dataset()
    rows = judge_rows(demo, "consistency", JUDGE)
    p = rows["p_first"].to_numpy(float)
    if mode == "tau":
        outcome = np.where(p > 0.66, 1.0, np.where(p < 0.66, 0.0, 0.5))
    else:
        pm = comparisons_to_P(rows, attribute="consistency", judge=JUDGE)
        outcome = ranking.calibrate(pm.P, "swap").apply(p)
    fc = flat_comparisons(
        rows.assign(p_first=outcome),
        attribute="consistency",
        judge=JUDGE,
        item="system",
        candidates=demo.candidates,
    )
    bt = bradley_terry(
        first=fc.first, second=fc.second, outcome=fc.p, n_items=len(fc.items), intervals="fisher"
    )
    want = pd.Series(bt.scores, index=fc.items).sort_values(ascending=False)
    raw = system_games(demo, "consistency", JUDGE)
    raw_bt = bradley_terry(
        first=raw.first, second=raw.second, outcome=raw.p, n_items=len(raw.items)
    )
    assert not np.allclose(np.sort(bt.scores), np.sort(raw_bt.scores), atol=1e-3)
    _, one = _tables(at)
    assert list(one["system"]) == list(want.index)
    np.testing.assert_allclose(one["bt_score"], want.round(3), atol=1e-9)
    names = list(fc.items)
    _check_win_matrix(
        at,
        JUDGE,
        _hand_win_rates([names[k] for k in fc.first], [names[k] for k in fc.second], fc.p),
    )
    assert any("calibrated p > 0.5" in c.value or "p > 0.66" in c.value for c in at.caption)


def test_an_unavailable_calibration_ranks_as_off_and_says_why():
    from pages.services import leaderboard as board_svc

    demo = data.demo_dataset()
    c = demo.comparisons
    one_order = rejudged(
        demo, "demo, one order", c[c["first_id"].astype(str) < c["second_id"].astype(str)]
    )
    board = board_svc.leaderboard(one_order, "consistency", "fisher", "swap", 0.5)
    off = board_svc.leaderboard(one_order, "consistency", "fisher", "off", 0.5)
    assert (
        board.settings[JUDGE].mode == "off" and "both orders" in board.settings[JUDGE].unavailable
    )
    assert any(JUDGE in n and "ranked as off" in n for n in board.notes)
    pd.testing.assert_frame_equal(board.long, off.long)


def _pairwise_upload(n_contexts: int = 8) -> Dataset:
    """What a pairwise-verdict upload gives: prompts, model names as candidate ids (no
    system column), verdicts as p_first with a few unparsed, one attribute and judge."""
    rng = np.random.default_rng(3)
    strength = dict(zip(MODELS, [2.0, 1.0, 0.0, -0.5, -1.0], strict=True))
    rows = []
    for c in range(n_contexts):
        for a in MODELS:
            for b in MODELS:
                if a == b or rng.random() < 0.4:
                    continue
                win = rng.random() < 1 / (1 + np.exp(strength[b] - strength[a]))
                p = np.nan if rng.random() < 0.05 else (1.0 if win else 0.0)
                rows.append(
                    {
                        "context_id": f"q{c}",
                        "attribute": "overall",
                        "judge": "uploaded",
                        "first_id": a,
                        "second_id": b,
                        "p_first": p,
                        "sample": 0,
                    }
                )
    comps = pd.DataFrame(rows)
    return Dataset(
        name="verdicts.csv",
        contexts=empty_table("contexts"),
        candidates=empty_table("candidates"),
        human_scores=empty_table("human_scores"),
        comparisons=comps.assign(verdict=None, raw=None),
    )


def test_a_pairwise_upload_ranks_its_candidate_ids():
    ds = _pairwise_upload()
    at = open_page(PAGE, ds)
    assert not at.exception and not at.error, [e.value for e in at.error]
    ranks, one = _tables(at)
    assert sorted(ranks["system"], key=natural_key) == sorted(MODELS, key=natural_key)
    assert any("candidate ids that recur across contexts" in c.value for c in at.caption)
    rows = judge_rows(ds, "overall", "uploaded")
    battles = pd.concat([rows["first_id"], rows["second_id"]]).value_counts()
    assert dict(zip(one["system"], one["battles"], strict=True)) == battles.to_dict()
    assert metrics(at)["Battles"] == str(len(rows))
    _check_win_matrix(
        at,
        "uploaded",
        _hand_win_rates(
            list(rows["first_id"]), list(rows["second_id"]), rows["p_first"].to_numpy()
        ),
    )
    # the strongest simulated model leads
    assert one["system"].iloc[0] == "gpt-4"


def test_nothing_recurring_across_contexts_says_why():
    ds = _pairwise_upload()
    comps = ds.comparisons.copy()
    for col in ("first_id", "second_id"):  # ids unique to their context
        comps[col] = comps["context_id"] + "-" + comps[col]
    ds = rejudged(ds, "one-off ids", comps)
    at = open_page(PAGE, ds)
    assert not at.exception and not at.error
    info = " ".join(i.value for i in at.info)
    assert "no candidate id recurs across contexts" in info and "system column" in info
    assert not at.dataframe


@need("summeval")
def test_summeval_twelve_systems_by_chatgpt():
    at = open_page(PAGE, "summeval")
    assert not at.exception and not at.error
    ranks, one = _tables(at)
    assert len(ranks) == 12 and len(one) == 12
    ds = data.load_benchmark("summeval")
    attribute = at.selectbox(key="app.attribute").value
    judge = "gpt-3.5-turbo-0301/ab-choice"
    fc = system_games(ds, attribute, judge)
    assert metrics(at)["Battles"] == str(len(fc.p))
    assert one["rank"].is_monotonic_increasing


@need("pandalm")
def test_pandalm_judges_and_the_human_pool():
    at = open_page(PAGE, "pandalm")
    assert not at.exception and not at.error
    ranks, _ = _tables(at)
    assert comparisons.HUMAN_POOL in ranks.columns
    assert len(ranks.columns) >= 4  # system, mean rank, >= 2 judges
    assert len(ranks) == 5


@need("llmfao")
def test_llmfao_many_systems():
    at = open_page(PAGE, "llmfao")
    assert not at.exception and not at.error
    ranks, one = _tables(at)
    assert len(ranks) > 30 and one["rank"].is_monotonic_increasing
