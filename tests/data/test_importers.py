"""Importers of published judge outputs: hand-made files for the rules (presentation order,
ties, re-runs, unparsed answers), then the real files with every count asserted, unparsed
answers included.

The real-file tests read data.paths.data_dirs()[0] (JUDGESCOPE_DATA, default ../shared/data)
and run whenever the files are there.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from data.benchmarks import load_benchmark, summeval
from data.parsing import parse_choice_letter
from data.schema import HUMAN_JUDGE_PREFIX, DataError
from tests.data._benchmark_files import DATA, go_offline, need


@pytest.fixture(autouse=True)
def _no_network(monkeypatch, tmp_path_factory):
    go_offline(monkeypatch, tmp_path_factory)


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- hand-made files


def test_pairwise_order_ties_and_unparsed(tmp_path):
    base = "summeval_llm_eval/comp_res/gpt-3.5-turbo-0301/"
    answers = ["A", "B: Summary #2 is more coherent.", "C", "I cannot decide."]
    files = {}
    for name in ("M1-M2_coherence.result", "M1-M2_coherence_toggle.result"):
        rows = [{"id": f"d{k}", "resp": a} for k, a in enumerate(answers)]
        files[base + name] = _write_jsonl(tmp_path / name, rows)
    cmp = summeval.import_pairwise(files)
    assert len(cmp) == 8
    assert set(cmp.judge) == {"gpt-3.5-turbo-0301/ab-choice"}
    plain, toggle = cmp.iloc[:4], cmp.iloc[4:]
    # Without _toggle Summary #1 (shown first) is model_1; with _toggle it is model_2.
    assert set(zip(plain.first_id, plain.second_id, strict=True)) == {("M1", "M2")}
    assert set(zip(toggle.first_id, toggle.second_id, strict=True)) == {("M2", "M1")}
    assert plain.verdict.tolist()[:3] == ["A", "B", "tie"]
    assert plain.p_first.tolist()[:3] == [1.0, 0.0, 0.5]
    # The refusal stays unparsed: NaN, no verdict, raw text kept.
    assert np.isnan(plain.p_first.iloc[3]) and plain.verdict.isna().iloc[3]
    assert plain.raw.iloc[3] == "I cannot decide."
    assert cmp.p_first.isna().sum() == 2
    assert (cmp["sample"] == 0).all() and cmp.attribute.eq("coherence").all()


def test_absolute_methods_reruns_and_skipped_files(tmp_path):
    base = "summeval_llm_eval/eval_model_generations/"
    files = {
        base + "gpt-4-0314/eval_M8_generations/coherence_rts.txt": _write_jsonl(
            tmp_path / "a" / "coherence_rts.txt",
            [
                {"id": "d1", "resp": "The summary is clear, but misses a point. Final score: 4."},
                {"id": "d2", "resp": "It flows well; scoring a three out of five."},
                {"id": "d3", "resp": "No score here."},
            ],
        ),
        base + "gpt-3.5-turbo-0301/eval_M9_generations/fluency_mcq.txt": _write_jsonl(
            tmp_path / "b" / "fluency_mcq.txt",
            [{"id": "d1", "resp": "B"}, {"id": "d2", "resp": "E"}, {"id": "d1", "resp": "D"}],
        ),
        base + "gpt-3.5-turbo-0301/eval_M9_generations/relevance_stareval.txt": _write_jsonl(
            tmp_path / "c" / "relevance_stareval.txt",
            [
                {"id": "d1", "resp": "Four stars. It covers 2 of the 3 main points."},
                {"id": "d2", "resp": "2 stars"},
            ],
        ),
        # Older runs and the empty file are not imported even when present.
        base + "gpt-4-0314/eval_M17_generations/fluency_mcq_old.txt": _write_jsonl(
            tmp_path / "d" / "fluency_mcq_old.txt", [{"id": "d1", "resp": "A"}]
        ),
    }
    r = summeval.import_absolute(files)
    got = {
        (j, c, a, d): (s, raw)
        for j, c, a, d, s, raw in r[
            ["judge", "candidate_id", "attribute", "context_id", "score", "raw"]
        ].itertuples(index=False)
    }
    assert len(r) == 3 + 2 + 2
    assert got[("gpt-4-0314/rts", "M8", "coherence", "d1")][0] == 4.0
    assert got[("gpt-4-0314/rts", "M8", "coherence", "d2")][0] == 3.0
    s, raw = got[("gpt-4-0314/rts", "M8", "coherence", "d3")]
    assert np.isnan(s) and raw == "No score here."
    # A re-run appended to the file replaces the earlier answer: d1 is "D" = 4, not "B".
    assert got[("gpt-3.5-turbo-0301/mcq", "M9", "fluency", "d1")] == (4.0, "D")
    assert got[("gpt-3.5-turbo-0301/mcq", "M9", "fluency", "d2")][0] == 5.0
    assert got[("gpt-3.5-turbo-0301/stareval", "M9", "relevance", "d1")][0] == 4.0
    assert got[("gpt-3.5-turbo-0301/stareval", "M9", "relevance", "d2")][0] == 2.0
    assert set(r.prompt_id) == {"rts", "mcq", "stareval"}


def test_reason_then_score_reads_the_score_not_other_numbers(tmp_path):
    rel = "summeval_llm_eval/eval_model_generations/llama-2-7b-chat-hf/eval_M8_generations/relevance_rts.txt"
    answers = [
        "Relevance Score: 5/5\nIt leaves out 2 of the key points.",
        "It is a 4 out of 5. The summary is fluent and reads well.",
        "Written after the 6-1 victory and clear throughout. Final score: 4.",
        "It says nothing about the 2016 remake.",
    ]
    path = _write_jsonl(
        tmp_path / "relevance_rts.txt", [{"id": f"d{k}", "resp": a} for k, a in enumerate(answers)]
    )
    r = summeval.import_absolute({rel: path}).set_index("context_id")
    assert r.loc[["d0", "d1", "d2"], "score"].tolist() == [5.0, 4.0, 4.0]
    assert np.isnan(r.loc["d3", "score"]) and r.loc["d3", "raw"] == answers[3]


def test_absolute_rejects_an_unknown_method(tmp_path):
    rel = "summeval_llm_eval/eval_model_generations/gpt-4-0314/eval_M8_generations/coherence_vibes.txt"
    path = _write_jsonl(tmp_path / "coherence_vibes.txt", [{"id": "d1", "resp": "5"}])
    with pytest.raises(DataError, match=r"coherence_vibes\.txt: unexpected file"):
        summeval.import_absolute({rel: path})


# ----------------------------------------------------------------------------- SummEval, real


@need("summeval")
def test_summeval_pairwise_real_counts_both_orders():
    cmp = load_benchmark("summeval", data_dir=DATA).comparisons
    assert len(cmp) == 8800
    assert set(cmp.judge) == {"gpt-3.5-turbo-0301/ab-choice"}
    # First characters B 4,279 / A 4,214 / C 307; every answer parses (0 unparsed).
    assert cmp.verdict.value_counts().to_dict() == {"B": 4279, "A": 4214, "tie": 307}
    assert cmp.p_first.isna().sum() == 0
    first_char = cmp.raw.str[0].map({"A": "A", "B": "B", "C": "tie"})
    assert (first_char == cmp.verdict).all()
    assert (cmp.raw.str.len() > 1).sum() == 996  # sentence answers ("B: Summary #2 is ...")
    # 11 adjacent pairs x 4 attributes x 100 documents, each shown in both orders.
    lo = np.minimum(cmp.first_id.to_numpy(dtype=object), cmp.second_id.to_numpy(dtype=object))
    hi = np.maximum(cmp.first_id.to_numpy(dtype=object), cmp.second_id.to_numpy(dtype=object))
    per = cmp.assign(lo=lo, hi=hi).groupby(["context_id", "attribute", "lo", "hi"]).size()
    assert len(per) == 4400 and per.eq(2).all()
    assert cmp.groupby(["context_id", "attribute", "first_id", "second_id"]).size().eq(1).all()


@need("summeval")
def test_summeval_pairwise_keeps_which_candidate_was_first():
    cmp = load_benchmark("summeval", data_dir=DATA).comparisons
    folder = DATA / "summeval_llm_eval/comp_res/gpt-3.5-turbo-0301"
    for name, first, second in (
        ("M22-M23_coherence.result", "M22", "M23"),
        ("M22-M23_coherence_toggle.result", "M23", "M22"),
    ):
        rows = [
            json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines()
        ]
        sub = cmp[
            (cmp.attribute == "coherence") & (cmp.first_id == first) & (cmp.second_id == second)
        ]
        assert sub.set_index("context_id")["raw"].to_dict() == {r["id"]: r["resp"] for r in rows}


@need("summeval")
def test_summeval_absolute_real_counts():
    r = load_benchmark("summeval", data_dir=DATA).ratings
    assert len(r) == 43200
    per_judge = r.groupby("judge").size().to_dict()
    assert per_judge == {
        "gpt-3.5-turbo-0301/altmcq": 4800,
        "gpt-3.5-turbo-0301/altrts": 4800,
        "gpt-3.5-turbo-0301/mcq": 4800,
        "gpt-3.5-turbo-0301/rts": 4800,
        "gpt-3.5-turbo-0301/stareval": 4800,
        "gpt-4-0314/rts": 4800,
        "llama-2-13b-chat-hf/rts": 4800,
        "llama-2-70b-chat-hf/rts": 4800,
        "llama-2-7b-chat-hf/rts": 4800,
    }
    # One (context, candidate, attribute) per judge after deduplicating re-runs.
    assert r.groupby(["judge", "context_id", "candidate_id", "attribute"]).size().eq(1).all()
    assert r.candidate_id.nunique() == 12 and set(r["sample"]) == {0}
    # One answer is left unparsed, raw kept: a GPT-4 reason that names no score, only a year.
    unparsed = r[r.score.isna()]
    assert len(unparsed) == 1 and unparsed.judge.iloc[0] == "gpt-4-0314/rts"
    assert unparsed.raw.iloc[0].startswith(
        'The summary incorrectly states that the original "Roots"'
    )
    # Known limit of the "keyed" rule: with no score keyword it falls back to the last number
    # on the scale, so one Llama-2 answer ("a 4 out of 5 ... pay back $2.6 million") reads 2.6.
    off_grid = r[r.score.notna() & ~r.score.isin([1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0])]
    assert off_grid.score.tolist() == [2.6] and "$2.6 million" in off_grid.raw.iloc[0]
    mcq = r[r.prompt_id == "mcq"]
    letters = mcq.raw.map(lambda t: parse_choice_letter(t).value)
    assert (letters.astype(float) == mcq.score).all()


@need("summeval")
def test_summeval_absolute_reruns_keep_the_last_answer():
    r = load_benchmark("summeval", data_dir=DATA).ratings
    path = (
        DATA
        / "summeval_llm_eval/eval_model_generations/gpt-3.5-turbo-0301/eval_M8_generations/consistency_mcq.txt"
    )
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert len(lines) == 200
    last = {row["id"]: row["resp"] for row in lines}
    first = {}
    for row in lines:
        first.setdefault(row["id"], row["resp"])
    sub = r[
        (r.judge == "gpt-3.5-turbo-0301/mcq")
        & (r.candidate_id == "M8")
        & (r.attribute == "consistency")
    ]
    assert len(sub) == 100
    assert sub.set_index("context_id")["raw"].to_dict() == last
    assert any(first[k] != last[k] for k in last)  # the re-run did change some answers


@need("summeval_annotators")
def test_summeval_annotators_carries_the_judges():
    ds = load_benchmark("summeval_annotators", data_dir=DATA)
    assert len(ds.comparisons) == 8800 and len(ds.ratings) == 43200
    assert set(ds.comparisons.first_id) <= set(ds.candidates.candidate_id)


# ----------------------------------------------------------------------------- others, real


@need("topicalchat")
def test_topicalchat_gpt35_samples():
    r = load_benchmark("topicalchat", data_dir=DATA).ratings
    assert set(r.judge) == {"gpt-3.5-turbo/geval"} and set(r.prompt_id) == {"geval"}
    items = r.groupby("attribute").apply(
        lambda g: g.groupby(["context_id", "candidate_id"]).ngroups
    )
    assert items.to_dict() == {
        "coherence": 359,
        "engagingness": 356,
        "groundedness": 357,
        "naturalness": 358,
    }
    assert len(r) == (359 + 356 + 357 + 358) * 20
    assert (
        r.groupby(["attribute", "context_id", "candidate_id"])["sample"]
        .apply(lambda s: sorted(s) == list(range(20)))
        .all()
    )
    unparsed = r[r.score.isna()]
    assert len(unparsed) == 9 and set(unparsed.attribute) == {"groundedness"}
    assert "N/A" in set(unparsed.raw)
    by_raw = r.drop_duplicates("raw").set_index("raw")["score"]
    assert by_raw["1. Engagingness: 2"] == 2.0
    assert by_raw["- Groundedness: 0"] == 0.0
    assert by_raw["2.5"] == 2.5
    ok = r.dropna(subset=["score"])
    lo = ok.attribute.map({"coherence": 1, "engagingness": 1, "naturalness": 1, "groundedness": 0})
    hi = ok.attribute.map({"coherence": 3, "engagingness": 3, "naturalness": 3, "groundedness": 1})
    assert ((ok.score >= lo) & (ok.score <= hi)).all()


@need("pandalm")
def test_pandalm_judge_verdicts():
    cmp = load_benchmark("pandalm", data_dir=DATA).comparisons
    assert len(cmp) == 999 * 5
    gpt = cmp[cmp.judge == "gpt-3.5-turbo"]
    assert gpt.verdict.value_counts(dropna=False).to_dict() == {
        "B": 476,
        "A": 460,
        "tie": 38,
        np.nan: 25,
    }
    garbage = gpt[gpt.p_first.isna()]
    assert len(garbage) == 25 and set(garbage.raw) == {"garbage"}
    panda = cmp[cmp.judge == "pandalm-7b"]
    assert panda.verdict.value_counts().to_dict() == {"B": 459, "A": 433, "tie": 107}
    assert panda.p_first.value_counts().to_dict() == {0.0: 459, 1.0: 433, 0.5: 107}
    assert panda.raw.iloc[0].startswith("2\nResponse 2 is better because")
    humans = cmp[cmp.judge.str.startswith(HUMAN_JUDGE_PREFIX)]
    patterns = Counter(
        tuple(g)
        for g in humans.sort_values("judge")
        .groupby(["context_id", "first_id", "second_id"])["verdict"]
        .apply(tuple)
    )
    assert patterns[("B", "B", "B")] == 426 and patterns[("A", "A", "A")] == 368
    assert patterns[("tie", "tie", "tie")] == 85
    # Every judge saw response1 first: the LLM judges compare the same ordered pairs as humans.
    keys = ["context_id", "first_id", "second_id"]
    assert set(map(tuple, gpt[keys].to_numpy())) == set(map(tuple, humans[keys].to_numpy()))


@need("llmfao")
def test_llmfao_votes_are_human_comparisons():
    cmp = load_benchmark("llmfao", data_dir=DATA).comparisons
    assert cmp.judge.str.startswith(HUMAN_JUDGE_PREFIX).all()
    assert cmp.raw.value_counts().to_dict() == {"tie": 3471, "left": 2911, "right": 2549}
    assert (cmp.raw.map({"left": "A", "right": "B", "tie": "tie"}) == cmp.verdict).all()
