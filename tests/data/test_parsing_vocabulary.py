"""data.parsing.vocabulary: every form of the verdict vocabulary, the column readings with
the user's overrides, and the strength policies (Arena-Hard's rule recomputed here)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.parsing import (
    ARENA_HARD_STRONG_WEIGHT,
    STRENGTH_POLICIES,
    VERDICT_FORMS,
    apply_strength,
    read_verdict_column,
    read_verdict_value,
    verdict_forms_table,
    verdict_map,
)

# --------------------------------------------------------------------------- one value

# (value, grade, graded): the readings written from each format's documentation.
READINGS = [
    # Arena-Hard: the five labels of its judge prompt and the mirror forms show_result.py
    # also scores (A<<B, B<A, ...); stored bare in each game's "score"
    ("A>>B", 2, True),
    ("A>B", 1, True),
    ("A=B", 0, True),
    ("B>A", -1, True),
    ("B>>A", -2, True),
    ("A<<B", -2, True),
    ("A<B", -1, True),
    ("B=A", 0, True),
    ("B<A", 1, True),
    ("B<<A", 2, True),
    ("[[A>>B]]", 2, True),
    ("[[B>A]]", -1, True),
    ("[A=B]", 0, True),
    ("[[ a >> b ]]", 2, True),  # arena-hard-auto upper-cases the judgment before matching
    # MT-Bench (FastChat pair-v2): [[C]] is the tie
    ("[[A]]", 1, False),
    ("[[B]]", -1, False),
    ("[[C]]", 0, False),
    # letters, assistants, outputs
    ("A", 1, False),
    ("b", -1, False),
    ("Assistant A", 1, False),
    ("Assistant B", -1, False),
    ("Output (a)", 1, False),  # LLMBar
    ("Output (b)", -1, False),
    ("output_2", -1, False),
    # 1 / 2 / 0 codes (PandaLM, AlpacaEval, LLMBar winner, FastChat lmsys pairs)
    ("1", 1, False),
    ("2", -1, False),
    ("0", 0, False),
    (1, 1, False),
    (2.0, -1, False),
    (0, 0, False),
    ("1.5", 0, False),  # AlpacaEval: 1.5 (and 0) is a draw
    ("first", 1, False),
    ("second", -1, False),
    ("tie", 0, False),
    ("Tie", 0, False),  # PandaLM
    ("draw", 0, False),
    # AlpacaEval's model identifiers: m is output_1, M is output_2 (case matters)
    ("m", 1, False),
    ("M", -1, False),
    # Chatbot Arena / MT-Bench human judgments
    ("model_a", 1, False),
    ("model_b", -1, False),
    ("tie (bothbad)", 0, False),
    ("model_1", 1, False),  # FastChat judgment files, winners mapped back to the row
    ("model_2", -1, False),
    # five-level comparative phrasings
    ("much better", 2, True),
    ("better", 1, True),
    ("about the same", 0, True),
    ("slightly worse", -1, True),
    ("much worse", -2, True),
    ("A is much better", 2, True),
    ("B is slightly better", -1, True),
    ("Assistant A is significantly better", 2, True),
    ("Assistant B is significantly better", -2, True),
    ("Response 2 is much better than Response 1", -2, True),
    ("Response 1 is slightly worse than Response 2", -1, True),
    ("Tie, relatively the same", 0, True),
    # clean-up: Markdown bold, quotes, trailing full stop, spaces
    ("**A>B**", 1, True),
    ('"B>>A"', -2, True),
    ("  model_a ", 1, False),
    ("Tie.", 0, False),
]


@pytest.mark.parametrize(("value", "grade", "graded"), READINGS)
def test_each_form_reads_as_its_grade(value, grade, graded):
    reading = read_verdict_value(value)
    assert (reading.grade, reading.graded) == (grade, graded)
    assert reading.known and not reading.missing
    assert reading.verdict == {1: "A", 0: "tie", -1: "B"}[int(np.sign(grade))]
    assert reading.value == value  # kept as given
    assert reading.meaning


def test_every_spelling_of_the_table_reads_as_its_row():
    n = 0
    for form in VERDICT_FORMS:
        assert form.grade in (-2, -1, 0, 1, 2)
        for spelling in form.spellings:
            reading = read_verdict_value(spelling)
            assert reading.grade == form.grade, spelling
            assert reading.graded == form.graded, spelling
            if not form.case_sensitive:
                assert read_verdict_value(spelling.upper()).grade == form.grade, spelling
            n += 1
    assert n > 100
    shown = verdict_forms_table()
    assert list(shown["form"]) == [f.name for f in VERDICT_FORMS]
    assert shown.loc[shown["form"] == "A>>B", "grade"].item() == 2


@pytest.mark.parametrize(
    ("value", "p_first", "grade"),
    [(1.25, 0.75, 1), ("1.9", 0.1, -1), (1.5, None, 0), (1.0, None, 1), ("1.0", None, 1)],
)
def test_alpacaeval_float_preferences_state_their_probability(value, p_first, grade):
    # AlpacaEval's weighted judges store preference = 2 - P(output_1 better), between 1 and 2
    reading = read_verdict_value(value)
    assert reading.grade == grade
    assert reading.p_first == (None if p_first is None else pytest.approx(p_first))
    assert not reading.graded


@pytest.mark.parametrize(
    "value",
    [
        "garbage",
        "C",  # a tie only in MT-Bench's brackets
        "error",  # FastChat's failure marker
        "inconsistent",
        "3",
        2.5,
        -1,
        True,
        "A>B>A",
        "[[A]] [[B]]",
        "A is better than A",
        "A is cheaper",
    ],
)
def test_values_outside_the_vocabulary_are_unknown_and_kept(value):
    reading = read_verdict_value(value)
    assert reading.grade is None and not reading.known and not reading.missing
    assert reading.form == "unknown" and reading.verdict is None
    assert reading.value is value or reading.value == value


@pytest.mark.parametrize("value", [None, float("nan"), "", "   ", np.nan, pd.NA])
def test_missing_values_are_missing_not_unknown(value):
    reading = read_verdict_value(value)
    assert reading.missing and not reading.known and reading.grade is None


def test_case_matters_only_for_alpacaeval_letters():
    assert read_verdict_value(" M ").grade == -1
    assert read_verdict_value("m").grade == 1
    assert read_verdict_value("TIE").grade == 0
    assert read_verdict_value("MODEL_A").grade == 1


# --------------------------------------------------------------------------- overrides


def test_overrides_win_over_the_vocabulary():
    assert read_verdict_value("garbage", {"garbage": -2}).grade == -2
    assert read_verdict_value("garbage", {"garbage": -2}).form == "override"
    assert read_verdict_value("A", {"A": None}).grade is None  # the user leaves it unparsed
    assert read_verdict_value("x", {"x": "tie"}).grade == 0
    assert read_verdict_value("x", {"x": "B"}).graded is False
    assert read_verdict_value(" x ", {"x": 1}).grade == 1  # keyed by the trimmed text too
    assert read_verdict_value(3, {"3": 0}).grade == 0
    assert read_verdict_value("y", {"x": 1}).grade is None


@pytest.mark.parametrize("bad", [3, 1.5, "C", "yes", True, [1]])
def test_bad_overrides_are_refused(bad):
    with pytest.raises(ValueError, match="verdict map"):
        read_verdict_value("x", {"x": bad})


# --------------------------------------------------------------------------- columns


def test_verdict_map_lists_each_distinct_value_with_its_rows():
    column = pd.Series(["A>>B", "A>B", "garbage", None, "A>>B", "B>>A", "garbage", ""])
    table = verdict_map(column)
    assert list(table["value"].iloc[:4]) == ["A>>B", "A>B", "garbage", "B>>A"]
    assert list(table["count"]) == [2, 1, 2, 1, 1, 1]  # None and "" are two missing values
    assert list(table.loc[2, "rows"]) == [2, 6]
    assert table.loc[2, "form"] == "unknown" and not table.loc[2, "known"]
    np.testing.assert_array_equal(table["grade"].iloc[:4], [2.0, 1.0, np.nan, -2.0])
    assert table["missing"].sum() == 2 and table["count"].sum() == len(column)
    edited = verdict_map(column, {"garbage": 0})
    assert edited.loc[2, "grade"] == 0 and edited.loc[2, "form"] == "override"
    assert edited.loc[2, "graded"]  # the column is graded, so the user's tie is too


def test_read_verdict_column_under_each_policy():
    column = ["A>>B", "A>B", "A=B", "B>A", "B>>A", "garbage", None]
    expect = {
        "weight": ([1, 1, 0.5, 0, 0], [3, 1, 1, 1, 3]),
        "probability": ([1, 0.75, 0.5, 0.25, 0], [1, 1, 1, 1, 1]),
        "collapse": ([1, 1, 0.5, 0, 0], [1, 1, 1, 1, 1]),
    }
    for policy, (p_first, weight) in expect.items():
        out = read_verdict_column(column, policy)
        assert list(out.columns) == ["verdict", "grade", "p_first", "weight", "known", "missing"]
        np.testing.assert_array_equal(out["p_first"].to_numpy()[:5], p_first)
        np.testing.assert_array_equal(out["weight"].to_numpy(), [*weight, 1, 1])
        assert out["p_first"].iloc[5:].isna().all()
        assert list(out["grade"].iloc[:5]) == [2, 1, 0, -1, -2]
        assert list(out["verdict"].iloc[:5]) == ["A", "A", "tie", "B", "B"]
        assert list(out["known"]) == [True] * 5 + [False, False]
        assert list(out["missing"]) == [False] * 6 + [True]


@pytest.mark.parametrize("policy", STRENGTH_POLICIES)
def test_plain_verdicts_are_certain_and_unweighted_under_every_policy(policy):
    out = read_verdict_column(pd.Series(["model_a", "model_b", "tie", "[[C]]", "1", "m"]), policy)
    np.testing.assert_array_equal(out["p_first"], [1, 0, 0.5, 0.5, 1, 1])
    np.testing.assert_array_equal(out["weight"], [1] * 6)
    assert out["grade"].isna().all()  # a plain verdict is not stored as a grade
    assert list(out["verdict"]) == ["A", "B", "tie", "tie", "A", "A"]


def test_stated_probabilities_win_over_the_policy():
    out = read_verdict_column([1.2, 1.8, 1.5, 2], "probability")
    np.testing.assert_allclose(out["p_first"], [0.8, 0.2, 0.5, 0.0])
    assert list(out["verdict"]) == ["A", "B", "tie", "B"]


def test_empty_column():
    out = read_verdict_column(pd.Series([], dtype=object))
    assert len(out) == 0 and "weight" in out.columns
    assert len(verdict_map([])) == 0


def test_a_large_column_is_read_once_per_distinct_value():
    column = pd.Series(np.tile(["A>>B", "A>B", "A=B", "B>A", "B>>A"], 40_000))
    out = read_verdict_column(column, "weight")
    assert len(out) == 200_000
    assert out["weight"].sum() == 40_000 * (3 + 1 + 1 + 1 + 3)


# --------------------------------------------------------------------------- policy


def test_policy_table():
    grades = [2, 1, 0, -1, -2, None, np.nan]
    p, w = apply_strength(grades, "weight")
    np.testing.assert_array_equal(p[:5], [1, 1, 0.5, 0, 0])
    np.testing.assert_array_equal(w, [3, 1, 1, 1, 3, 1, 1])
    assert np.isnan(p[5:]).all()
    p, w = apply_strength(grades, "probability")
    np.testing.assert_array_equal(p[:5], [1, 0.75, 0.5, 0.25, 0])
    np.testing.assert_array_equal(w, [1] * 7)
    p, w = apply_strength(grades, "collapse")
    np.testing.assert_array_equal(p[:5], [1, 1, 0.5, 0, 0])
    np.testing.assert_array_equal(w, [1] * 7)
    p, w = apply_strength(np.array([2.0, -2.0]), "weight", strong_weight=5)
    np.testing.assert_array_equal(w, [5, 5])
    p, w = apply_strength([2, 1], "probability", graded=[False, True])
    np.testing.assert_array_equal(p, [1, 0.75])
    assert ARENA_HARD_STRONG_WEIGHT == 3


def test_weight_policy_equals_arena_hard_repeated_battles():
    # arena-hard-auto show_result.py: a game's label becomes a list of scores for the
    # first-shown model, a strong label repeated weight=3 times, then every score is one
    # battle. The weighted mean of p_first must equal the mean over those battles.
    repeat = {"A>>B": [1.0] * 3, "A>B": [1.0], "A=B": [0.5], "B>A": [0.0], "B>>A": [0.0] * 3}
    rng = np.random.default_rng(7)
    labels = rng.choice(list(repeat), size=500, p=[0.15, 0.3, 0.2, 0.2, 0.15])
    battles = [s for label in labels for s in repeat[label]]
    out = read_verdict_column(labels, "weight")
    weighted = np.sum(out["p_first"] * out["weight"]) / np.sum(out["weight"])
    assert weighted == pytest.approx(np.mean(battles), abs=1e-12)
    assert out["weight"].sum() == len(battles)  # the same number of battles, as weight
    assert len(out) == len(labels)  # but one row per game


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"grades": [1], "policy": "strong"}, "unknown strength policy"),
        ({"grades": [3], "policy": "weight"}, "grade 3 is not"),
        ({"grades": [0.5], "policy": "weight"}, "grade 0.5 is not"),
        ({"grades": [1], "policy": "weight", "strong_weight": 0}, "strong_weight"),
        ({"grades": [1], "policy": "weight", "strong_weight": float("inf")}, "strong_weight"),
    ],
)
def test_policy_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        apply_strength(**kwargs)
