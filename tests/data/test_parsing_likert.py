"""data.parsing.likert: hand-written cases for every Likert rule."""

from __future__ import annotations

import pytest

from data.parsing import Parsed, parse_likert, reason_code

# --------------------------------------------------------------------------- Likert


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        # chiang_lee: delete "1-5", "out of 5", "/5", then the first number, halves kept
        ("4", {}, 4.0),
        ("4.5", {}, 4.5),
        ("I would rate it 3 out of 5.", {}, 3.0),
        ("4/5", {}, 4.0),
        ("On a scale of 1-5: 2", {}, 2.0),
        ("4. The story is 3 times better", {}, 4.0),
        ("1. Engagingness: 2", {"scale": (1, 3)}, 1.0),  # faithful: the first number
        ("7/10", {"scale": (1, 10)}, 7.0),  # generalised to the scale's top
        ("1-10 scale, I say 8", {"scale": (1, 10)}, 8.0),
        ("0.5", {"scale": (0, 1)}, 0.5),
        ("- Groundedness: 0", {"scale": (0, 1)}, 0.0),
        ("Coherence: 3", {"scale": (1, 3)}, 3.0),
        ("2.5", {"scale": (1, 3)}, 2.5),
        # words
        ("one out of five", {}, 1.0),
        ("four", {}, 4.0),
        ("Four. The story is enjoyable.", {}, 4.0),
        ("Five stars. One of the best.", {}, 5.0),
        ("2 stars", {}, 2.0),
        ("I'd give it a four", {}, 4.0),
        ("The summary is one of the best, scoring a one out of five.", {}, 1.0),
        ("four and a half", {}, 4.5),
        # drop extra strings (adversarial titles)
        ("News title 2 keeps the meaning of title 1: 5", {"drop": ("title 1", "title 2")}, 5.0),
        ("News title 2 keeps the meaning of title 1: 5", {}, 2.0),
        # strict: the last number on the scale after deleting scale mentions
        ("1. Engagingness: 2", {"scale": (1, 3), "rule": "strict"}, 2.0),
        ("On a scale of 1 to 5, I'd give it a 4", {"rule": "strict"}, 4.0),
        ("In 2015 the story won; I rate it 4.", {"rule": "strict"}, 4.0),
        ("Score: 1.5/5.", {"rule": "strict"}, 1.5),
        ("Between 1 and 10 I'd say 7 out of 10", {"scale": (1, 10), "rule": "strict"}, 7.0),
        # first / last
        ("3, maybe 4", {"rule": "first"}, 3.0),
        ("3, maybe 4", {"rule": "last"}, 4.0),
        # keyed: the number after the last score keyword, else strict
        ("Final score: 4/5 (one point deducted for the error).", {"rule": "keyed"}, 4.0),
        ("Bayern won 2-1 in 2015; a score of 5 for consistency.", {"rule": "keyed"}, 5.0),
        ("The summary is fine. 3", {"rule": "keyed"}, 3.0),
    ],
)
def test_parse_likert_reads_the_score(text, kwargs, expected):
    parsed = parse_likert(text, **kwargs)
    assert parsed == Parsed(expected, None)


@pytest.mark.parametrize(
    ("text", "kwargs", "code"),
    [
        ("6", {}, "out-of-scale"),
        ("-1", {"scale": (0, 1)}, "out-of-scale"),
        ("rating 7", {}, "out-of-scale"),
        # chiang_lee does not skip to a later number
        ("The 2015 story gets 4", {}, "out-of-scale"),
        ("In 2016 it was shown.", {"rule": "strict"}, "out-of-scale"),
        ("The summary has four sentences", {}, "no-number"),
        ("N/A", {}, "no-number"),
        ("I'm sorry, but I cannot rate this story.", {}, "refusal"),
        ("", {}, "empty"),
        (None, {}, "missing"),
    ],
)
def test_parse_likert_failures_have_reasons(text, kwargs, code):
    parsed = parse_likert(text, **kwargs)
    assert parsed.value is None
    assert reason_code(parsed.reason) == code


def test_parse_likert_strict_differs_from_chiang_lee_on_preamble_numbers():
    text = "The 2015 campaign summary; I rate it 4"
    assert reason_code(parse_likert(text).reason) == "out-of-scale"
    assert parse_likert(text, rule="strict").value == 4.0


def test_parse_likert_bad_arguments():
    with pytest.raises(ValueError, match="rule must be one of"):
        parse_likert("3", rule="median")
    with pytest.raises(ValueError, match="lo < hi"):
        parse_likert("3", scale=(5, 1))
    with pytest.raises(ValueError, match="pair"):
        parse_likert("3", scale=(1,))
