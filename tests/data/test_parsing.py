"""Tests for data.parsing: hand-written cases for every rule, then real judge outputs.

The real-output tests read ../shared/data (via data.paths.data_dirs()) and assert exact
counts of parsed values and failures; they run whenever the data folder is present.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path

import pytest

from data.parsing import (
    NUMBERED_ALIASES,
    Parsed,
    ParseReport,
    expected_score,
    parse_choice_letter,
    parse_likert,
    parse_verdict,
    reason_code,
    sample_verdicts_to_p,
    summarise_failures,
)
from data.paths import data_dirs

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


# --------------------------------------------------------------------------- real outputs


def _find(rel: str) -> Path | None:
    for d in data_dirs():
        if (d / rel).exists():
            return d / rel
    return None


def _need(rel: str) -> Path:
    path = _find(rel)
    if path is None:
        pytest.skip(f"{rel} not found in {data_dirs()} (set JUDGESCOPE_DATA)")
    return path


def _jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_summeval_chatgpt_pairwise_abc_all_parse():
    # 88 files x 100 verdicts; ChatGPT answered "A"/"B"/"C" or a full option line.
    root = _need("summeval_llm_eval/comp_res")
    files = sorted(root.glob("*/*.result"))
    assert len(files) == 88
    answers = [row["resp"] for f in files for row in _jsonl(f)]
    parsed = [parse_verdict(a, tie_labels=("C",), aliases=NUMBERED_ALIASES) for a in answers]
    assert len(parsed) == 8800
    assert summarise_failures(parsed) == {}  # 0 failures
    assert Counter(p.value for p in parsed) == {"B": 4279, "A": 4214, "tie": 307}
    # every answer starts with its option letter; the parse must agree with it one by one
    first = [{"A": "A", "B": "B", "C": "tie"}[a.strip()[0]] for a in answers]
    assert [p.value for p in parsed] == first
    # the same answers without aliases still parse (the leading letter decides)
    assert summarise_failures(parse_verdict(a, tie_labels=("C",)) for a in answers) == {}


# (judge, method, rule) -> (n answers, failures by reason, mean of the parsed scores)
# Lines are counted as stored (the re-run ChatGPT mcq files hold duplicated ids).
SUMMEVAL_ABSOLUTE = {
    ("gpt-3.5-turbo-0301", "rts", "chiang_lee"): (4800, {"out-of-scale": 71}, 3.208),
    ("gpt-3.5-turbo-0301", "rts", "strict"): (4800, {}, 3.2096),
    ("gpt-3.5-turbo-0301", "rts", "keyed"): (4800, {}, 3.2098),
    ("gpt-3.5-turbo-0301", "altrts", "chiang_lee"): (4800, {"out-of-scale": 106}, 2.9193),
    ("gpt-3.5-turbo-0301", "altrts", "strict"): (4800, {}, 2.9391),
    ("gpt-3.5-turbo-0301", "altrts", "keyed"): (4800, {}, 2.9391),
    ("gpt-3.5-turbo-0301", "mcq", "letter"): (5100, {}, 4.0822),
    ("gpt-3.5-turbo-0301", "altmcq", "letter"): (4812, {}, 4.1027),
    ("gpt-3.5-turbo-0301", "stareval", "chiang_lee"): (4800, {}, 3.6231),
    ("gpt-3.5-turbo-0301", "stareval", "strict"): (4800, {}, 3.6149),
    ("gpt-3.5-turbo-0301", "stareval", "keyed"): (4800, {}, 3.6151),
    ("gpt-4-0314", "rts", "chiang_lee"): (4800, {"out-of-scale": 297}, 4.461),
    ("gpt-4-0314", "rts", "strict"): (4800, {"out-of-scale": 1}, 4.4919),
    ("gpt-4-0314", "rts", "keyed"): (4800, {"out-of-scale": 1}, 4.4919),
    ("llama-2-13b-chat-hf", "rts", "chiang_lee"): (4800, {"out-of-scale": 278}, 3.4448),
    ("llama-2-13b-chat-hf", "rts", "strict"): (4800, {}, 3.4771),
    ("llama-2-13b-chat-hf", "rts", "keyed"): (4800, {}, 3.4674),
    ("llama-2-70b-chat-hf", "rts", "chiang_lee"): (4800, {"out-of-scale": 141}, 3.614),
    ("llama-2-70b-chat-hf", "rts", "strict"): (4800, {}, 3.6264),
    ("llama-2-70b-chat-hf", "rts", "keyed"): (4800, {}, 3.6285),
    ("llama-2-7b-chat-hf", "rts", "chiang_lee"): (4800, {"out-of-scale": 191}, 4.6916),
    ("llama-2-7b-chat-hf", "rts", "strict"): (4800, {}, 4.6817),
    ("llama-2-7b-chat-hf", "rts", "keyed"): (4800, {}, 4.6929),
}


@pytest.mark.parametrize(("judge", "method", "rule"), list(SUMMEVAL_ABSOLUTE))
def test_summeval_absolute_generations(judge, method, rule):
    root = _need(f"summeval_llm_eval/eval_model_generations/{judge}")
    files = sorted(root.glob(f"eval_M*_generations/*_{method}.txt"))
    answers = [row["resp"] for f in files for row in _jsonl(f)]
    if rule == "letter":
        parsed = [parse_choice_letter(a) for a in answers]
    else:
        parsed = [parse_likert(a, scale=(1, 5), rule=rule) for a in answers]
    n, failures, mean = SUMMEVAL_ABSOLUTE[(judge, method, rule)]
    assert len(parsed) == n
    assert summarise_failures(parsed) == failures
    values = [p.value for p in parsed if p.ok]
    assert all(1 <= v <= 5 for v in values)
    assert round(sum(values) / len(values), 4) == mean


def test_summeval_rts_failures_are_genuinely_unparseable():
    # chiang_lee stops at the first number, which in reason-then-score answers is often a
    # number from the article ("Boeing 747", "6-1 victory"): out of scale, not a score.
    root = _need("summeval_llm_eval/eval_model_generations/gpt-3.5-turbo-0301")
    answers = [
        r["resp"] for f in sorted(root.glob("eval_M*_generations/*_rts.txt")) for r in _jsonl(f)
    ]
    failed = [a for a in answers if not parse_likert(a).ok]
    assert len(failed) == 71
    for a in failed:
        # each of them has its score later on, which strict and keyed find
        assert parse_likert(a, rule="strict").ok and parse_likert(a, rule="keyed").ok
    # the one GPT-4 answer strict cannot read names no score at all, only a year
    root4 = _need("summeval_llm_eval/eval_model_generations/gpt-4-0314")
    answers4 = [
        r["resp"] for f in sorted(root4.glob("eval_M*_generations/*_rts.txt")) for r in _jsonl(f)
    ]
    (bad,) = [a for a in answers4 if not parse_likert(a, rule="strict").ok]
    assert "2016" in bad and "score" not in bad.lower()


# dim -> (scale, rule) -> (failures, value counts)
TOPICAL_CHAT = {
    ("coh", (1, 3), "chiang_lee"): ({}, {1.0: 452, 1.3: 1, 2.0: 2824, 3.0: 3903}),
    ("coh", (1, 3), "strict"): ({}, {1.0: 452, 1.3: 1, 2.0: 2824, 3.0: 3903}),
    ("eng", (1, 3), "chiang_lee"): (
        {},
        {1.0: 942, 1.5: 1, 2.0: 5023, 2.3: 1, 2.5: 39, 3.0: 1114},
    ),
    ("eng", (1, 3), "strict"): ({}, {1.0: 922, 1.5: 1, 2.0: 5039, 2.3: 1, 2.5: 39, 3.0: 1118}),
    ("nat", (1, 3), "chiang_lee"): ({}, {1.0: 604, 2.0: 5083, 2.2: 1, 2.5: 7, 3.0: 1465}),
    ("nat", (1, 3), "strict"): ({}, {1.0: 598, 2.0: 5086, 2.2: 1, 2.5: 7, 3.0: 1468}),
    ("gro", (0, 1), "chiang_lee"): (
        {"out-of-scale": 14, "no-number": 4},
        {0.0: 2721, 0.5: 40, 0.75: 2, 0.8: 1, 0.9: 4, 1.0: 4354},
    ),
    ("gro", (0, 1), "strict"): (
        {"out-of-scale": 5, "no-number": 4},
        {0.0: 2730, 0.5: 40, 0.75: 2, 0.8: 1, 0.9: 4, 1.0: 4354},
    ),
}


@pytest.mark.parametrize(("dim", "scale", "rule"), list(TOPICAL_CHAT))
def test_topicalchat_gpt35_samples(dim, scale, rule):
    path = _need(f"topicalchat_usr/results/topical_chat/gpt3.5_{dim}_geval.json")
    with open(path, encoding="utf-8") as fh:
        items = json.load(fh)
    answers = [a for item in items for a in item["all_responses"]]
    parsed = [parse_likert(a, scale=scale, rule=rule) for a in answers]
    failures, values = TOPICAL_CHAT[(dim, scale, rule)]
    assert len(parsed) == 20 * len(items)
    assert summarise_failures(parsed) == failures
    assert Counter(p.value for p in parsed if p.ok) == values


def test_topicalchat_answer_shapes():
    # The answer shapes named in PROVENANCE.md, as they occur in the files.
    assert parse_likert("2.5", scale=(1, 3)).value == 2.5
    assert parse_likert("- Engagingness: 1", scale=(1, 3)).value == 1.0
    assert parse_likert("Coherence: 3", scale=(1, 3)).value == 3.0
    assert parse_likert("Engagingness:\n2", scale=(1, 3)).value == 2.0
    assert parse_likert("Response: \n\n3", scale=(1, 3)).value == 3.0
    assert parse_likert("1 (dull)", scale=(1, 3)).value == 1.0
    # the groundedness failures echo the fact (years, percentages) or say "N/A"
    path = _need("topicalchat_usr/results/topical_chat/gpt3.5_gro_geval.json")
    with open(path, encoding="utf-8") as fh:
        answers = [a for item in json.load(fh) for a in item["all_responses"]]
    failed = [a for a in answers if not parse_likert(a, scale=(0, 1), rule="strict").ok]
    assert len(failed) == 9
    assert sum(a.startswith(("Fact:", "Conversation History:")) for a in failed) == 7
    assert sorted(a for a in failed if not a.startswith(("Fact:", "Conversation"))) == ["3", "N/A"]


def test_pandalm_gpt35_verdicts():
    path = _need("pandalm_testset/data/gpt-3.5-turbo-testset-v1.json")
    with open(path, encoding="utf-8") as fh:
        rows = json.load(fh)
    answers = [r["gpt_result"] for r in rows]
    parsed = [parse_verdict(a, labels=("1", "2"), tie_labels=("Tie",)) for a in answers]
    assert Counter(p.value for p in parsed) == {"B": 476, "A": 460, "tie": 38, None: 25}
    assert summarise_failures(parsed) == {"no-label": 25}
    assert {a for a, p in zip(answers, parsed, strict=True) if not p.ok} == {"garbage"}
    # the numbered aliases read the same answers the same way
    aliased = [parse_verdict(a, aliases=NUMBERED_ALIASES) for a in answers]
    assert [p.value for p in aliased] == [p.value for p in parsed]


def test_real_data_is_found_when_present():
    # Guards against the tests above skipping silently when the shared data is there.
    shared = Path(__file__).resolve().parents[3] / "shared" / "data"
    if shared.exists() and not os.environ.get("JUDGESCOPE_DATA"):
        assert _find("summeval_llm_eval/comp_res") is not None
