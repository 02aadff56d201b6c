"""data.parsing.verdicts: hand-written cases for every verdict and choice-letter rule."""

from __future__ import annotations

import pytest

from data.parsing import NUMBERED_ALIASES, Parsed, parse_choice_letter, parse_verdict, reason_code

# --------------------------------------------------------------------------- verdicts

ABC = {"tie_labels": ("C",), "aliases": NUMBERED_ALIASES}


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        ("A", {}, "A"),
        (" B", {}, "B"),
        ("A.", {}, "A"),
        ("B\n", {}, "B"),
        ("(B)", {}, "B"),
        ("[A]", {}, "A"),
        ("Summary A", {}, "A"),
        (" A", {}, "A"),  # FlanT5 primed with "Summary" answers " A"
        ("Option B.", {}, "B"),
        ("Answer: **B**", {}, "B"),
        ("The answer is A", {}, "A"),
        ("Summary A provides more detail", {}, "A"),
        ("B is better.", {}, "B"),
        ("Summary #2", {"aliases": NUMBERED_ALIASES}, "B"),
        ("Summary #1 is more consistent.", {"aliases": NUMBERED_ALIASES}, "A"),
        ("B: Summary #2 is more coherent.", {}, "B"),
        ("B: Summary #2 is more coherent.", ABC, "B"),
        ("A: Summary #1 is more consistent.", ABC, "A"),
        ("C: Both Summary #1 and Summary #2 are equally consistent.", ABC, "tie"),
        ("C", ABC, "tie"),
        ("Response 1", {"aliases": NUMBERED_ALIASES}, "A"),
        ("Response 2 is better.", {"labels": ("Response 1", "Response 2")}, "B"),
        ("Tie", {}, "tie"),
        ("tie.", {}, "tie"),
        ("It's a draw", {}, "tie"),
        ("Both summaries are equally coherent.", {}, "tie"),
        ("Summary B is more coherent than Summary A.", {}, "B"),
        ("Summary #2 is more fluent than Summary #1", {"aliases": NUMBERED_ALIASES}, "B"),
        ("I prefer Summary B over Summary A.", {}, "B"),
        ("A good summary is hard to find. I prefer B.", {}, "B"),
        ("2", {"labels": ("1", "2"), "tie_labels": ("Tie",)}, "B"),
        ("1", {"labels": ("1", "2"), "tie_labels": ("Tie",)}, "A"),
        ("Tie", {"labels": ("1", "2"), "tie_labels": ("Tie",)}, "tie"),
        (1, {"labels": ("1", "2")}, "A"),  # integer answers (PandaLM-7B stores 0/1/2)
        ("2", {"aliases": NUMBERED_ALIASES}, "B"),
    ],
)
def test_parse_verdict_reads_the_choice(text, kwargs, expected):
    assert parse_verdict(text, **kwargs) == Parsed(expected, None)


@pytest.mark.parametrize(
    ("text", "kwargs", "code"),
    [
        ("I'm sorry, but I cannot choose between these two summaries.", {}, "refusal"),
        ("As an AI language model, I am unable to determine which is better.", {}, "refusal"),
        ("I'm sorry, I can't compare Summary A and Summary B.", {}, "refusal"),
        ("Summary A or Summary B", {}, "ambiguous"),
        ("Summary A is worse than Summary B", {}, "ambiguous"),
        ("A or B?", {}, "ambiguous"),
        ("Which Summary is more coherent, Summary A or Summary B?", {}, "ambiguous"),
        ("garbage", {"labels": ("1", "2"), "tie_labels": ("Tie",)}, "no-label"),
        ("A summary should be concise.", {}, "no-label"),  # the article, not the label
        ("Summary #2", {}, "no-label"),  # numbered answers need aliases
        ("C", {}, "no-label"),  # "C" means nothing unless it is a tie label
        ("", {}, "empty"),
        ("   \n", {}, "empty"),
        (None, {}, "missing"),
        (float("nan"), {}, "missing"),
    ],
)
def test_parse_verdict_failures_have_reasons(text, kwargs, code):
    parsed = parse_verdict(text, **kwargs)
    assert parsed.value is None
    assert reason_code(parsed.reason) == code
    assert not parsed.ok


def test_parse_verdict_failure_reason_shows_the_answer():
    parsed = parse_verdict("Summary A or Summary B")
    assert parsed.reason.startswith("ambiguous: ")
    assert "Summary A or Summary B" in parsed.reason


def test_parse_verdict_bad_arguments():
    with pytest.raises(ValueError, match="exactly two labels"):
        parse_verdict("A", labels=("A", "B", "C"))
    with pytest.raises(ValueError, match="distinct"):
        parse_verdict("A", labels=("A", "A"))
    with pytest.raises(ValueError, match="non-empty"):
        parse_verdict("A", labels=("A", ""))
    with pytest.raises(ValueError, match="alias '#3'"):
        parse_verdict("A", aliases={"#3": "Z"})


def test_alias_may_map_to_a_label_word():
    parsed = parse_verdict("Summary #2", labels=("X", "Y"), aliases={"#2": "Y"})
    assert parsed == Parsed("B", None)


# --------------------------------------------------------------------------- letters


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("D", 4),
        ("(B)", 2),
        ("E: All sentences in the Summary are fluent. Score: Five.", 5),
        ("Answer: C", 3),
        ("A", 1),
    ],
)
def test_parse_choice_letter(text, expected):
    assert parse_choice_letter(text) == Parsed(expected, None)


def test_parse_choice_letter_failures():
    assert reason_code(parse_choice_letter("F").reason) == "no-label"
    assert reason_code(parse_choice_letter("A summary with no letter").reason) == "no-label"
    assert reason_code(parse_choice_letter("B or D").reason) == "ambiguous"
    assert parse_choice_letter("B", letters="AB") == Parsed(2, None)
    with pytest.raises(ValueError, match="at least two"):
        parse_choice_letter("A", letters="A")
