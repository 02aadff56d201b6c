"""HANNA's 72 automatic measures loaded as judges (prompt_id "automatic"), checked against
the published CSV."""

from __future__ import annotations

import ast
import csv
import sys

import numpy as np
import pytest

from data import load_benchmark
from data.benchmarks.hanna import CSV, measure_name
from data.schema import AUTOMATIC, is_automatic
from tests.data._benchmark_files import DATA, need

pytestmark = need("hanna")


@pytest.fixture(scope="module")
def hanna():
    return load_benchmark("hanna")


@pytest.fixture(scope="module")
def published():
    csv.field_size_limit(sys.maxsize)
    with open(DATA / CSV, encoding="utf-8", newline="") as f:
        return {row["Model"]: row for row in csv.DictReader(f)}


def test_measure_names():
    assert measure_name("BLEU Ξ§") == "BLEU"
    assert measure_name("ROUGE-1 F-Score Ξ§") == "ROUGE-1 F-Score"
    assert measure_name("BaryScore-SD-0.5 Ξε") == "BaryScore-SD-0.5"
    assert measure_name("BARTScore-SH ΞΔ") == "BARTScore-SH"
    assert measure_name("Text length ¤§") == "Text length"
    assert is_automatic(AUTOMATIC) and not is_automatic("eval_prompt_1")
    assert not is_automatic(None)


def test_72_measures_on_every_story_and_criterion(hanna):
    r = hanna.ratings
    auto = r[r["prompt_id"] == AUTOMATIC]
    judges = set(auto["judge"])
    assert len(judges) == 72
    assert {
        "BLEU",
        "ROUGE-1 F-Score",
        "METEOR",
        "chrF",
        "BERTScore F1",
        "MoverScore",
        "BaryScore-W",
        "S3-Pyramid",
        "SummaQA",
        "InfoLM-FisherRao",
        "BARTScore-SH",
        "SUPERT-Golden",
        "BLANC-Golden",
        "Text length",
        "BARTScore-SP",
    } <= judges
    assert not any(ord(ch) > 127 for j in judges for ch in j)  # no symbol suffix left
    assert len(auto) == 72 * 6 * 1056
    assert set(auto["sample"]) == {0} and (auto["raw"] == "").all()
    assert auto["score"].notna().all()
    # the same value under each of the six criteria
    wide = auto.pivot_table(
        index=["context_id", "candidate_id", "judge"], columns="attribute", values="score"
    )
    assert wide.shape == (1056 * 72, 6)
    assert (wide.max(axis=1) == wide.min(axis=1)).all()
    # the LLM judges are unchanged beside them
    assert len(r) - len(auto) == 5 * 4 * 6 * 1056
    assert sorted(hanna.attributes) == sorted(hanna.scales)


def test_values_match_the_csv(hanna, published):
    r = hanna.ratings
    sh = r[(r["judge"] == "BARTScore-SH") & (r["attribute"] == "coherence")]
    sh = sh.set_index(["context_id", "candidate_id"])["score"]
    # one story pinned: prompt 0, system GPT-2
    assert sh[("P0", "GPT-2")] == -3.9939868450164795
    for system, row in published.items():
        for column, judge in (
            ("BARTScore-SH ΞΔ", "BARTScore-SH"),
            ("Text length ¤§", "Text length"),
        ):
            want = np.array(ast.literal_eval(row[column]), dtype=float)
            got = r[
                (r["judge"] == judge)
                & (r["candidate_id"] == system)
                & (r["attribute"] == "relevance")
            ]
            got = got.set_index("context_id")["score"]
            np.testing.assert_array_equal(got[[f"P{i}" for i in range(96)]].to_numpy(), want)
    # the human story is the reference of the reference-based measures
    human = r[(r["candidate_id"] == "Human") & (r["judge"] == "BLEU")]
    assert (human["score"] == 100).all()
