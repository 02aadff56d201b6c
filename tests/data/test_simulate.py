"""The synthetic judge simulator and the bundled demo."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from data.arrays import comparisons_to_P, scores_to_matrix
from data.schema import TABLE_NAMES
from data.synthetic.demo import ATTRIBUTES, PROMPTS, SYSTEM_LEVELS, TEXTS_FILE, demo_dataset
from data.synthetic.simulate import simulate, simulate_with_truth
from data.validate import validate_dataset


def mean_spearman_with_truth(ds, truth) -> float:
    """Win-ratio ranking from P per context vs latent truth, averaged over contexts."""
    pm = comparisons_to_P(ds.comparisons, candidates=ds.candidates)
    q = scores_to_matrix(truth, pm, value="quality")
    wins = np.nansum(pm.P, axis=2) + np.nansum(1 - pm.P, axis=1)
    rhos = [spearmanr(wins[c], q[c]).statistic for c in range(len(pm.context_ids))]
    return float(np.mean(rhos))


def test_deterministic_for_a_seed():
    a, ta = simulate_with_truth(4, 5, mode="samples", tie_rate=0.2, n_systems=3, random_state=11)
    b, tb = simulate_with_truth(4, 5, mode="samples", tie_rate=0.2, n_systems=3, random_state=11)
    c, _ = simulate_with_truth(4, 5, mode="samples", tie_rate=0.2, n_systems=3, random_state=12)
    for name in TABLE_NAMES:
        pd.testing.assert_frame_equal(a.table(name), b.table(name))
    pd.testing.assert_frame_equal(ta, tb)
    assert not a.comparisons["p_first"].equals(c.comparisons["p_first"])


def test_shapes_and_validity_soft():
    ds, truth = simulate_with_truth(
        7, 5, attributes=("coh", "flu"), n_annotators=4, prompts=("p1", "p2", "p3"), n_samples=2
    )
    n_pairs = 5 * 4
    assert len(ds.contexts) == 7 and len(ds.candidates) == 35
    assert len(ds.human_scores) == 7 * 5 * 2 * 4
    assert len(ds.comparisons) == 7 * n_pairs * 2  # soft: one row per ordered pair
    assert len(ds.ratings) == 7 * 5 * 2 * 3 * 2
    assert len(truth) == 7 * 5 * 2
    assert ds.scales == {"coh": (1.0, 5.0), "flu": (1.0, 5.0)}
    assert (ds.comparisons["sample"] == 0).all() and ds.comparisons["verdict"].isna().all()
    assert set(ds.human_scores["score"].unique()) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    assert set(ds.ratings["score"].unique()) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    # both orders of every pair, no self-comparison
    c = ds.comparisons[(ds.comparisons.context_id == "d0") & (ds.comparisons.attribute == "coh")]
    pairs = set(zip(c.first_id, c.second_id, strict=True))
    assert len(pairs) == n_pairs and all((b, a) in pairs for a, b in pairs)
    # already canonical: validation changes nothing
    checked = validate_dataset(ds)
    for name in TABLE_NAMES:
        pd.testing.assert_frame_equal(checked.table(name), ds.table(name))


def test_samples_mode_verdicts_and_ties():
    ds = simulate(20, 6, mode="samples", n_samples=5, tie_rate=0.3, likert=False, random_state=1)
    c = ds.comparisons
    assert len(c) == 20 * 30 * 5
    assert sorted(c["sample"].unique()) == [0, 1, 2, 3, 4]
    assert set(c["verdict"]) == {"A", "B", "tie"}
    p_of = {"A": 1.0, "B": 0.0, "tie": 0.5}
    assert (c["verdict"].map(p_of) == c["p_first"]).all()
    assert (c["verdict"] == "tie").mean() == pytest.approx(0.3, abs=0.03)
    assert len(ds.ratings) == 0


def test_sample_mean_estimates_the_soft_probability():
    kwargs = dict(tie_rate=0.2, position_bias=0.5, likert=False, random_state=4)
    soft = simulate(3, 4, mode="soft", **kwargs)
    many = simulate(3, 4, mode="samples", n_samples=400, **kwargs)
    p_soft = comparisons_to_P(soft.comparisons).P
    p_many = comparisons_to_P(many.comparisons).P
    off = np.isfinite(p_soft)
    assert np.isfinite(p_many[off]).all()
    assert np.abs(p_soft[off] - p_many[off]).max() < 0.1


def test_position_bias_raises_first_slot_win_share():
    share = {}
    for bias in (0.0, 1.0):
        ds = simulate(30, 6, position_bias=bias, likert=False, random_state=0)
        share[bias] = (ds.comparisons["p_first"] > 0.5).mean()
    assert abs(share[0.0] - 0.5) < 0.05
    assert share[1.0] > share[0.0] + 0.1


def test_lower_noise_gives_higher_spearman_with_truth():
    rho = {}
    for noise in (0.1, 1.0, 4.0):
        ds, truth = simulate_with_truth(40, 8, judge_noise=noise, likert=False, random_state=3)
        rho[noise] = mean_spearman_with_truth(ds, truth)
    assert rho[0.1] > rho[1.0] > rho[4.0]
    assert rho[0.1] > 0.9


def test_human_scores_follow_the_truth():
    ds, truth = simulate_with_truth(30, 6, n_annotators=3, random_state=8)
    ids = comparisons_to_P(ds.comparisons, candidates=ds.candidates)
    h = scores_to_matrix(ds.human_scores, ids, attribute="quality")
    q = scores_to_matrix(truth, ids, value="quality")
    assert spearmanr(h.ravel(), q.ravel()).statistic > 0.8


def test_systems():
    ds, truth = simulate_with_truth(10, 4, n_systems=6, random_state=2)
    per_context = ds.candidates.groupby("context_id")["system"]
    assert (per_context.nunique() == 4).all()  # distinct within a context
    assert set(ds.candidates["system"]) <= {f"s{k}" for k in range(6)}
    assert (truth["system"] == np.tile(ds.candidates["system"], 1)).all()
    few, _ = simulate_with_truth(3, 5, n_systems=2, random_state=2)
    counts = few.candidates.groupby("context_id")["system"].value_counts()
    assert set(counts) <= {2, 3}  # systems repeat as evenly as possible


def test_given_quality_is_used():
    quality = np.array([[2.0, -2.0, 0.0]])
    ds, truth = simulate_with_truth(
        1, 3, quality=quality, human_noise=0.0, judge_noise=0.0, n_annotators=1, random_state=0
    )
    assert ds.human_scores["score"].tolist() == [5.0, 1.0, 3.0]
    assert truth["quality"].tolist() == [2.0, -2.0, 0.0]
    pm = comparisons_to_P(ds.comparisons)
    assert pm.P[0, 0, 1] == pytest.approx(1 / (1 + np.exp(-4.0)))
    with pytest.raises(ValueError, match="quality must be finite with shape"):
        simulate(1, 3, quality=np.zeros((2, 3)))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_candidates=1), "n_candidates >= 2"),
        (dict(mode="hard"), "mode must be"),
        (dict(tie_rate=1.0), "tie_rate"),
        (dict(scale=(5, 1)), "low < high"),
        (dict(attributes=()), "attributes"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = dict(n_contexts=2, n_candidates=3)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        simulate(**args)


def test_large_simulation_is_complete_and_unbiased():
    """Arena-like size: every ordered pair has all its samples, nothing else, no slot bias."""
    ds = simulate(100, 16, mode="samples", n_samples=5, n_systems=20, random_state=0)
    validate_dataset(ds)
    c = ds.comparisons
    assert (c["first_id"] != c["second_id"]).all()
    per_pair = c.groupby(["context_id", "first_id", "second_id"])["sample"]
    assert per_pair.ngroups == 100 * 16 * 15
    assert (per_pair.apply(lambda s: sorted(s) == [0, 1, 2, 3, 4])).all()
    # no position bias was asked for: the first slot wins about half of the decided verdicts
    decided = c[c["verdict"] != "tie"]
    assert (decided["verdict"] == "A").mean() == pytest.approx(0.5, abs=0.02)
    # the samples of one ordered pair share its probability: unanimous far more often than
    # five fair coins would be (2 / 32)
    p = c.groupby(["context_id", "first_id", "second_id"])["p_first"].mean()
    assert ((p == 0) | (p == 1)).mean() > 3 * 2 / 32


# --- demo


def test_demo_dataset_is_valid_and_complete():
    ds = demo_dataset()
    validate_dataset(ds)
    assert ds.name == "demo"
    assert len(ds.contexts) == 12 and len(ds.candidates) == 72
    assert ds.attributes == sorted(ATTRIBUTES)
    assert ds.human_scores["annotator"].nunique() == 3
    assert set(ds.ratings["prompt_id"]) == set(PROMPTS)
    assert sorted(ds.ratings["sample"].unique()) == [0, 1, 2]
    assert (ds.contexts["text"].str.len() > 50).all()
    assert (ds.candidates["text"].str.len() > 20).all()
    assert set(ds.candidates["candidate_id"]) == set(SYSTEM_LEVELS)
    assert (ds.candidates["system"] == ds.candidates["candidate_id"]).all()
    # both orders of every pair, for each attribute
    assert len(ds.comparisons) == 12 * 6 * 5 * 2
    assert TEXTS_FILE.stat().st_size < 50_000


def test_demo_shows_position_bias_and_attribute_profiles():
    ds = demo_dataset()
    assert (ds.comparisons["p_first"] > 0.5).mean() > 0.55
    means = ds.human_scores.groupby(["attribute", "candidate_id"])["score"].mean()
    assert means["consistency", "hallucinator"] < means["consistency", "large"] - 2
    assert means["fluency", "hallucinator"] > means["fluency", "keywords"] + 2


def test_demo_is_the_same_every_time():
    a, b = demo_dataset(), demo_dataset()
    for name in TABLE_NAMES:
        pd.testing.assert_frame_equal(a.table(name), b.table(name))


# --- issue 13: known length bias, gap-dependent position bias, cycles, texts


def test_new_options_at_defaults_keep_every_draw():
    base, tb = simulate_with_truth(5, 4, mode="samples", position_bias=0.7, random_state=4)
    same, ts = simulate_with_truth(
        5, 4, mode="samples", position_bias=0.7, random_state=4, length_bias=0.0, cycles=0
    )
    for name in TABLE_NAMES:
        pd.testing.assert_frame_equal(base.table(name), same.table(name))
    pd.testing.assert_frame_equal(tb, ts)
    # texts come from a child generator: every other draw stays the same
    txt, tt = simulate_with_truth(
        5, 4, mode="samples", position_bias=0.7, random_state=4, texts=True
    )
    for name in ("contexts", "human_scores", "comparisons", "ratings"):
        pd.testing.assert_frame_equal(base.table(name), txt.table(name))
    pd.testing.assert_frame_equal(tb, tt.drop(columns="words"))
    assert base.description in txt.description and "true biases" in txt.description


def test_texts_have_the_drawn_word_counts_and_some_markdown():
    from data.bias.features import text_features

    ds, truth = simulate_with_truth(40, 5, texts=True, attributes=("a", "b"), random_state=1)
    f = text_features(ds.candidates["text"])
    words = truth[truth.attribute == "a"]["words"].to_numpy()
    np.testing.assert_array_equal(f["words"].to_numpy(), words)
    np.testing.assert_array_equal(truth[truth.attribute == "b"]["words"].to_numpy(), words)
    assert words.min() >= 20 and words.max() <= 200 and words.std() > 30
    for col in ("headers", "lists", "bold"):
        share = (f[col] > 0).mean()
        assert 0.1 < share < 0.6, (col, share)
    assert f["headers"].max() == 1 and f["lists"].max() <= 4 and f["bold"].max() <= 3


def test_length_bias_and_position_decay_enter_the_logit_exactly():
    from data.bias.features import normalized_diff

    q = np.array([[0.0, 1.0, 3.0]])
    ds, truth = simulate_with_truth(
        1,
        3,
        quality=q,
        judge_noise=0.0,
        position_bias=0.8,
        position_bias_decay=0.5,
        length_bias=1.5,
        likert=False,
        n_annotators=0,
    )
    w = truth["words"].to_numpy()
    c = ds.comparisons
    i = c["first_id"].str[1:].astype(int).to_numpy()
    j = c["second_id"].str[1:].astype(int).to_numpy()
    d = q[0, i] - q[0, j]
    logit = d + 0.8 * np.exp(-0.5 * np.abs(d)) + 1.5 * normalized_diff(w[i], w[j])
    np.testing.assert_allclose(c["p_first"], 1 / (1 + np.exp(-logit)))
    assert "length bias 1.5" in ds.description and "exp(-0.5" in ds.description


def test_cycles_reverse_first_and_third():
    q = np.array([[2.0, 1.0, 0.0, -1.0]] * 3)
    ds, _ = simulate_with_truth(3, 4, quality=q, judge_noise=0.0, cycles=2, likert=False)
    P = comparisons_to_P(ds.comparisons, candidates=ds.candidates).P
    for c in range(3):
        prefers_third = P[c, 2, 0] > 0.5 and P[c, 0, 2] < 0.5
        assert prefers_third == (c < 2)
        assert P[c, 0, 1] > 0.5 and P[c, 1, 2] > 0.5 and P[c, 0, 3] > 0.5
    assert "2 intransitive context(s) (d0, d1" in ds.description
    for bad in (dict(cycles=4), dict(cycles=-1)):
        with pytest.raises(ValueError, match="cycles"):
            simulate_with_truth(3, 4, **bad)
    with pytest.raises(ValueError, match="n_candidates >= 3"):
        simulate_with_truth(3, 2, cycles=1)
    with pytest.raises(ValueError, match="position_bias_decay"):
        simulate_with_truth(3, 2, position_bias_decay=-1)
