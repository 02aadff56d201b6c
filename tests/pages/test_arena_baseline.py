"""Arena-Hard-style uploads on Rankings and the Leaderboard (issue 22 items 4 and 5).

The upload is made here in Arena-Hard-Auto's published shape (``model_judgment/<judge>/
<model>.jsonl``, v2.0 records: graded labels, one baseline, both games; the baseline's own
file judges it against itself; question ids that are long instructions with a code fence) and
read through the Data page's reader (``data.io.read_upload_result`` with the other files as
companions). Rankings ranks the systems across the questions (one line says so, no
per-question rankings); both pages show win rates against the baseline, checked against
Arena-Hard's formula computed here: Bradley–Terry on the battles with a strong verdict
counted 3 times (a logistic fit written in the test), sigmoid(theta_model - theta_baseline).
"""

from __future__ import annotations

import json
import zlib

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from data.io import read_upload_result
from tests.pages._analysis_apptest import open_page

BASELINE = "gpt-4-0314"
MODELS = ["m-strong", "m-mid", "m-weak", "m-tie"]
JUDGE = "gpt-4-1106-preview"
N_Q = 12
#: Arena-Hard's reading of a label, from the side of Assistant A: (score of A, weight).
LABEL = {"A>>B": (1.0, 3), "A>B": (1.0, 1), "A=B": (0.5, 1), "B>A": (0.0, 1), "B>>A": (0.0, 3)}


def _qid(k: int) -> str:
    # an instruction-long id with a code fence and Markdown in it
    return f"Write **code** #{k} that prints\n```python\nprint('hi {k}')\n```\n" + "word " * 30


def _labels(model: str, k: int) -> tuple[str, str]:
    """(game 1, game 2) labels; game 1 shows the baseline as A, game 2 the model."""
    rng = np.random.default_rng(zlib.crc32(f"{model} {k}".encode()))
    p = {"m-strong": 0.8, "m-mid": 0.55, "m-weak": 0.25, "m-tie": 0.5}[model]
    out = []
    for model_is_a in (False, True):
        u = rng.random()
        wins = u < p
        strong = rng.random() < 0.4
        if rng.random() < 0.2:
            out.append("A=B")
        elif wins == model_is_a:  # A wins
            out.append("A>>B" if strong else "A>B")
        else:
            out.append("B>>A" if strong else "B>A")
    return out[0], out[1]


def _files() -> dict[str, bytes]:
    files = {}
    for model in [BASELINE, *MODELS]:
        lines = []
        for k in range(N_Q):
            g1, g2 = ("A=B", "A=B") if model == BASELINE else _labels(model, k)
            rec = {
                "uid": _qid(k),
                "category": "arena-hard-v0.1",
                "judge": JUDGE,
                "model": model,
                "baseline": BASELINE,
                "games": [
                    {"score": g, "judgment": {"answer": f"My final verdict is: [[{g}]]"}}
                    for g in (g1, g2)
                ],
            }
            lines.append(json.dumps(rec))
        files[f"model_judgment/{JUDGE}/{model}.jsonl"] = ("\n".join(lines) + "\n").encode()
    return files


def _upload():
    files = _files()
    first = sorted(files)[0]
    companions = {k: v for k, v in files.items() if k != first}
    return read_upload_result(first, files[first], companions=companions)


def _arena_hard_win_rates(files: dict[str, bytes], baseline: str) -> dict[str, float]:
    """Arena-Hard's leaderboard formula, independently: battles (strong verdicts x 3, a
    tie half a win each side), Bradley–Terry by maximum likelihood, win rate against the
    baseline = sigmoid(theta_model - theta_baseline), in %."""
    rows = []
    for data in files.values():
        for line in data.decode().splitlines():
            rec = json.loads(line)
            if rec["model"] == rec["baseline"]:
                continue
            for game, (a, b) in zip(
                rec["games"],
                [(rec["baseline"], rec["model"]), (rec["model"], rec["baseline"])],
                strict=True,
            ):
                y, w = LABEL[game["score"]]
                rows.append((a, b, y, w))
    df = pd.DataFrame(rows, columns=["a", "b", "y", "w"])
    names = sorted(set(df["a"]) | set(df["b"]))
    idx = {n: k for k, n in enumerate(names)}
    a = df["a"].map(idx).to_numpy()
    b = df["b"].map(idx).to_numpy()
    y, w = df["y"].to_numpy(), df["w"].to_numpy(float)

    def nll(theta):
        d = theta[a] - theta[b]
        return -np.sum(w * (y * -np.logaddexp(0, -d) + (1 - y) * -np.logaddexp(0, d)))

    theta = minimize(nll, np.zeros(len(names)), method="BFGS", options={"gtol": 1e-9}).x
    base = theta[idx[baseline]]
    return {n: 100.0 / (1.0 + np.exp(-(theta[idx[n]] - base))) for n in names}


def _win_table(at) -> pd.DataFrame:
    tables = [d.value for d in at.dataframe if "win_rate" in d.value.columns]
    assert tables, "no win-rate table on the page"
    return tables[0]


def _check(table: pd.DataFrame, want: dict[str, float], baseline: str) -> None:
    got = dict(zip(table["system"], table["win_rate"], strict=True))
    assert set(got) == set(want)
    for name, rate in want.items():
        assert got[name] == pytest.approx(rate, abs=0.011), name  # the table is rounded to 0.01
    row = table[table["system"] == baseline].iloc[0]
    assert row["win_rate"] == row["lower"] == row["upper"] == 50.0
    others = table[table["system"] != baseline]
    assert (others["lower"] <= others["win_rate"]).all()
    assert (others["win_rate"] <= others["upper"]).all()
    assert (others["lower"] < others["upper"]).all()


def test_the_upload_skips_self_comparisons_with_a_count():
    result = _upload()
    assert result.baseline == BASELINE
    assert any("compare a candidate with itself" in n and "24 of" in n for n in result.notes)
    c = result.dataset.comparisons
    assert not (c["first_id"] == c["second_id"]).any()
    assert len(c) == 2 * N_Q * len(MODELS)
    assert set(c["weight"]) == {1.0, 3.0}


def test_rankings_ranks_across_questions_and_shows_win_rates_against_the_baseline():
    result = _upload()
    at = open_page("pages/rankings/page.py", result.dataset)
    assert not at.exception and not at.error
    captions = [c.value for c in at.caption]
    assert sum("Arena\\-style design" in c for c in captions) == 1
    assert "ridge prior" not in " ".join(captions)
    assert "Agreement with humans" not in [s.value for s in at.subheader]
    assert "One context" not in [s.value for s in at.subheader]
    # the default baseline is the file's; the win rates are Arena-Hard's
    assert at.selectbox(key="app.baseline").value == BASELINE
    want = _arena_hard_win_rates(_files(), BASELINE)
    _check(_win_table(at), want, BASELINE)
    # another baseline, picked on the page
    at.selectbox(key="app.baseline").select("m-mid").run()
    assert not at.exception
    _check(_win_table(at), _arena_hard_win_rates(_files(), "m-mid"), "m-mid")
    # the per-question rankings come back when asked for
    at.toggle(key="rank.per_context").set_value(True).run()
    assert not at.exception
    assert "One context" in [s.value for s in at.subheader]


def test_leaderboard_shows_win_rates_against_the_picked_baseline():
    result = _upload()
    at = open_page("pages/leaderboard/page.py", result.dataset)
    assert not at.exception and not at.error
    assert at.selectbox(key="app.baseline").value == BASELINE
    _check(_win_table(at), _arena_hard_win_rates(_files(), BASELINE), BASELINE)
    at.selectbox(key="app.baseline").select("m-weak").run()
    assert not at.exception
    _check(_win_table(at), _arena_hard_win_rates(_files(), "m-weak"), "m-weak")
    # bootstrap intervals: percentiles, the win rates themselves unchanged
    at.radio(key="board.intervals").set_value("bootstrap").run()
    assert not at.exception
    _check(_win_table(at), _arena_hard_win_rates(_files(), "m-weak"), "m-weak")
