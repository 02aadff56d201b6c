"""data.comparative.tables: Liusie et al.'s per-judge table (Tables 5-7, 9-11) and subset table (8).

Small hand-made datasets with numbers worked out by hand, holes included; the SummEval
values pinned; and a check that the table agrees with the numbers the app's pages compute.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import data
from data.comparative.tables import (
    SUBSET_COLUMNS,
    TEMPLATE_COLUMNS,
    judge_template_table,
    subset_table,
)
from data.paths import data_dirs
from data.schema import DataError, Dataset
from data.validate import validate_dataset

QUALITY = [5.0, 4.0, 3.0, 2.0, 1.0]  # human score of candidates c0..c4 in every context
CANDS = [f"c{i}" for i in range(5)]


def p_right(better: bool) -> float:
    """A perfect judge: 1 when the first candidate is better."""
    return 1.0 if better else 0.0


def p_first_biased(better: bool) -> float:
    """Right at a threshold between .55 and .7, but always 'A' at 0.5."""
    return 0.7 if better else 0.55


def make_ds(judges, attributes=("coh",), n_contexts=4, human=True, unparsed_context=False):
    rows = []
    for a in attributes:
        for name, fn in judges.items():
            for c in range(n_contexts):
                for i in range(5):
                    for j in range(5):
                        if i == j:
                            continue
                        p = fn(QUALITY[i] > QUALITY[j])
                        if unparsed_context and c == n_contexts - 1:
                            p = math.nan
                        rows.append(
                            dict(
                                context_id=f"x{c}",
                                attribute=a,
                                judge=name,
                                first_id=CANDS[i],
                                second_id=CANDS[j],
                                p_first=p,
                                sample=0,
                            )
                        )
    cands = pd.DataFrame(
        [dict(context_id=f"x{c}", candidate_id=k, text=k) for c in range(n_contexts) for k in CANDS]
    )
    hs = pd.DataFrame(
        [
            dict(
                context_id=f"x{c}", candidate_id=k, attribute=attributes[0], annotator="a1", score=q
            )
            for c in range(n_contexts)
            for k, q in zip(CANDS, QUALITY, strict=True)
        ]
    )
    ds = Dataset(
        "toy",
        contexts=pd.DataFrame({"context_id": [f"x{c}" for c in range(n_contexts)], "text": ""}),
        candidates=cands,
        comparisons=pd.DataFrame(rows),
        human_scores=hs if human else Dataset("e").human_scores,
    )
    return validate_dataset(ds)


def test_perfect_and_biased_templates_hand_checked():
    ds = make_ds({"m/right": p_right, "m/biased": p_first_biased}, attributes=("coh", "flu"))
    t = judge_template_table(ds)
    assert list(t.columns) == TEMPLATE_COLUMNS
    assert t[["judge", "attribute"]].values.tolist() == [
        ["m/biased", "coh"],
        ["m/right", "coh"],
        ["m/biased", "flu"],
        ["m/right", "flu"],
    ]
    right = t[(t.judge == "m/right") & (t.attribute == "coh")].iloc[0]
    assert right.p_first == 0.5 and right.accuracy == 1.0 and right.accuracy_debiased == 1.0
    assert right.spearman_wr == pytest.approx(1.0)
    assert right.spearman_ml == pytest.approx(1.0)
    assert right.n_comparisons == 4 * 20 and right.n_contexts == 4 and right.reason == ""
    biased = t[(t.judge == "m/biased") & (t.attribute == "coh")].iloc[0]
    # at 0.5 the first candidate always wins: P(A) = 1, half the comparisons right, and
    # the win-ratio ties every candidate (no Spearman)
    assert biased.p_first == 1.0 and biased.accuracy == 0.5
    assert np.isnan(biased.spearman_wr)
    # the balanced threshold lies between .55 and .7: every decision right again
    assert 0.55 < biased.balanced_tau < 0.7
    assert biased.accuracy_debiased == 1.0
    assert biased.spearman_debiased == pytest.approx(1.0)
    # maximum likelihood uses the probabilities, which still order the candidates
    assert biased.spearman_ml == pytest.approx(1.0)
    assert "spearman" in biased.reason
    # no human scores for 'flu': NaN with the reason, the bias still measured
    flu = t[t.attribute == "flu"]
    assert flu[["accuracy", "spearman_wr", "spearman_ml"]].isna().all().all()
    assert flu.reason.str.contains("no human scores").all()
    assert flu.p_first.tolist() == [1.0, 0.5]


def test_selection_and_errors():
    ds = make_ds({"m/right": p_right, "m/biased": p_first_biased}, attributes=("coh", "flu"))
    one = judge_template_table(ds, attribute="coh", judge="m/right")
    assert len(one) == 1
    with pytest.raises(DataError, match="no parsed comparisons with judge 'nope'"):
        judge_template_table(ds, judge="nope")
    with pytest.raises(DataError, match="available: 'coh', 'flu'"):
        judge_template_table(ds, attribute="xyz")
    with pytest.raises(DataError, match="several attributes"):
        subset_table(ds, judge="m/right")
    with pytest.raises(DataError, match="several judges"):
        subset_table(ds, attribute="coh")
    with pytest.raises(DataError, match="has no pairwise comparisons"):
        judge_template_table(Dataset("empty"))


def test_holes_unparsed_context_left_out():
    ds = make_ds({"m/right": p_right}, n_contexts=5, unparsed_context=True)
    t = judge_template_table(ds)
    assert t.n_contexts.tolist() == [4]
    assert t.accuracy.tolist() == [1.0]
    s = subset_table(ds, "coh", "m/right", n_draws=5)
    assert s.n_contexts.tolist() == [4, 4, 4, 4]


def test_every_answer_unparsed_is_a_clear_message():
    ds = make_ds({"m/right": p_right}, n_contexts=1, unparsed_context=True)
    with pytest.raises(DataError, match="none of its 20 comparisons was parsed"):
        judge_template_table(ds)
    with pytest.raises(DataError, match="none of its 20 comparisons was parsed"):
        subset_table(ds)


def test_subset_table_perfect_judge():
    ds = make_ds({"m/right": p_right})
    s = subset_table(ds, n_draws=10)
    assert list(s.columns) == SUBSET_COLUMNS
    assert s.n.tolist() == [2, 3, 4, 5]
    assert (s.final == 1.0).all() and (s.gold == 1.0).all()
    assert (s.n_draws == 10).all()
    assert s.attrs["reference"] == "mean human score (a1)"
    assert s.attrs["judge"] == "m/right" and s.attrs["tau"] == 0.5
    no_h = subset_table(make_ds({"m/right": p_right}, human=False), n_draws=3)
    assert no_h.gold.isna().all() and (no_h.final == 1.0).all()
    assert no_h.attrs["reference"] == ""
    assert all("no human scores" in r for r in no_h.attrs["reasons"])


def test_human_verdicts_are_the_reference_without_human_scores():
    judges = {"m/right": p_right, "human:a": p_right, "human:b": p_right}
    ds = make_ds(judges, human=False)
    t = judge_template_table(ds)
    assert t.judge.tolist() == ["m/right"]  # human annotators are not judges by default
    assert t.reference.iloc[0] == "win-ratio of the pooled verdicts of 2 human annotator(s)"
    assert t.accuracy.iloc[0] == 1.0
    h = judge_template_table(ds, judge="human:a")
    assert h.reference.iloc[0].endswith("of 1 human annotator(s)")  # itself left out


def summeval_or_skip():
    if not (data_dirs()[0] / "summeval_llm_eval").is_dir():
        pytest.skip("SummEval not in the data folder (real data absent)")
    return data.load_benchmark("summeval")


JUDGE = "gpt-3.5-turbo-0301/ab-choice"


@pytest.mark.slow
def test_summeval_values_pinned_and_as_the_pages_compute():
    ds = summeval_or_skip()
    t = judge_template_table(ds).set_index("attribute")
    assert t.judge.unique().tolist() == [JUDGE]
    pinned = {  # p_first, accuracy, accuracy_debiased, spearman_wr, spearman_ml
        "coherence": (0.5207, 0.6166, 0.6174, 0.2416, 0.2249),
        "consistency": (0.4066, 0.6680, 0.6667, 0.1933, 0.1820),
        "fluency": (0.4839, 0.6086, 0.6081, 0.1608, 0.1665),
        "relevance": (0.5741, 0.6354, 0.6365, 0.2391, 0.2459),
    }
    cols = ["p_first", "accuracy", "accuracy_debiased", "spearman_wr", "spearman_ml"]
    for attr, want in pinned.items():
        assert t.loc[attr, cols].astype(float).tolist() == pytest.approx(want, abs=6e-5)
        assert t.loc[attr, "n_contexts"] == 100
    # the Rankings and Position bias pages compute the same numbers
    from pages.services.bias import rerank
    from pages.services.comparisons import reference_for
    from pages.services.rankings import compute_rankings

    pm = data.comparisons_to_P(ds.comparisons, attribute="coherence", judge=JUDGE)
    ref = reference_for(ds, "coherence", pm)
    agree = compute_rankings(pm, ref).agreement.set_index("method")
    row = t.loc["coherence"]
    assert row.spearman_wr == pytest.approx(agree.loc["win-ratio", "spearman"], abs=1e-12)
    assert row.spearman_ml == pytest.approx(agree.loc["maximum likelihood", "spearman"], abs=1e-12)
    debiased = rerank(pm.P, ref.scores, row.balanced_tau)
    assert row.accuracy_debiased == pytest.approx(debiased.accuracy, abs=1e-12)
    assert row.spearman_debiased == pytest.approx(debiased.spearman, abs=1e-12)
    assert row.p_first == pytest.approx(rerank(pm.P, ref.scores, 0.5).position_bias, abs=1e-12)


@pytest.mark.slow
def test_summeval_subset_table_pinned():
    ds = summeval_or_skip()
    s = subset_table(ds, "coherence", JUDGE)
    assert s.n.tolist() == [2, 3, 4, 6, 8, 12]
    assert s.final.round(4).tolist() == [0.8474, 0.8625, 0.8731, 0.8879, 0.9090, 1.0]
    assert s.gold.round(4).tolist() == [0.6047, 0.6193, 0.6119, 0.5904, 0.5849, 0.5932]
    assert (s.n_contexts == 100).all() and (s.n_draws == 50).all()
    # the full set's gold is the pairwise accuracy of the full win-ratio ranking
    import ranking as rk

    pm = data.comparisons_to_P(ds.comparisons, attribute="coherence", judge=JUDGE)
    hs = data.scores_to_matrix(ds.human_scores, pm, attribute="coherence")
    full = rk.pairwise_accuracy(rk.order_matrix(rk.win_ratio(pm.P, tau=0.5)), hs)
    assert s.gold.iloc[-1] == pytest.approx(float(full), abs=1e-12)
    # another seed moves the small subsets, not the full set
    other = subset_table(ds, "coherence", JUDGE, random_state=1)
    assert other.final.iloc[0] != s.final.iloc[0]
    assert other.final.iloc[-1] == 1.0 and other.gold.iloc[-1] == s.gold.iloc[-1]


def _same_reference(ds, attribute, pm, annotators=None):
    from data.comparative.tables import human_scores_for
    from tests.data._slow_twins import slow_human_scores_for

    got = human_scores_for(ds, attribute, pm, annotators)
    want = slow_human_scores_for(ds, attribute, pm, annotators)
    assert got[1] == want[1]
    assert (got[0] is None) == (want[0] is None)
    if got[0] is not None:
        assert got[0].tobytes() == want[0].tobytes()  # bit for bit, NaN where NaN
    return got


def test_human_scores_for_equals_its_slow_twin():
    """Mean scores; pooled verdicts with a row outside the layout, a human judge left out
    (the P's own), none at all; the simulated judge with holes; SummEval and PandaLM."""
    from data.comparative.tables import judge_pmatrix
    from tests.data.test_arrays_exact import holes_dataset

    ds = make_ds({"gpt": p_right})
    pm = judge_pmatrix(ds, "coh", "gpt")
    assert _same_reference(ds, "coh", pm)[1].startswith("mean human score")
    votes = make_ds({"gpt": p_first_biased, "human:a": p_right, "human:b": p_right}, human=False)
    extra = votes.comparisons.iloc[:1].assign(first_id="outsider", judge="human:a")
    votes = Dataset(
        name="votes", contexts=votes.contexts, candidates=votes.candidates,
        human_scores=votes.human_scores, comparisons=pd.concat([votes.comparisons, extra]),
    )  # fmt: skip
    for judge in ("gpt", "human:a"):
        got = _same_reference(votes, "coh", judge_pmatrix(votes, "coh", judge))
        assert "pooled verdicts" in got[1]
    assert _same_reference(votes, "other", pm)[0] is None
    holes = holes_dataset()
    _same_reference(holes, "quality", judge_pmatrix(holes, "quality", "simulated"))
    for name, attribute in (("summeval", "coherence"), ("pandalm", "overall")):
        try:
            real = data.load_benchmark(name)
        except (DataError, OSError):
            continue
        for judge in sorted(set(real.comparisons["judge"].astype(str))):
            _same_reference(real, attribute, judge_pmatrix(real, attribute, judge))
