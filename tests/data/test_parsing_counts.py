"""data.parsing.counts and answers: aggregates of samples, failure counts and reports."""

from __future__ import annotations

import math

import pytest

from data.parsing import (
    Parsed,
    ParseReport,
    expected_score,
    parse_verdict,
    sample_verdicts_to_p,
    summarise_failures,
)

# --------------------------------------------------------------------------- aggregates


def test_sample_verdicts_to_p():
    assert sample_verdicts_to_p(["A", "A", "B", "tie"]) == (2.5 / 4, 4)
    assert sample_verdicts_to_p(["A", None, "B"]) == (0.5, 2)
    p, n = sample_verdicts_to_p([None, Parsed(None, "refusal: x")])
    assert math.isnan(p) and n == 0
    assert sample_verdicts_to_p([Parsed("B"), Parsed("B"), Parsed("A")]) == (1 / 3, 3)
    with pytest.raises(ValueError, match="'A', 'B', 'tie' or None"):
        sample_verdicts_to_p(["A", "C"])


def test_expected_score():
    assert expected_score({1: 0.2, 2: 0.3, 3: 0.5}) == pytest.approx(2.3)
    # renormalised over the score tokens
    assert expected_score({1: 0.1, 3: 0.1}) == pytest.approx(2.0)
    assert math.isnan(expected_score({1: 0.0, 2: 0.0}))
    with pytest.raises(ValueError, match="at least one"):
        expected_score({})
    with pytest.raises(ValueError, match=">= 0"):
        expected_score({1: -0.1, 2: 0.5})


def test_summarise_failures_and_report():
    answers = ["A", "B", "", "garbage", "Summary A or Summary B", "also garbage", None]
    parsed = [parse_verdict(a) for a in answers]
    assert summarise_failures(parsed) == {"no-label": 2, "empty": 1, "ambiguous": 1, "missing": 1}
    assert list(summarise_failures(parsed))[0] == "no-label"  # most frequent first
    report = ParseReport.from_parsed(parsed, raw=answers, n_examples=1)
    assert (report.n_total, report.n_parsed, report.n_failed) == (7, 2, 5)
    assert report.examples["no-label"] == ["garbage"]
    assert report.summary() == "2/7 parsed; no-label 2, empty 1, ambiguous 1, missing 1"
    assert report.parse_rate == pytest.approx(2 / 7)
    with pytest.raises(ValueError, match="raw has 1 answers"):
        ParseReport.from_parsed(parsed, raw=["A"])
