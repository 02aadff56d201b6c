"""data.importers: the field's judgment files read as published, from small samples of each
format (tests/data/published, see its README for where each shape comes from), through the
importers and through the Data page's reader (data.io.read_upload_result): graded verdicts
become grades, p_first and weights, both games keep their presentation order, texts are kept,
the baseline is named, and malformed records are refused naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from data.importers import (
    FORMATS,
    ImportOptions,
    detect_format,
    load_published,
    read_published,
)
from data.io import read_upload, read_upload_result
from data.schema import DataError

HERE = Path(__file__).parent / "published"
AH = HERE / "arena-hard-v0.1"
AH_JUDGE = AH / "model_judgment" / "gpt-4-1106-preview"
MT = HERE / "mt_bench"
AE = HERE / "alpaca_eval"
BASELINE = "gpt-4-0314"


def _files(*paths: Path, root: Path = HERE) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in paths}


def _records(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _companions(root: Path) -> dict[str, bytes]:
    return _files(
        root / "question.jsonl", *sorted((root / "model_answer").glob("*.jsonl")), root=root
    )


# ----------------------------------------------------------------------------- detection


def test_each_format_is_detected_and_companions_are_not_judgments():
    assert (
        detect_format("gpt-4-0613.jsonl", (AH_JUDGE / "gpt-4-0613.jsonl").read_bytes())
        == "arena-hard"
    )
    old = (
        HERE / "arena-hard-v0.1-2024" / "model_judgment" / "gpt-4-1106-preview" / "gpt-4-0613.jsonl"
    )
    assert detect_format(old.name, old.read_bytes()) == "arena-hard"
    ann = AE / "alpaca-7b" / "alpaca_eval_gpt4" / "annotations.json"
    assert detect_format(ann.name, ann.read_bytes()) == "alpaca-eval"
    assert (
        detect_format("gpt-4_pair.jsonl", (MT / "model_judgment" / "gpt-4_pair.jsonl").read_bytes())
        == "mt-bench-pair"
    )
    assert (
        detect_format(
            "gpt-4_single.jsonl", (MT / "model_judgment" / "gpt-4_single.jsonl").read_bytes()
        )
        == "mt-bench-single"
    )
    for other in (
        AH / "question.jsonl",
        AH / "model_answer" / "gpt-4-0613.jsonl",
        MT / "question.jsonl",
    ):
        assert detect_format(other.name, other.read_bytes()) is None
    assert detect_format("votes.csv", b"first,second,verdict\na,b,A\n") is None
    assert set(FORMATS) == {"arena-hard", "alpaca-eval", "mt-bench-pair", "mt-bench-single"}


# ----------------------------------------------------------------------------- Arena-Hard


def test_arena_hard_games_grades_weights_and_texts():
    imported = load_published(AH)
    assert imported.format == "arena-hard" and imported.baseline == BASELINE
    ds = imported.dataset
    c = ds.comparisons
    # the baseline judged against itself (gpt-4-0314.jsonl) is skipped and counted
    assert not (c["first_id"] == c["second_id"]).any()
    assert any(
        "2 of 14 row(s) compare a candidate with itself" in n and "gpt-4-0314.jsonl, line 1" in n
        for n in imported.notes
    )
    assert len(c) == 12 and set(c["judge"]) == {"gpt-4-1106-preview"}
    # every record: game 1 (sample 0) shows the baseline as A, game 2 (sample 1) the model
    assert (c.loc[c["sample"] == 0, "first_id"] == BASELINE).all()
    assert (c.loc[c["sample"] == 1, "second_id"] == BASELINE).all()
    one = c[(c["first_id"] == BASELINE) & (c["second_id"] == "gpt-4-0613")].iloc[1]
    assert (one["grade"], one["p_first"], one["weight"], one["verdict"]) == (2.0, 1.0, 3.0, "A")
    assert "[[A>>B]]" in one["raw"]
    # a game without a score stays, unparsed, with the judge's text
    missing = c[c["p_first"].isna()]
    assert len(missing) == 1 and missing["raw"].iloc[0].startswith("My own answer")
    assert any(
        "1 game(s) have no score" in n and "gpt-4-0613.jsonl, line 3" in n for n in imported.notes
    )
    # texts: the questions and every system's answer
    questions = {r["uid"]: r["prompt"] for r in _records(AH / "question.jsonl")}
    assert dict(zip(ds.contexts["context_id"], ds.contexts["text"], strict=True)) == questions
    answers = {
        (r["model"], r["uid"]): r["messages"][-1]["content"]["answer"]
        for p in (AH / "model_answer").glob("*.jsonl")
        for r in _records(p)
    }
    got = {
        (s, q): t
        for q, s, t in ds.candidates[["context_id", "system", "text"]].itertuples(index=False)
    }
    assert got == {k: v for k, v in answers.items() if k in got} and len(got) == 9
    assert (ds.candidates["candidate_id"] == ds.candidates["system"]).all()


def test_arena_hard_weighted_win_rate_is_show_results():
    """show_result.py's score of a model: its battles, a strong verdict repeated 3 times, game 2
    read as is and game 1 as 1 - score (the model's side), averaged. Recomputed here from the
    raw records, and from the imported comparisons with their weights."""
    label_to_score = {"A>B": [1], "A>>B": [1] * 3, "A=B": [0.5], "B>A": [0], "B>>A": [0] * 3}
    model = "gpt-3.5-turbo-0125"
    battles = []
    for rec in _records(AH_JUDGE / f"{model}.jsonl"):
        g1, g2 = (g["score"] for g in rec["games"])
        battles += label_to_score[g2] + [1 - s for s in label_to_score[g1]]
    published = float(np.mean(battles))

    c = read_published(_files(AH_JUDGE / f"{model}.jsonl")).dataset.comparisons
    model_first = c["first_id"] == model
    s = np.where(model_first, c["p_first"], 1 - c["p_first"])
    ours = float(np.sum(c["weight"] * s) / np.sum(c["weight"]))
    assert ours == pytest.approx(published, abs=1e-12)
    # by hand: q1 0, 0; q2 0 and 0 x 3; q3 1 and 0.5: 8 battles worth 1.5
    assert published == pytest.approx(1.5 / 8)


def test_arena_hard_policies_and_verdict_map():
    files = _files(AH_JUDGE / "gpt-4-0613.jsonl")
    prob = read_published(files, options=ImportOptions(strength="probability")).dataset.comparisons
    strong = prob[prob["grade"].abs() == 2]
    assert sorted(strong["p_first"]) == [0.0, 1.0] and (prob["weight"] == 1).all()
    flat = read_published(files, options=ImportOptions(strength="collapse")).dataset.comparisons
    assert (flat["weight"] == 1).all() and set(flat["p_first"].dropna()) == {0.0, 0.5, 1.0}
    mapped = read_published(files, options=ImportOptions(verdict_map={"A=B": None}))
    c = mapped.dataset.comparisons
    assert c["p_first"].isna().sum() == 2  # the tie, now unparsed, and the game without a score
    row = mapped.verdicts.set_index("value").loc["A=B"]
    assert row["changed"] and row["vocabulary"] == "A=B: tie (0)"


def test_arena_hard_2024_records_name_no_baseline():
    root = HERE / "arena-hard-v0.1-2024"
    imported = load_published(root)
    c = imported.dataset.comparisons
    assert imported.baseline == BASELINE
    assert any("not in the records: arena-hard-v0.1's baseline_model" in n for n in imported.notes)
    assert c["first_id"].tolist() == [BASELINE, "gpt-4-0613", BASELINE, "gpt-4-0613"]
    np.testing.assert_array_equal(c["grade"], [-2, 1, 1, 0])
    np.testing.assert_array_equal(c["weight"], [3, 1, 1, 1])
    assert imported.dataset.contexts["text"].str.len().gt(20).all()
    assert imported.dataset.candidates["text"].str.len().gt(20).all()
    other = load_published(root, ImportOptions(baseline="claude-3-opus"))
    assert other.baseline == "claude-3-opus"
    assert other.dataset.comparisons["first_id"].tolist()[0] == "claude-3-opus"


def test_arena_hard_malformed_records_are_refused_by_file_line_and_field():
    good = (AH_JUDGE / "gpt-4-0613.jsonl").read_text(encoding="utf-8").splitlines()
    rec = json.loads(good[1])
    del rec["games"]
    lines = [good[0], json.dumps(rec), good[2]]
    with pytest.raises(DataError) as err:
        read_published({"m.jsonl": "\n".join(lines).encode()}, format="arena-hard")
    assert (
        "m.jsonl, line 2, field 'games': missing; a Arena-Hard judgment record has a list of two games"
        in str(err.value)
    )
    broken = good[0] + "\n" + good[1][:-5] + "\n"
    with pytest.raises(DataError, match=r"m\.jsonl, line 2, column \d+: not valid JSON"):
        read_published({"m.jsonl": broken.encode()}, format="arena-hard")
    rec = json.loads(good[0])
    rec["games"][1] = "A>B"
    with pytest.raises(DataError, match=r"m\.jsonl, line 1, field 'games': game 2 is str"):
        read_published({"m.jsonl": json.dumps(rec).encode()}, format="arena-hard")


def test_arena_hard_through_the_upload_reader():
    data = (AH_JUDGE / "gpt-4-0613.jsonl").read_bytes()
    result = read_upload_result("gpt-4-0613.jsonl", data)
    assert (result.kind, result.format, result.baseline) == ("published", "arena-hard", BASELINE)
    assert result.notes[0].startswith("Read as Arena-Hard-Auto judgments (v2.0 records)")
    assert result.dataset.sources == {
        t: ["gpt-4-0613.jsonl"] for t in ("candidates", "comparisons")
    }
    assert "Baseline: 'gpt-4-0314'" in result.notes
    assert result.verdicts["value"].tolist() == ["B>A", "A>B", "A>>B", "B>>A", "A=B"]
    with_texts = read_upload_result("gpt-4-0613.jsonl", data, companions=_companions(AH))
    assert len(with_texts.dataset.contexts) == 3
    assert (with_texts.dataset.candidates["text"] != "").all()
    # another judgment file of the run, uploaded beside it, is read with it
    more = _files(AH_JUDGE / "gpt-3.5-turbo-0125.jsonl", root=AH_JUDGE)
    both = read_upload_result("gpt-4-0613.jsonl", data, companions={**_companions(AH), **more})
    assert both.dataset.comparisons["second_id"].nunique() == 3  # baseline, two models
    assert len(both.dataset.comparisons) == 12
    assert both.dataset.sources["comparisons"] == ["gpt-4-0613.jsonl", "gpt-3.5-turbo-0125.jsonl"]
    # told another layout, the file is read as that layout (and refused as nested JSON)
    with pytest.raises(DataError):
        read_upload("gpt-4-0613.jsonl", data, kind="pairwise")


# ----------------------------------------------------------------------------- AlpacaEval


def test_alpaca_eval_preferences_texts_and_reference():
    path = AE / "alpaca-7b" / "alpaca_eval_gpt4" / "annotations.json"
    records = _records(path)
    imported = read_published(_files(path))
    ds = imported.dataset
    c = ds.comparisons
    assert imported.baseline == "text_davinci_003"
    assert [r["preference"] for r in records] == [1, 2, 0]
    np.testing.assert_array_equal(c["p_first"], [1.0, 0.0, 0.5])
    assert c["verdict"].tolist() == ["A", "B", "tie"] and c["grade"].isna().all()
    assert (c["first_id"] == "text_davinci_003").all() and (c["second_id"] == "alpaca-7b").all()
    assert set(c["judge"]) == {"alpaca_eval_gpt4"}
    assert ds.contexts["text"].tolist() == [r["instruction"] for r in records]
    texts = ds.candidates.set_index(["context_id", "candidate_id"])["text"]
    for ctx, r in zip(ds.contexts["context_id"], records, strict=True):
        assert texts[(ctx, "text_davinci_003")] == r["output_1"]
        assert texts[(ctx, "alpaca-7b")] == r["output_2"]
    assert any(
        "first_id is generator_1 (the reference), not the output shown first" in n
        for n in imported.notes
    )


def test_alpaca_eval_weighted_preferences_are_probabilities():
    path = (
        AE
        / "FuseChat-Llama-3.1-8B-Instruct"
        / "weighted_alpaca_eval_gpt4_turbo"
        / "annotations.json"
    )
    records = _records(path)
    c = read_upload_result("annotations.json", path.read_bytes()).dataset.comparisons
    np.testing.assert_allclose(
        c["p_first"], [2 - r["preference"] for r in records], rtol=0, atol=1e-12
    )
    assert (c["weight"] == 1).all()


def test_alpaca_eval_switched_outputs_are_read_in_the_order_shown():
    rec = dict(_records(AE / "alpaca-7b" / "alpaca_eval_gpt4" / "annotations.json")[0])
    rec["is_switched_outputs"] = True  # output_2 was shown first; preference 1: output_1 won
    c = read_published({"a.json": json.dumps([rec]).encode()}).dataset.comparisons
    assert (c["first_id"].iloc[0], c["second_id"].iloc[0], c["p_first"].iloc[0]) == (
        "alpaca-7b",
        "text_davinci_003",
        0.0,
    )


def test_alpaca_eval_bad_records():
    rec = dict(_records(AE / "alpaca-7b" / "alpaca_eval_gpt4" / "annotations.json")[0])
    bad = dict(rec, preference="much better")
    none = dict(rec, preference=None)
    no_gen = {k: v for k, v in rec.items() if k != "generator_2"}
    imported = read_published({"a.json": json.dumps([rec, bad, none]).encode()})
    c = imported.dataset.comparisons
    # two records judged the same pair again: samples 0, 1, 2; the unreadable ones unparsed
    assert c["sample"].tolist() == [0, 1, 2] and c["p_first"].isna().tolist() == [
        False,
        False,
        True,
    ]
    assert any(
        "1 annotation(s) have no preference (null)" in n and "a.json, line 1" in n
        for n in imported.notes
    )
    listed = "[\n" + ",\n".join(json.dumps(r) for r in (rec, rec, no_gen)) + "\n]"
    with pytest.raises(DataError, match=r"b\.json, line 4, field 'generator_2': missing"):
        read_published({"b.json": listed.encode()}, format="alpaca-eval")


# ----------------------------------------------------------------------------- MT-Bench


def test_mt_bench_pair_games_baseline_and_texts():
    path = MT / "model_judgment" / "gpt-4_pair.jsonl"
    imported = read_published(_files(path), _companions(MT))
    assert (imported.format, imported.baseline) == ("mt-bench-pair", "gpt-3.5-turbo")
    c = imported.dataset.comparisons
    records = _records(path)
    assert len(c) == 2 * len(records)
    for k, r in enumerate(records):
        g1, g2 = c.iloc[2 * k], c.iloc[2 * k + 1]
        # game 1 shows model_1 first, game 2 model_2; the winner is read from the row's side
        assert (g1["first_id"], g1["second_id"], g1["sample"]) == (r["model_1"], r["model_2"], 0)
        assert (g2["first_id"], g2["second_id"], g2["sample"]) == (r["model_2"], r["model_1"], 1)
        for g, winner, judgment in (
            (g1, r["g1_winner"], r["g1_judgment"]),
            (g2, r["g2_winner"], r["g2_judgment"]),
        ):
            expected = {g["first_id"]: 1.0, g["second_id"]: 0.0}
            want = 0.5 if winner == "tie" else np.nan if winner == "error" else expected[r[winner]]
            np.testing.assert_equal(g["p_first"], want)
            assert g["raw"] == judgment
        assert g1["context_id"] == f"{r['question_id']}/turn{r['turn']}"
    assert set(c["judge"]) == {"gpt-4"}
    assert any(
        "1 game(s) ended in 'error'" in n and "gpt-4_pair.jsonl, line 4" in n
        for n in imported.notes
    )
    assert any("pair-v2 (2), pair-math-v1 (2), pair-v2-multi-turn (2)" in n for n in imported.notes)
    ds = imported.dataset
    ctx = dict(zip(ds.contexts["context_id"], ds.contexts["text"], strict=True))
    q = {r["question_id"]: r["turns"] for r in _records(MT / "question.jsonl")}
    assert ctx["81/turn1"] == q[81][0]
    assert ctx["81/turn2"] == f"Turn 1: {q[81][0]}\n\nTurn 2: {q[81][1]}"
    answers = {
        r["question_id"]: r["choices"][0]["turns"]
        for r in _records(MT / "model_answer" / "alpaca-13b.jsonl")
    }
    cand = ds.candidates.set_index(["context_id", "candidate_id"])["text"]
    assert cand[("81/turn2", "alpaca-13b")] == answers[81][1]
    assert cand[("111/turn1", "alpaca-13b")] == answers[111][0]


def test_mt_bench_single_becomes_ratings():
    path = MT / "model_judgment" / "gpt-4_single.jsonl"
    result = read_upload_result("gpt-4_single.jsonl", path.read_bytes())
    assert (result.kind, result.format) == ("published", "mt-bench-single")
    ds = result.dataset
    r = ds.ratings
    assert len(ds.comparisons) == 0 and len(r) == 6
    np.testing.assert_array_equal(r["score"], [9, 6, 10, 2, 8, np.nan])
    assert set(r["prompt_id"]) == {"mt-bench-single"} and set(r["judge"]) == {"gpt-4"}
    assert r["raw"].iloc[-1] == "The answer is fine."
    assert ds.scales == {"overall": (1.0, 10.0)}
    assert any("score -1 or off the scale: gpt-4_single.jsonl, line 6" == n for n in result.notes)


def test_mt_bench_bad_turn_and_missing_winner():
    line = json.loads((MT / "model_judgment" / "gpt-4_pair.jsonl").read_text().splitlines()[0])
    bad = dict(line, turn=3)
    missing = {k: v for k, v in line.items() if k != "g2_winner"}
    with pytest.raises(DataError) as err:
        read_published(
            {
                "p.jsonl": (
                    json.dumps(line) + "\n" + json.dumps(bad) + "\n" + json.dumps(missing)
                ).encode()
            }
        )
    msg = str(err.value)
    assert "p.jsonl, line 2, field 'turn': 3 is not a turn (1 or 2)" in msg
    assert "p.jsonl, line 3, field 'g2_winner': missing" in msg


# ----------------------------------------------------------------------------- the entry


def test_files_of_two_formats_and_unknown_files_are_refused():
    ah = (AH_JUDGE / "gpt-4-0613.jsonl").read_bytes()
    mt = (MT / "model_judgment" / "gpt-4_pair.jsonl").read_bytes()
    with pytest.raises(DataError, match=r"not all of one format"):
        read_published({"a.jsonl": ah, "b.jsonl": mt})
    with pytest.raises(DataError, match=r"not a published judgment format"):
        read_published({"q.jsonl": (AH / "question.jsonl").read_bytes()})
    with pytest.raises(DataError, match=r"not a published judgment format"):
        read_upload("q.jsonl", (AH / "question.jsonl").read_bytes(), kind="published")


def test_a_folder_with_two_formats_is_read_one_format_at_a_time():
    with pytest.raises(DataError, match=r"several formats \(mt-bench-pair, mt-bench-single\)"):
        load_published(MT)
    single = load_published(MT, format="mt-bench-single")
    assert single.format == "mt-bench-single" and len(single.dataset.ratings) == 6
    assert (single.dataset.candidates["text"] != "").all()  # the answers found beside it
    pair = load_published(MT, judge="gpt-4", format="mt-bench-pair")
    assert pair.format == "mt-bench-pair" and len(pair.dataset.contexts) == 3


def test_several_models_of_one_judge_share_contexts():
    files = _files(AH_JUDGE / "gpt-4-0613.jsonl", AH_JUDGE / "gpt-3.5-turbo-0125.jsonl")
    ds = read_published(files, _companions(AH)).dataset
    assert ds.contexts["context_id"].nunique() == 3
    per_ctx = ds.candidates.groupby("context_id")["candidate_id"].apply(set)
    assert (per_ctx == {BASELINE, "gpt-4-0613", "gpt-3.5-turbo-0125"}).all()
    assert "gpt-4-0314" in ds.candidates["system"].tolist()
    # the baseline travels with the dataset (the Data page shows its description)
    assert ds.description == "Arena-Hard-Auto judgments; baseline 'gpt-4-0314'"
