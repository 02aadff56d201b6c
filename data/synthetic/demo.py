"""The offline demo dataset the app opens on.

Twelve invented news items, each summarised by six made-up systems with distinct styles
(hand-written texts in ``data/synthetic/demo_texts.json``). Every system has a typical level of
consistency (facts right) and fluency on a 1-5 scale; the simulator (``data.synthetic.simulate``)
turns these levels, with a little per-item variation, into three annotators' scores, a
position-biased pairwise judge over both orders of every pair, and judge Likert ratings
under two prompts with three samples each. So every page has something to show: rankings
that differ by attribute (the fluent hallucinator, the correct but clumsy keyword list),
a visible first-slot preference, and sample-to-sample variation.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from data.schema import Dataset
from data.synthetic.simulate import simulate_with_truth
from data.validate import validate_dataset

TEXTS_FILE = Path(__file__).resolve().with_name("demo_texts.json")

ATTRIBUTES = ("consistency", "fluency")

#: Typical (consistency, fluency) of each system on the 1-5 scale.
SYSTEM_LEVELS = {
    "large": (4.6, 4.7),
    "lead": (4.4, 4.2),
    "small": (3.7, 2.6),
    "hallucinator": (1.6, 4.5),
    "keywords": (3.2, 1.4),
    "truncated": (2.6, 1.9),
}

#: Standard deviation of the per-item deviation from the system level (scale points).
ITEM_SPREAD = 0.25
JUDGE_NAME = "demo-judge (simulated)"
PROMPTS = ("plain", "explain")
SEED = 2024


def demo_dataset() -> Dataset:
    """The bundled demo: 12 contexts x 6 candidates, 2 attributes, simulated judgements.

    Returns
    -------
    Dataset
        Validated; candidates are named after their system (``large``, ``lead``, ...).
        Comparisons: one position-biased soft judge (``JUDGE_NAME``), every ordered pair
        of every context for both attributes. Ratings: the same judge under
        ``PROMPTS``, three samples each. Human scores: annotators ``human_1``-``human_3``.

    Raises
    ------
    ValueError
        A context of ``data/synthetic/demo_texts.json`` does not have one text for each system of
        ``SYSTEM_LEVELS`` (no more, no fewer).
    """
    texts = json.loads(TEXTS_FILE.read_text(encoding="utf-8"))
    contexts = texts["contexts"]
    systems = list(SYSTEM_LEVELS)
    n_contexts, n_candidates = len(contexts), len(systems)
    for ctx in contexts:
        if set(ctx["candidates"]) != set(systems):
            raise ValueError(f"{TEXTS_FILE}: context {ctx['id']} must have one text per system")

    rng = np.random.default_rng(SEED)
    levels = np.array([SYSTEM_LEVELS[s] for s in systems]).T  # (n_attributes, n_candidates)
    jitter = ITEM_SPREAD * rng.standard_normal((len(ATTRIBUTES), n_contexts, n_candidates))
    # simulate's Likert map on 1-5 is score = 3 + q
    quality = levels[:, None, :] - 3.0 + jitter
    ds, _truth = simulate_with_truth(
        n_contexts,
        n_candidates,
        attributes=ATTRIBUTES,
        n_annotators=3,
        judge_noise=0.6,
        position_bias=0.8,
        mode="soft",
        n_samples=3,
        likert=True,
        scale=(1, 5),
        prompts=PROMPTS,
        quality=quality,
        random_state=rng,
        judge_name=JUDGE_NAME,
    )

    ctx_map = {f"d{k:02d}": c["id"] for k, c in enumerate(contexts)}
    cand_map = {f"c{k}": s for k, s in enumerate(systems)}
    for name in ("contexts", "candidates", "human_scores", "comparisons", "ratings"):
        table = ds.table(name)
        table["context_id"] = table["context_id"].map(ctx_map).astype("str")
        for col in ("candidate_id", "first_id", "second_id"):
            if col in table.columns:
                table[col] = table[col].map(cand_map).astype("str")
    ds.contexts["text"] = [c["text"] for c in contexts]
    ds.candidates["system"] = ds.candidates["candidate_id"]
    by_context = {c["id"]: c["candidates"] for c in contexts}
    ds.candidates["text"] = [
        by_context[c][s]
        for c, s in zip(ds.candidates["context_id"], ds.candidates["candidate_id"], strict=True)
    ]
    ds.name = "demo"
    ds.source = "bundled demo (data/synthetic/demo_texts.json + data.synthetic.simulate)"
    ds.description = (
        "Offline demo: 12 invented news items, each summarised by 6 made-up systems "
        "(large, lead, small, hallucinator, keywords, truncated), scored on consistency and "
        "fluency (1-5) by 3 simulated annotators. A simulated pairwise judge with a "
        "first-position bias compares every ordered pair; the same judge gives 1-5 ratings "
        "under two prompts ('plain', 'explain'), 3 samples each. Texts are hand-written; all "
        "scores and judgements are simulated."
    )
    return validate_dataset(ds)
