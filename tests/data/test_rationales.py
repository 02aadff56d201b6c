"""data.rationales: explanation extraction, keywords, the map, unsupported citations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import data
from data.rationales import (
    check_citations,
    citation_summary,
    cited_spans,
    explanation,
    keyword_table,
    rationale_map,
    rationales,
    unsupported_citations,
)
from data.schema import DataError, Dataset
from tests.judge.fake_openai import fake_openai_fixture  # noqa: F401  (the fake_openai fixture)
from tests.pages._analysis_apptest import need


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("B", ""),
        ("A: Summary #1 is more coherent.", "Summary #1 is more coherent"),
        ("- Groundedness: 0", ""),
        ("3", ""),
        (None, ""),
        (float("nan"), ""),
        ("[error] HTTP 500 after 3 tries", ""),
        (
            "The summary repeats the same fact twice. Final score: 3.",
            "The summary repeats the same fact twice",
        ),
        ("Two stars. The summary misses the main point.", "The summary misses the main point"),
        (
            "The summary is disfluent (score: 1) because it lacks clarity",
            "The summary is disfluent ( ) because it lacks clarity",
        ),
        ("Reason: too short and vague. 2/5", "too short and vague"),
    ],
)
def test_explanation_strips_labels_and_scores(raw, expected):
    assert explanation(raw) == expected


def _toy() -> Dataset:
    contexts = pd.DataFrame({"context_id": ["c1"], "text": ["Roger Vanden Stock met Pep."]})
    candidates = pd.DataFrame(
        {
            "context_id": ["c1", "c1"],
            "candidate_id": ["x", "y"],
            "system": ["S1", "S2"],
            "text": ["the chairman roger vanden stock 's club won.", "Paris is lovely."],
        }
    )
    human = pd.DataFrame(
        {
            "context_id": ["c1", "c1"],
            "candidate_id": ["x", "y"],
            "attribute": ["coherence"] * 2,
            "annotator": ["h1"] * 2,
            "score": [5.0, 1.0],
        }
    )
    ratings = pd.DataFrame(
        {
            "context_id": ["c1"] * 3,
            "candidate_id": ["x", "y", "y"],
            "attribute": ["coherence"] * 3,
            "judge": ["j"] * 3,
            "prompt_id": ["p"] * 3,
            "sample": [0, 0, 1],
            "score": [5.0, 4.0, np.nan],
            "raw": [
                "Clear: it names Roger Vanden Stock's club. Score: 5",
                'It says "Paris is lovely" and mentions Lionel Messi. Score: 4',
                "[error] timeout",
            ],
        }
    )
    return Dataset(
        "toy",
        contexts=contexts,
        candidates=candidates,
        human_scores=human,
        ratings=ratings,
        scales={"coherence": (1.0, 5.0)},
    )


def test_rationales_rows_counts_agreement():
    frame = rationales(_toy(), "coherence", "j", "p")
    assert frame.attrs["counts"] == {"answers": 3, "errors": 1, "empty": 0, "kept": 2}
    assert frame["system"].tolist() == ["S1", "S2"]
    assert frame["human"].tolist() == [5.0, 1.0]
    # 5 vs 5 agrees; 4 vs 1 is 3 points of a 4-point scale above the humans
    assert frame["agreement"].tolist() == ["agrees", "judge higher"]
    with pytest.raises(DataError, match="no answers"):
        rationales(_toy(), "coherence", "nobody")


def test_cited_spans_hand_made():
    spans = cited_spans(
        "The Summary says \"the cat sat\" and 'on the mat'. However, it's Liverpool's FA Cup "
        "loss that matters, and Chelsea for Yoshinori Muto; Bank of England agrees."
    )
    assert spans == [
        ("quote", "the cat sat"),
        ("quote", "on the mat"),
        ("entity", "Liverpool's"),
        ("entity", "FA Cup"),
        ("entity", "Chelsea"),
        ("entity", "Yoshinori Muto"),
        ("entity", "Bank of England"),
    ]
    # sentence-initial capitals and the task's own words are not citations
    assert cited_spans("Overall, the Summary is Coherent. Fluency is fine.") == []


def test_check_citations_support_rules():
    sources = ["the chairman roger vanden stock 's club won ."]
    got = check_citations(
        'Roger Vanden Stock\'s club and "Club Won" but not Pep Guardiola.', sources
    )
    assert got == [
        ("quote", "Club Won", True),  # case and punctuation folded
        ("entity", "Roger Vanden Stock's", True),  # possessive matched to "stock 's"
        ("entity", "Pep Guardiola", False),
    ]


def test_unsupported_citations_uses_candidate_and_context():
    ds = _toy()
    frame = rationales(ds, "coherence", "j", "p")
    checked = unsupported_citations(frame, ds)
    assert checked["unsupported_spans"].tolist() == ["", "Lionel Messi"]
    assert checked["supported_spans"].tolist() == ["Roger Vanden Stock's", "Paris is lovely"]
    summary = citation_summary(checked)
    assert summary["citing"] == 2 and summary["unsupported_rate"] == 0.5
    # without the context the candidate text alone still supports both in this case
    no_ctx = unsupported_citations(frame, ds, use_context=False)
    assert no_ctx["unsupported"].tolist() == [0, 1]


def _frame() -> pd.DataFrame:
    good = ["clear flow and structure", "logical flow, clear structure", "clear flow"] * 5
    bad = ["choppy sentences, repeated facts", "repeated facts and choppy", "choppy"] * 5
    return pd.DataFrame({"rationale": good + bad, "score": [5.0] * len(good) + [1.0] * len(bad)})


def test_keyword_table_separates_scores():
    table = keyword_table(_frame(), "score", n=3)
    top = table[table["rank"] == 1].set_index("score")["keyword"]
    assert top[5.0] in {"clear", "flow", "clear flow", "structure"}
    assert top[1.0] in {"choppy", "repeated", "facts", "repeated facts"}
    assert set(table["rationales"]) == {15}
    assert (table["lift"] > 0).all()


def test_rationale_map_seeded_and_clustered():
    frame = _frame()
    one = rationale_map(frame, n_clusters=2, random_state=0)
    two = rationale_map(frame, n_clusters=2, random_state=0)
    np.testing.assert_allclose(one.points[["x", "y"]], two.points[["x", "y"]])
    assert len(one.points) == 30 and not one.sampled
    # the two kinds of rationale fall in different clusters
    by = one.points.groupby("score")["cluster"].agg(lambda c: c.mode()[0])
    assert by[5.0] != by[1.0]
    assert one.clusters["rationales"].sum() == 30
    capped = rationale_map(frame, max_points=10, random_state=1)
    assert len(capped.points) == 10 and capped.sampled and capped.n_total == 30
    with pytest.raises(DataError, match="at least"):
        rationale_map(frame.head(3), random_state=0)


@need("summeval")
def test_summeval_chatgpt_rationales():
    ds = data.load_benchmark("summeval")
    star = rationales(ds, None, "gpt-3.5-turbo-0301/stareval", "stareval")
    assert star.attrs["counts"]["answers"] == 4800
    assert 1500 < star.attrs["counts"]["kept"] < 4800
    assert not star["rationale"].str.match(r"(?i)(one|two|three|four|five) stars?").any()
    kw = keyword_table(star, "attribute", n=10)
    consistency = set(kw.loc[kw["attribute"] == "consistency", "keyword"])
    assert {"accurately", "facts"} <= consistency
    fluency = set(kw.loc[kw["attribute"] == "fluency", "keyword"])
    assert "grammatically" in fluency
    checked = unsupported_citations(star, ds)
    summary = citation_summary(checked)
    assert summary["citing"] > 1000
    assert 0.0 < summary["unsupported_rate"] < 0.5
    mapped = rationale_map(star, max_points=400, random_state=0)
    assert len(mapped.points) == 400 and mapped.points["cluster_label"].notna().all()
    # the pairwise judge: few answers explain, the rest are bare letters
    ab = rationales(ds, "coherence", "gpt-3.5-turbo-0301/ab-choice")
    assert 0 < ab.attrs["counts"]["kept"] < ab.attrs["counts"]["empty"]
    assert set(ab["agreement"]) <= {"agrees", "disagrees", "humans tie", "no human score"}
    # the bare multiple-choice judge has no rationale at all
    assert rationales(ds, None, "gpt-3.5-turbo-0301/mcq", "mcq").attrs["counts"]["kept"] == 0


@need("topicalchat")
def test_topicalchat_rationales():
    ds = data.load_benchmark("topicalchat")
    frame = rationales(ds, None, "gpt-3.5-turbo/geval", "geval")
    counts = frame.attrs["counts"]
    assert counts["answers"] == 28600
    assert counts["kept"] == len(frame) and counts["empty"] > 25000
    # "- Groundedness: 0" is a bare score, never kept
    assert not frame["rationale"].str.contains(r"^-?\s*\w+:\s*\d\s*$").any()


def test_rationales_of_a_test_server_run(fake_openai, tmp_path, monkeypatch):
    """A sampled pairwise run against the local OpenAI-compatible test server keeps its raw
    answers; the explained ones become rationales, the bare letters are counted as empty."""
    from tests.judge.judge_runs import backend_for, run_c2, tiny_dataset

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "cache"))
    ds = tiny_dataset(2, 4)
    result = run_c2(
        ds,
        backend=backend_for(fake_openai),
        mode="samples",
        n_samples=6,
        store=tmp_path / "runs.sqlite",
    )
    table = result.table
    judged = Dataset("tiny run", contexts=ds.contexts, candidates=ds.candidates, comparisons=table)
    judge = str(table["judge"].iloc[0])
    frame = rationales(judged, "coherence", judge)
    counts = frame.attrs["counts"]
    explained = table["raw"].isin(["Summary B is more coherent.", "I cannot decide."])
    assert counts["answers"] == len(table) and counts["errors"] == 0
    assert counts["kept"] == int(explained.sum()) > 0
    assert set(frame["rationale"]) <= {"Summary B is more coherent", "I cannot decide"}
    assert (frame["agreement"] == "no human score").all()
