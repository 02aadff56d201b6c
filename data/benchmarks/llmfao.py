"""LLMFAO crowd pairwise votes over 59 LLMs (Ustalov 2023) and the reference ranking scores that
Evalica's tests use, plus Evalica's two toy vote tables."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from data.benchmarks import _common as c
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset

FOLDER = "llmfao_evalica/"
VOTES = FOLDER + "llmfao.csv"
GOLDEN = FOLDER + "{}-golden.csv"
TOY = FOLDER + "{}.csv"
TOY_SETS = ("simple", "food")
ATTRIBUTE = "overall"
_WINNER = {"left": "A", "right": "B", "tie": "tie"}


def files() -> tuple[str, ...]:
    """The relpaths :func:`load` reads: the LLMFAO vote table ``llmfao.csv``."""
    return (VOTES,)


def golden_files(which: str) -> tuple[str, ...]:
    """The file of Evalica's reference scores on a vote table.

    Parameters
    ----------
    which : str
        ``"llmfao"`` or a toy set (``"simple"``, ``"food"``); not checked here.

    Returns
    -------
    tuple of str
        Relpath of ``<which>-golden.csv``.
    """
    return (GOLDEN.format(which),)


def toy_files(which: str) -> tuple[str, ...]:
    """The file of one of Evalica's toy vote tables.

    Parameters
    ----------
    which : str
        A toy set (``"simple"``, ``"food"``); not checked here.

    Returns
    -------
    tuple of str
        Relpath of ``<which>.csv``.
    """
    return (TOY.format(which),)


def _read_csv(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [col for col in columns if col not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {missing}; found {list(frame.columns)}")
    return frame


def _votes_to_comparisons(frame: pd.DataFrame, path: Path, context_of, judge_of) -> pd.DataFrame:
    bad = ~frame["winner"].isin(list(_WINNER))
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(
            f"{path}, row {row + 2}, column 'winner': {frame['winner'].iloc[row]!r}, "
            f"expected one of {list(_WINNER)}"
        )
    verdicts = [_WINNER[w] for w in frame["winner"]]
    return c.comparisons(
        {
            "context_id": context_of(frame),
            "attribute": [ATTRIBUTE] * len(frame),
            "judge": judge_of(frame),
            "first_id": frame["left"].tolist(),
            "second_id": frame["right"].tolist(),
            "raw": frame["winner"].tolist(),
        },
        verdicts,
    )


def load(files: dict[str, Path]) -> Dataset:
    """13 prompts x up to 59 models; 8,931 crowd votes (votes only, no texts).

    ``files`` maps each relpath of :func:`files` to its local path.

    Returns
    -------
    Dataset
        Not yet validated. Contexts ``"p<prompt>"`` in numeric order, empty texts; per
        context the models that appear in its votes (sorted; system = model, empty text);
        one comparison per vote on attribute ``"overall"`` by judge ``"human:worker<id>"``,
        ``left`` shown first: left -> A, right -> B, tie -> tie, sample 0, the winner as raw
        text.

    Raises
    ------
    DataError
        A column missing (id, prompt, worker, winner, left, right); a winner other than
        left, right or tie.
    ValueError
        A prompt id that is not an integer.
    """
    path = files[VOTES]
    frame = _read_csv(path, ("id", "prompt", "worker", "winner", "left", "right"))
    contexts = sorted(frame["prompt"].unique(), key=int)
    cand = defaultdict(list)
    for prompt in contexts:
        sub = frame[frame["prompt"] == prompt]
        models = sorted(set(sub["left"]) | set(sub["right"]))
        for m in models:
            cand["context_id"].append(f"p{prompt}")
            cand["candidate_id"].append(m)
            cand["system"].append(m)
            cand["text"].append("")
    comparisons = _votes_to_comparisons(
        frame,
        path,
        lambda f: ("p" + f["prompt"]).tolist(),
        lambda f: (HUMAN_JUDGE_PREFIX + "worker" + f["worker"]).tolist(),
    )
    n_models = len(set(frame["left"]) | set(frame["right"]))
    return Dataset(
        name="llmfao",
        contexts=c.table(
            "contexts", {"context_id": [f"p{p}" for p in contexts], "text": [""] * len(contexts)}
        ),
        candidates=c.table("candidates", cand),
        comparisons=comparisons,
        description=(
            f"LLMFAO: {len(frame):,} crowd pairwise votes on the answers of {n_models} LLMs to "
            f"{len(contexts)} prompts (contexts 'p<prompt id>'; prompt and answer texts were not "
            "published, so texts are empty: votes only). Each vote is a comparison by judge "
            "'human:worker<id>'; left shown first: left -> A, right -> B, tie -> tie (attribute "
            "'overall'). Evalica's reference scores for win rate, Bradley-Terry, Elo, eigen, "
            "PageRank, Newman and counting on these votes: data.benchmarks.llmfao_golden()."
        ),
        source="dustalov/evalica@2ebe79e llmfao.csv (Apache-2.0).",
    )


def load_golden(path: Path) -> pd.DataFrame:
    """Reference scores: columns algorithm, item (str), score (float64).

    Parameters
    ----------
    path : Path
        A ``<which>-golden.csv`` file.

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, item), in file order.

    Raises
    ------
    DataError
        A column missing; a score that is not a number.
    """
    frame = _read_csv(path, ("algorithm", "item", "score"))
    try:
        scores = frame["score"].astype(np.float64)
    except ValueError as exc:
        raise DataError(f"{path}, column 'score': not all numbers ({exc})") from exc
    return pd.DataFrame({"algorithm": frame["algorithm"], "item": frame["item"], "score": scores})


def load_toy(which: str, path: Path) -> Dataset:
    """One of Evalica's toy vote tables as one context with comparisons only.

    Parameters
    ----------
    which : str
        The toy set's name: context id, and ``"evalica_<which>"`` as dataset name.
    path : Path
        Its ``<which>.csv`` file.

    Returns
    -------
    Dataset
        Not yet validated. One context ``which`` (empty text); the voted items as
        candidates (sorted; system = item, empty texts); one comparison per vote on
        attribute ``"overall"`` by judge ``"human:unknown"``, ``left`` shown first, the
        repeated votes on an ordered pair numbered as samples 0, 1, ...

    Raises
    ------
    DataError
        A column missing (left, right, winner); a winner other than left, right or tie.
    """
    frame = _read_csv(path, ("left", "right", "winner"))
    items = sorted(set(frame["left"]) | set(frame["right"]))
    n = len(items)
    comparisons = _votes_to_comparisons(
        frame, path, lambda f: [which] * len(f), lambda f: [f"{HUMAN_JUDGE_PREFIX}unknown"] * len(f)
    )
    # Voters are anonymous, so repeated votes on the same ordered pair are numbered as samples.
    comparisons["sample"] = (
        comparisons.groupby(["first_id", "second_id"]).cumcount().astype(np.int64)
    )
    return Dataset(
        name=f"evalica_{which}",
        contexts=c.table("contexts", {"context_id": [which], "text": [""]}),
        candidates=c.table(
            "candidates",
            {"context_id": [which] * n, "candidate_id": items, "system": items, "text": [""] * n},
        ),
        comparisons=comparisons,
        description=(
            f"Evalica's toy vote table '{which}.csv' ({len(frame)} votes, {n} items; left shown "
            f"first), with reference scores in llmfao_golden(which='{which}')."
        ),
        source=f"dustalov/evalica@2ebe79e {which}.csv (Apache-2.0).",
    )
