"""The files a new user brings, made from HANNA: a wide CSV of stories with their prompt
(context text), model (system) and human scores, and a pairwise-verdict CSV on the same
stories with a few verdicts no reader understands."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import data

#: A small slice of HANNA keeps the judge run in the browser short.
SYSTEMS = ["GPT-2", "Human", "CTRL", "XLNet"]
N_CONTEXTS = 5
GARBAGE_ROWS = (4, 5, 6)  # 0-based rows of the pairwise file whose verdict is garbage


def hanna_wide_csv(folder: Path) -> Path:
    """One row per story and annotator: prompt_id, prompt, model, story, annotator, scores."""
    ds = data.load_benchmark("hanna")
    contexts = ds.contexts["context_id"].drop_duplicates().tolist()[:N_CONTEXTS]
    cand = ds.candidates[
        ds.candidates["context_id"].isin(contexts) & ds.candidates["candidate_id"].isin(SYSTEMS)
    ]
    scores = ds.human_scores.pivot_table(
        index=["context_id", "candidate_id", "annotator"], columns="attribute", values="score"
    ).reset_index()
    wide = (
        cand[["context_id", "candidate_id", "text"]]
        .merge(ds.contexts.rename(columns={"text": "prompt"}), on="context_id")
        .merge(scores, on=["context_id", "candidate_id"])
        .rename(columns={"context_id": "prompt_id", "candidate_id": "model", "text": "story"})
    )
    wide = wide[
        ["prompt_id", "prompt", "model", "story", "annotator", "coherence", "relevance", "empathy"]
    ]
    path = folder / "hanna_stories.csv"
    wide.to_csv(path, index=False)
    return path


def verdicts_csv(folder: Path) -> Path:
    """Crowd verdicts on every ordered pair of the slice (winner A/B/tie), some garbage."""
    ds = data.load_benchmark("hanna")
    contexts = ds.contexts["context_id"].drop_duplicates().tolist()[:N_CONTEXTS]
    mean = (
        ds.human_scores[ds.human_scores["attribute"] == "coherence"]
        .groupby(["context_id", "candidate_id"])["score"]
        .mean()
    )
    rows = []
    for c in contexts:
        for a in SYSTEMS:
            for b in SYSTEMS:
                if a == b:
                    continue
                diff = mean[(c, a)] - mean[(c, b)]
                rows.append(
                    {
                        "prompt_id": c,
                        "model_a": a,
                        "model_b": b,
                        "winner": "A" if diff > 0 else "B" if diff < 0 else "tie",
                    }
                )
    frame = pd.DataFrame(rows)
    frame.loc[list(GARBAGE_ROWS), "winner"] = "garbage"
    path = folder / "crowd_verdicts.csv"
    frame.to_csv(path, index=False)
    return path
