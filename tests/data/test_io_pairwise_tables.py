"""data.io.pairwise_tables: a pairwise file keeps its texts (contexts, candidates), its systems
and its human verdicts; graded verdicts keep their grade and count by the strength policy;
weights; self-comparisons skipped; contradictions refused naming the rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.io import PairwiseMapping, pairwise_to_dataset, read_upload, read_upload_result
from data.io.pairwise_tables import text_id
from data.schema import DataError
from tests.data._benchmark_files import DATA

INPUTS = [
    "Write a haiku about autumn leaves falling.",
    "Explain what a hash table is in one sentence.",
    "Name three prime numbers above fifty.",
]
OUT_1 = [
    "Red leaves drift and fall / quiet wind carries them home / the branches stand bare",
    "A hash table maps keys to values through a hash function.",
    "53, 59 and 61.",
]
OUT_2 = [
    "Leaves fall in autumn. They are red and yellow and they fall.",
    "It is a table.",
    "51, 57 and 63.",
]


def llmbar_like() -> pd.DataFrame:
    """LLMBar's layout (input, output_1, output_2, label = the gold better output) with a
    judge's verdicts in LLMBar's words, each pair in both orders as two rows."""
    rows = []
    for i, (q, a, b) in enumerate(zip(INPUTS, OUT_1, OUT_2, strict=True)):
        judged = ["Output (a)", "Output (b)", "Output (a)"][i]
        rows.append({"input": q, "output_1": a, "output_2": b, "label": 1, "verdict": judged})
        swapped = ["Output (b)", "Output (b)", "garbage"][i]
        rows.append({"input": q, "output_1": b, "output_2": a, "label": 2, "verdict": swapped})
    return pd.DataFrame(rows).assign(judge="gpt-4")


def test_llmbar_like_file_keeps_texts_and_gold_labels():
    frame = llmbar_like()
    result = read_upload_result("llmbar.csv", frame.to_csv(index=False).encode())
    ds = result.dataset
    m = result.mapping
    assert (m.context_text, m.first_text, m.second_text) == ("input", "output_1", "output_2")
    assert (m.verdict, m.human_verdict, m.judge) == ("verdict", "label", "judge")
    # contexts: one per instruction, named by a hash of its text, the text kept
    assert ds.contexts["text"].tolist() == INPUTS
    assert ds.contexts["context_id"].tolist() == [text_id(q, "ctx-") for q in INPUTS]
    # candidates: both outputs of every instruction with their texts, ids from the texts
    assert len(ds.candidates) == 6
    assert ds.candidates["text"].tolist() == [
        t for pair in zip(OUT_1, OUT_2, strict=True) for t in pair
    ]
    assert ds.candidates["candidate_id"].tolist() == [
        text_id(t, "text-") for t in ds.candidates["text"]
    ]
    assert ds.candidates["system"].isna().all()
    c = ds.comparisons
    judge, human = c[c["judge"] == "gpt-4"], c[c["judge"] == "human:gold"]
    assert len(judge) == 6 and len(human) == 6
    np.testing.assert_array_equal(judge["p_first"], [1.0, 0.0, 0.0, 0.0, 1.0, np.nan])
    assert judge["raw"].tolist()[-1] == "garbage"
    # the gold label of each row, from the row's own order: output_1 better, then swapped
    np.testing.assert_array_equal(human["p_first"], [1.0, 0.0] * 3)
    good = text_id(OUT_1[0], "text-")
    assert human.loc[human["first_id"] == good, "p_first"].tolist() == [1.0]
    assert human.loc[human["second_id"] == good, "p_first"].tolist() == [0.0]
    assert any("'label' is read as the human (gold) verdict" in n for n in result.notes)
    assert any("verdict 'garbage' not understood: row 6" == n for n in result.notes)


def test_systems_name_the_candidates_and_texts_go_with_them():
    frame = pd.DataFrame(
        {
            "question_id": ["q1", "q1", "q2"],
            "prompt": ["What is 2+2?", "What is 2+2?", "Name a colour."],
            "model_a": ["base", "m1", "base"],
            "model_b": ["m1", "base", "m1"],
            "response_a": ["4", "Four.", "Blue"],
            "response_b": ["Four.", "4", "Red, or any other."],
            "winner": ["model_b", "model_a", "tie"],
        }
    )
    result = read_upload_result("arena.csv", frame.to_csv(index=False).encode())
    ds = result.dataset
    assert ds.candidates.to_dict("list") == {
        "context_id": ["q1", "q1", "q2", "q2"],
        "candidate_id": ["base", "m1", "base", "m1"],
        "system": ["base", "m1", "base", "m1"],
        "text": ["4", "Four.", "Blue", "Red, or any other."],
    }
    assert ds.contexts["text"].tolist() == ["What is 2+2?", "Name a colour."]
    np.testing.assert_array_equal(ds.comparisons["p_first"], [0.0, 1.0, 0.5])
    assert any(
        "the candidate ids are the system names in 'model_a' and 'model_b'" in n
        for n in result.notes
    )


def test_graded_verdicts_keep_their_grade_and_count_by_the_policy():
    frame = pd.DataFrame(
        {
            "first": ["a", "b", "a", "b", "a"],
            "second": ["b", "a", "b", "a", "b"],
            "score": ["A>>B", "[[A>B]]", "A=B", "B>A", "[[B>>A]]"],
            "sample": [0, 0, 1, 1, 2],
        }
    )
    grades = [2, 1, 0, -1, -2]
    expected = {
        "weight": ([1, 1, 0.5, 0, 0], [3, 1, 1, 1, 3]),
        "probability": ([1, 0.75, 0.5, 0.25, 0], [1] * 5),
        "collapse": ([1, 1, 0.5, 0, 0], [1] * 5),
    }
    for policy, (p_first, weight) in expected.items():
        mapping = PairwiseMapping(
            first="first", second="second", verdict="score", sample="sample", strength=policy
        )
        c = pairwise_to_dataset(frame, mapping, notes=[]).comparisons
        np.testing.assert_array_equal(c["grade"], grades)
        np.testing.assert_array_equal(c["p_first"], p_first, err_msg=policy)
        np.testing.assert_array_equal(c["weight"], weight, err_msg=policy)
        assert c["verdict"].tolist() == ["A", "A", "tie", "B", "B"]


def test_weight_column_multiplies_the_policy_and_bad_weights_are_refused():
    data = "first,second,verdict,weight\na,b,A>>B,2\na,b,A,0.5\na,b,B,\n"
    ds = read_upload("w.csv", data.encode())
    np.testing.assert_array_equal(ds.comparisons["weight"], [6.0, 0.5, 1.0])  # empty: 1
    for cell in ("0", "-1", "nan", "NA", "inf", "lots"):
        bad = f"first,second,verdict,weight\na,b,A,1\na,b,B,{cell}\n"
        with pytest.raises(DataError) as err:
            read_upload("w.csv", bad.encode(), kind="pairwise")
        msg = str(err.value)
        assert "w.csv, row 2, column 'weight': weight" in msg, cell
        assert "is not a positive number" in msg and "write a number above 0" in msg


def test_a_system_that_contradicts_itself_is_refused_naming_the_rows():
    data = (
        "context,first,second,model_a,model_b,verdict\n"
        "c1,x,y,gpt-4,llama,A\n"
        "c1,y,x,llama,gpt-4,B\n"
        "c1,x,z,claude,mistral,A\n"
    )
    with pytest.raises(DataError) as err:
        read_upload("s.csv", data.encode(), kind="pairwise")
    msg = str(err.value)
    assert "s.csv, candidate 'x' of context 'c1': 2 different systems" in msg
    assert "'claude' on row 3" in msg and "'gpt-4' on rows 1–2" in msg
    assert "one candidate id has one system" in msg


def test_texts_that_disagree_for_one_id_are_refused_naming_the_rows():
    data = (
        "context,model_a,model_b,output_a,output_b,verdict\nc1,m1,m2,hi,yo,A\nc1,m2,m1,yo,hey,B\n"
    )
    with pytest.raises(DataError) as err:
        read_upload("t.csv", data.encode())
    msg = str(err.value)
    assert (
        "t.csv, candidate 'm1' of context 'c1': 2 different texts ('hey' on row 2; 'hi' on row 1)"
        in msg
    )


def test_a_verdict_map_changes_the_reading_of_a_value():
    data = b"first,second,verdict\na,b,A\na,b,garbage\na,b,garbage\n"
    plain = read_upload_result("v.csv", data)
    assert plain.dataset.comparisons["p_first"].isna().sum() == 2
    row = plain.verdicts.set_index("value").loc["garbage"]
    assert (row["rows"], row["reading"]) == (2, "not understood (kept unparsed)")
    mapped = PairwiseMapping(
        first="first", second="second", verdict="verdict", verdict_map={"garbage": -2}
    )
    result = read_upload_result("v.csv", data, mapping=mapped)
    c = result.dataset.comparisons
    np.testing.assert_array_equal(c["p_first"], [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(c["weight"], [1.0, 3.0, 3.0])
    row = result.verdicts.set_index("value").loc["garbage"]
    assert row["changed"] and row["reading"].startswith("B>>A")
    assert row["vocabulary"] == "not understood (kept unparsed)"
    assert not any("not understood" in n for n in result.notes)


def test_human_verdict_without_a_judge_and_a_named_annotator():
    data = b"context_id,first,second,gold\nc1,a,b,1\nc1,a,b,1\nc2,a,b,tie\nc2,b,a,\n"
    mapping = PairwiseMapping(
        first="first",
        second="second",
        context_id="context_id",
        human_verdict="gold",
        annotator="expert1",
    )
    c = read_upload("h.csv", data, mapping=mapping).comparisons
    # one comparison per labelled row; the same label repeated on a pair counts once
    assert c["judge"].unique().tolist() == ["human:expert1"]
    assert c[["context_id", "first_id", "second_id"]].values.tolist() == [
        ["c1", "a", "b"],
        ["c2", "a", "b"],
    ]
    np.testing.assert_array_equal(c["p_first"], [1.0, 0.5])


def test_strict_reading_refuses_what_the_upload_keeps():
    frame = pd.DataFrame({"first": ["a", "a"], "second": ["b", "b"], "label": ["1", "nonsense"]})
    with pytest.raises(DataError, match=r"row 2, column 'label': human verdict 'nonsense' is not"):
        pairwise_to_dataset(
            frame, PairwiseMapping(first="first", second="second", human_verdict="label")
        )
    notes: list[str] = []
    ds = pairwise_to_dataset(
        frame, PairwiseMapping(first="first", second="second", human_verdict="label"), notes=notes
    )
    assert ds.comparisons["p_first"].isna().tolist() == [False, True]
    assert "human verdict 'nonsense' not understood: row 2" in notes


def test_the_long_table_read_that_fails_offers_pairwise():
    # a comparisons header with a typo: read as that table, refused; the pairwise reading fits
    data = (
        b"context_id,attribute,judge,first_id,second_id,p_frist,sample,winner\nc1,o,j,a,b,x,0,A\n"
    )
    from data.io import preview_upload

    preview = preview_upload("c.csv", data, "auto")
    assert preview.kind == "comparisons" and preview.error is not None
    assert (
        "pairwise",
        "pairwise verdicts (one row per judged pair: candidates, verdicts, texts)",
    ) in (preview.layouts)
    with pytest.raises(DataError, match=r"could also be pairwise verdicts"):
        read_upload("c.csv", data)
    assert read_upload("c.csv", data, kind="pairwise").comparisons["p_first"].tolist() == [1.0]


LLMBAR = DATA / "llmbar" / "Dataset" / "LLMBar" / "Natural" / "dataset.json"


@pytest.mark.skipif(not LLMBAR.is_file(), reason=f"{LLMBAR} not there")
def test_real_llmbar_file_as_uploaded():
    """LLMBar's Natural set as published (input, output_1, output_2, label; PROVENANCE.md:
    100 pairs, label 1 / 2 = 42 / 58) read by the Data page's reader."""
    result = read_upload_result("dataset.json", LLMBAR.read_bytes())
    ds = result.dataset
    c = ds.comparisons
    assert set(c["judge"]) == {"human:gold"} and len(c) == 100
    assert ((c["p_first"] == 1).sum(), (c["p_first"] == 0).sum()) == (42, 58)
    assert len(ds.contexts) == 100 and len(ds.candidates) == 200
    assert (ds.candidates["text"] != "").all() and (ds.contexts["text"] != "").all()
