"""data.io.pairwise_guess: the column names the field's pairwise files use are guessed, and
every guess that did not come from a column's own name is explained."""

from __future__ import annotations

import pandas as pd
import pytest

from data.io import guess_pairwise, read_upload_result
from data.schema import DataError

LONG = "a long enough answer to count as text rather than a label, surely"


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        (  # Chatbot Arena / MT-Bench human judgments
            ["question_id", "model_a", "model_b", "winner", "judge", "turn"],
            {
                "context_id": "question_id",
                "first_system": "model_a",
                "second_system": "model_b",
                "verdict": "winner",
                "judge": "judge",
            },
        ),
        (  # AlpacaEval, flattened
            ["instruction", "output_1", "generator_1", "output_2", "generator_2", "preference"],
            {
                "context_text": "instruction",
                "first_text": "output_1",
                "second_text": "output_2",
                "first_system": "generator_1",
                "second_system": "generator_2",
                "verdict": "preference",
            },
        ),
        (  # LLMBar with a judge's verdicts
            ["input", "output_1", "output_2", "label", "verdict"],
            {
                "context_text": "input",
                "first_text": "output_1",
                "second_text": "output_2",
                "human_verdict": "label",
                "verdict": "verdict",
            },
        ),
        (  # response_A / response_B, model_1 / model_2, prompt, games
            [
                "uid",
                "prompt",
                "model_1",
                "model_2",
                "response_A",
                "response_B",
                "verdict",
                "games",
                "weight",
            ],
            {
                "context_id": "uid",
                "context_text": "prompt",
                "first_system": "model_1",
                "second_system": "model_2",
                "first_text": "response_A",
                "second_text": "response_B",
                "verdict": "verdict",
                "sample": "games",
                "weight": "weight",
            },
        ),
        (  # answer_a / answer_b, turns
            ["turns", "answer_a", "answer_b", "preference", "judge"],
            {
                "context_text": "turns",
                "first_text": "answer_a",
                "second_text": "answer_b",
                "verdict": "preference",
                "judge": "judge",
            },
        ),
    ],
)
def test_common_names_are_guessed(columns, expected):
    frame = pd.DataFrame([dict.fromkeys(columns, "A")])
    for c in columns:
        if c in ("output_1", "output_2", "response_A", "response_B", "answer_a", "answer_b"):
            frame[c] = LONG + c
    mapping, notes = guess_pairwise(frame)
    assert mapping is not None
    for role, col in expected.items():
        assert getattr(mapping, role) == col, role
    taken = {r for r in expected}
    for role in ("first", "second", "probability", "human_verdict", "verdict", "raw"):
        if role not in taken:
            assert getattr(mapping, role) is None, role
    assert notes[0].startswith("read as a pairwise-verdict table: ")


def test_the_issue_file_is_not_guessed_wrong():
    # instruction, first/second output, verdict and judge: the texts and roles by name,
    # never "first candidate = instruction"
    frame = pd.DataFrame(
        {
            "instruction": ["Sort these numbers: 3, 1, 2.", "Say hello in French."],
            "first_output": [LONG, "Bonjour, " + LONG],
            "second_output": ["1, 2, 3 " + LONG, "Hello " + LONG],
            "verdict": ["[[A]]", "[[B]]"],
            "judge": ["gpt-4", "gpt-4"],
        }
    )
    mapping, notes = guess_pairwise(frame)
    assert (mapping.first_text, mapping.second_text) == ("first_output", "second_output")
    assert (mapping.context_text, mapping.verdict, mapping.judge) == (
        "instruction",
        "verdict",
        "judge",
    )
    assert mapping.first is None and mapping.second is None
    assert (
        "'first_output' and 'second_output' are taken as the first and second candidate texts: "
        "a pair of columns holding long text"
    ) in notes
    assert any("short hash of the texts" in n for n in notes)


def test_guesses_from_values_are_explained():
    frame = pd.DataFrame(
        {
            "item": ["i1", "i1", "i2", "i2"],
            "gen_a": ["m1", "m2", "m1", "m2"],
            "gen_b": ["m2", "m1", "m2", "m1"],
            "gpt4_says": ["A>>B", "B>A", "A=B", "[[B>>A]]"],
            "crowd_vote": ["model_a", "model_b", "tie", "model_b"],
            "score": ["A>B", "tie", "A", "B"],
        }
    )
    mapping, notes = guess_pairwise(frame)
    assert (mapping.first_system, mapping.second_system) == ("gen_a", "gen_b")
    assert mapping.verdict == "score"  # named 'score', and its values are verdicts
    assert mapping.human_verdict == "crowd_vote"
    assert (
        "'gen_a' and 'gen_b' are taken as the first and second systems: a pair of columns whose short values recur"
        in notes
    )
    assert (
        "'score' is taken as the judge verdict: its values are verdicts (A>B, tie, ...), not numbers on a scale"
        in notes
    )
    assert "'crowd_vote' is taken as the human verdict: verdict values, a human's by name" in notes


def test_score_on_a_scale_is_not_a_verdict():
    frame = pd.DataFrame({"model_a": ["m1"], "model_b": ["m2"], "score": ["7"], "winner": ["A"]})
    mapping, _ = guess_pairwise(frame)
    assert mapping.verdict == "winner"
    frame = pd.DataFrame({"model_a": ["m1", "m2"], "model_b": ["m2", "m1"], "score": ["7", "9"]})
    assert guess_pairwise(frame) == (None, [])


def test_two_columns_for_one_role_are_refused():
    data = b"first,second,verdict,winner\na,b,A,B\n"
    with pytest.raises(
        DataError, match=r"columns 'verdict' and 'winner': each could be the verdict"
    ):
        read_upload_result("p.csv", data, kind="pairwise")
