"""The length-controlled win rate against a baseline (AlpacaEval's, ``data.bias``) on uploads
read through the Data page's reader (issue 22 item 4): an Arena-Hard upload with its model
answers, and a pairwise CSV keyed by long instructions with both outputs. Before uploads kept
their texts and candidates (issue 22 items 6 and 8) it failed on both; the raw win rate is
checked against the games counted here, the baseline sits at 0.5, and a judge that prefers
the longer answer gets its length coefficient."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from data.bias import length_controlled_win_rate
from data.io import read_upload_result

BASELINE = "base"
MODELS = ["long-winded", "terse", "plain"]
N_Q = 16
WORDS = {"base": 60, "long-winded": 240, "terse": 15, "plain": 60}


def _words(system: str, k: int) -> int:
    """Answer length: each system's typical length, varied from question to question (so
    length is not the system itself, and its effect can be told apart)."""
    spread = (k * (3 + len(system))) % 5  # 0..4
    return int(WORDS[system] * (0.5 + spread / 4))


def _game(model: str, k: int, model_is_a: bool) -> str:
    """The judge prefers the longer answer; every fourth question, and equal lengths, a tie."""
    m, b = _words(model, k), _words(BASELINE, k)
    if k % 4 == 0 or m == b:
        return "A=B"
    a_wins = (m > b) == model_is_a
    return "A>B" if a_wins else "B>A"


def _arena_files() -> dict[str, bytes]:
    files = {}
    for model in MODELS:
        recs = [
            {
                "uid": f"q{k}",
                "category": "arena-hard-v0.1",
                "judge": "j",
                "model": model,
                "baseline": BASELINE,
                "games": [
                    {"score": _game(model, k, False), "judgment": {"answer": "..."}},
                    {"score": _game(model, k, True), "judgment": {"answer": "..."}},
                ],
            }
            for k in range(N_Q)
        ]
        files[f"model_judgment/j/{model}.jsonl"] = "\n".join(map(json.dumps, recs)).encode()
    for model in [BASELINE, *MODELS]:
        recs = [
            {
                "uid": f"q{k}",
                "model": model,
                "messages": [
                    {"role": "user", "content": f"question {k}"},
                    {"role": "assistant", "content": {"answer": "word " * _words(model, k)}},
                ],
            }
            for k in range(N_Q)
        ]
        files[f"model_answer/{model}.jsonl"] = "\n".join(map(json.dumps, recs)).encode()
    files["question.jsonl"] = "\n".join(
        json.dumps({"uid": f"q{k}", "category": "arena-hard-v0.1", "prompt": f"question {k}"})
        for k in range(N_Q)
    ).encode()
    return files


def _raw_by_hand() -> dict[str, float]:
    """Share of the games the model won against the baseline (a tie half)."""
    won = {}
    for model in MODELS:
        scores = []
        for k in range(N_Q):
            for model_is_a in (False, True):
                label = _game(model, k, model_is_a)
                a = {"A>B": 1.0, "A=B": 0.5, "B>A": 0.0}[label]
                scores.append(a if model_is_a else 1.0 - a)
        won[model] = float(np.mean(scores))
    return won


def _check(table: pd.DataFrame) -> None:
    rows = table.set_index("system")
    assert rows.loc[BASELINE, "win_rate_raw"] == 0.5
    assert rows.loc[BASELINE, "win_rate_lc"] == 0.5
    for model, want in _raw_by_hand().items():
        assert rows.loc[model, "win_rate_raw"] == want
        assert 0.0 < rows.loc[model, "low"] <= rows.loc[model, "win_rate_lc"]
        assert rows.loc[model, "win_rate_lc"] <= rows.loc[model, "high"] < 1.0
    # the judge rewards length: controlling for it pulls the long answers down
    assert rows.loc["long-winded", "win_rate_lc"] < rows.loc["long-winded", "win_rate_raw"]
    assert rows.loc["terse", "win_rate_lc"] > rows.loc["terse", "win_rate_raw"]


def test_lc_win_rate_on_an_arena_hard_upload_with_its_answers():
    files = _arena_files()
    first = "model_judgment/j/plain.jsonl"
    result = read_upload_result(
        first, files[first], companions={k: v for k, v in files.items() if k != first}
    )
    ds = result.dataset
    assert result.baseline == BASELINE
    _check(length_controlled_win_rate(ds, ds.attributes[0], "j", BASELINE))


def test_lc_win_rate_on_a_pairwise_csv_keyed_by_long_instructions():
    rows = []
    for model in MODELS:
        for k in range(N_Q):
            instruction = f"Explain item {k} in **detail**:\n```\ncode {k}\n```\n" + "x " * 40
            for model_is_a in (False, True):
                a, b = (model, BASELINE) if model_is_a else (BASELINE, model)
                label = _game(model, k, model_is_a)
                rows.append(
                    {
                        "instruction": instruction,
                        "model_a": a,
                        "model_b": b,
                        "output_a": "word " * _words(a, k),
                        "output_b": "word " * _words(b, k),
                        "winner": {"A>B": "model_a", "B>A": "model_b", "A=B": "tie"}[label],
                        "judge": "j",
                        "game": int(model_is_a),
                    }
                )
    data = pd.DataFrame(rows).to_csv(index=False).encode()
    result = read_upload_result("pairs.csv", data)
    ds = result.dataset
    assert len(ds.candidates) and (ds.candidates["text"] != "").all()
    _check(length_controlled_win_rate(ds, ds.attributes[0], "j", BASELINE))
