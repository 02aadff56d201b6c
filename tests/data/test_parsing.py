"""data.parsing on real judge outputs: exact counts of parsed values and failures.

These tests read ../shared/data (via data.paths.data_dirs()) and run whenever the data folder
is present; the hand-written cases of every rule are in test_parsing_verdicts.py,
test_parsing_likert.py and test_parsing_counts.py.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from data.parsing import (
    NUMBERED_ALIASES,
    parse_choice_letter,
    parse_likert,
    parse_verdict,
    summarise_failures,
)
from data.paths import data_dirs

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
    ("eng", (1, 3), "chiang_lee"): ({}, {1.0: 942, 1.5: 1, 2.0: 5023, 2.3: 1, 2.5: 39, 3.0: 1114}),
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
