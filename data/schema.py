"""The canonical tables every part of JudgeScope shares (see ../shared/DESIGN.md).

Five long-format pandas tables travel together in a :class:`Dataset`. Column specs live
here once; validation (``data.validate``) and the readers/writers check against them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

# Column kinds: "id" (string identifier), "text" (string), "float", "int", "verdict",
# "grade" (a whole number from -2 to +2 stored as float64, NaN when there is none) and
# "weight" (a finite number > 0 stored as float64; an empty cell is the default 1).
# Each spec: column -> (kind, required). Optional columns may be absent from a table.
TABLES: dict[str, dict[str, tuple[str, bool]]] = {
    "contexts": {
        "context_id": ("id", True),
        "text": ("text", True),
    },
    "candidates": {
        "context_id": ("id", True),
        "candidate_id": ("id", True),
        "system": ("id", False),
        "text": ("text", True),
    },
    "human_scores": {
        "context_id": ("id", True),
        "candidate_id": ("id", True),
        "attribute": ("id", True),
        "annotator": ("id", True),
        "score": ("float", True),
    },
    "comparisons": {
        "context_id": ("id", True),
        "attribute": ("id", True),
        "judge": ("id", True),
        "first_id": ("id", True),
        "second_id": ("id", True),
        "p_first": ("float", True),  # NaN when the answer could not be parsed
        "verdict": ("verdict", False),  # "A", "B", "tie" or missing
        # graded verdicts (Arena-Hard's A>>B ... B>>A): +2 the first much better, +1 better,
        # 0 a tie, -1 / -2 the second better / much better; NaN for plain verdicts
        "grade": ("grade", False),
        # how many games' worth the row counts (Arena-Hard: 3 for a strong verdict); 1 when
        # absent. A weight is not a sample: "battles" still count the row once.
        "weight": ("weight", False),
        "sample": ("int", True),
        "raw": ("text", False),
    },
    "ratings": {
        "context_id": ("id", True),
        "candidate_id": ("id", True),
        "attribute": ("id", True),
        "judge": ("id", True),
        "prompt_id": ("id", True),
        "sample": ("int", True),
        "score": ("float", True),  # NaN when the answer could not be parsed
        "raw": ("text", False),
    },
}

TABLE_NAMES = tuple(TABLES)

#: The columns that identify one row of each table. Two rows with the same key are refused:
#: they would be counted twice (repeated judge answers are told apart by ``sample``).
ROW_KEYS: dict[str, tuple[str, ...]] = {
    "contexts": ("context_id",),
    "candidates": ("context_id", "candidate_id"),
    "human_scores": ("context_id", "candidate_id", "attribute", "annotator"),
    "comparisons": ("context_id", "attribute", "judge", "first_id", "second_id", "sample"),
    "ratings": ("context_id", "candidate_id", "attribute", "judge", "prompt_id", "sample"),
}
VERDICTS = ("A", "B", "tie")
#: The grades of a graded verdict (``comparisons.grade``): + means the first-shown candidate
#: is better (``data.parsing.vocabulary`` reads the forms judges write into them).
GRADES = (-2, -1, 0, 1, 2)
#: The weight of a comparison row whose file gives none (``comparisons.weight``).
DEFAULT_WEIGHT = 1.0
#: p_first of each verdict: the first-shown candidate wins, loses, or it is a tie.
VERDICT_P_FIRST = {"A": 1.0, "B": 0.0, "tie": 0.5}
# Comparisons whose judge starts with this prefix are human annotators ("human:annotator1").
HUMAN_JUDGE_PREFIX = "human:"
#: The ``prompt_id`` of ratings that come from an automatic measure (BLEU, BERTScore, ...)
#: rather than a prompted judge. Their scores are on the measure's own scale, not on the
#: attribute's ``scales`` range, so range checks skip them.
AUTOMATIC = "automatic"


def is_automatic(prompt_id) -> bool:
    """Whether ``prompt_id`` marks ratings of an automatic measure (:data:`AUTOMATIC`).

    Parameters
    ----------
    prompt_id : object
        A ``prompt_id`` cell of the ratings table.

    Returns
    -------
    bool
        True exactly for ``"automatic"`` (compare a column with ``== AUTOMATIC``).
    """
    return isinstance(prompt_id, str) and prompt_id == AUTOMATIC


class DataError(ValueError):
    """A problem with user or benchmark data.

    The message names the file (or table), the row and the column of every problem found and
    says what to do.

    Parameters
    ----------
    message : str
        The whole message.
    problems : list of str, optional
        The problems one by one; default ``[message]``.

    Attributes
    ----------
    problems : list of str
        The problems one by one, for display.
    """

    def __init__(self, message: str, problems: list[str] | None = None):
        self.problems = problems or [message]
        super().__init__(message)


def empty_table(name: str) -> pd.DataFrame:
    """An empty table with the canonical columns and dtypes of ``name``.

    Parameters
    ----------
    name : str
        One of :data:`TABLE_NAMES`.

    Returns
    -------
    pandas.DataFrame
        No rows; the columns of ``TABLES[name]`` in order, ``float64`` for floats (grades
        and weights too), ``int64`` for whole numbers, ``object`` for the rest.

    Raises
    ------
    KeyError
        ``name`` is not a table name.
    """
    spec = TABLES[name]
    cols = {}
    for col, (kind, _required) in spec.items():
        if kind in ("float", "grade", "weight"):
            cols[col] = pd.Series(dtype="float64")
        elif kind == "int":
            cols[col] = pd.Series(dtype="int64")
        else:
            cols[col] = pd.Series(dtype="object")
    return pd.DataFrame(cols)


@dataclass
class Dataset:
    """Contexts, candidates, human scores and judge outputs of one evaluation set.

    Attributes
    ----------
    name : str
        Shown to the user and in messages.
    contexts, candidates, human_scores, comparisons, ratings : pandas.DataFrame
        The five canonical tables (:data:`TABLES`); any of them may be empty (the default).
        ``data.validate.validate_dataset`` brings them to their canonical form.
    scales : dict of str to (float, float)
        Attribute -> its (low, high) human score range (also the range of prompted judges'
        ratings; automatic-measure ratings, ``prompt_id`` :data:`AUTOMATIC`, are on their
        measure's own scale).
    description, source : str
        Shown to the user.
    sources : dict of str to list of str
        Table name -> the files its rows came from, in the order they were added (filled by
        uploads and ``data.io.merge``; empty for benchmarks, whose ``source`` says it all).
    reference_systems : tuple of str
        Systems (values of ``candidates.system``) that are references rather than generators,
        e.g. HANNA's human-written story ``("Human",)``. Analyses leave them out by default
        (``data.scope.systems.default_excluded``); a filtered view may lack them. Kept by
        validation, ``data.io.merge`` (union) and the workspace and folder files.
    """

    name: str
    contexts: pd.DataFrame = field(default_factory=lambda: empty_table("contexts"))
    candidates: pd.DataFrame = field(default_factory=lambda: empty_table("candidates"))
    human_scores: pd.DataFrame = field(default_factory=lambda: empty_table("human_scores"))
    comparisons: pd.DataFrame = field(default_factory=lambda: empty_table("comparisons"))
    ratings: pd.DataFrame = field(default_factory=lambda: empty_table("ratings"))
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)
    description: str = ""
    source: str = ""
    sources: dict[str, list[str]] = field(default_factory=dict)
    reference_systems: tuple[str, ...] = ()

    def table(self, name: str) -> pd.DataFrame:
        """The table called ``name`` (one of :data:`TABLE_NAMES`)."""
        return getattr(self, name)

    @property
    def attributes(self) -> list[str]:
        """Attributes that appear in human scores, comparisons or ratings, sorted."""
        found: set[str] = set()
        for name in ("human_scores", "comparisons", "ratings"):
            t = self.table(name)
            if len(t):
                found.update(t["attribute"].astype(str).unique())
        return sorted(found)

    @property
    def judges(self) -> list[str]:
        """Judges that appear in comparisons or ratings, sorted."""
        found: set[str] = set()
        for name in ("comparisons", "ratings"):
            t = self.table(name)
            if len(t):
                found.update(t["judge"].astype(str).unique())
        return sorted(found)

    def all_candidates(self) -> pd.DataFrame:
        """The candidates table, plus one row per (context, candidate) that the comparisons,
        human scores or ratings name and the table lacks (system and text missing), in order
        of first appearance.

        What an analysis orders and indexes candidates by: a file of pairwise verdicts
        without texts brings comparisons and no candidates table, and its candidates are
        still the ones it compares. The table itself is left as it is (it holds what the
        user gave)."""
        pairs = [self.candidates[["context_id", "candidate_id"]]]
        for table, cols in (
            ("comparisons", ("first_id", "second_id")),
            ("human_scores", ("candidate_id",)),
            ("ratings", ("candidate_id",)),
        ):
            t = self.table(table)
            pairs += [  # each deduplicated first: 100k comparisons name a few thousand
                t[["context_id", c]]
                .drop_duplicates()
                .set_axis(["context_id", "candidate_id"], axis=1)
                for c in cols
            ]
        named = pd.concat(pairs, ignore_index=True).astype(str).drop_duplicates()
        have = pd.MultiIndex.from_frame(self.candidates[["context_id", "candidate_id"]].astype(str))
        extra = named[~pd.MultiIndex.from_frame(named).isin(have)]
        if not len(extra):
            return self.candidates
        extra = extra.reindex(columns=self.candidates.columns)  # system and text missing
        if not len(self.candidates):
            return extra.reset_index(drop=True)
        return pd.concat([self.candidates, extra], ignore_index=True)

    def context_ids(self) -> list[str]:
        """Every context id of any table, in order of first appearance (contexts table first)."""
        ids = [
            self.table(t)["context_id"].astype(str)
            for t in ("contexts", *TABLE_NAMES[1:])
            if len(self.table(t))
        ]
        return pd.unique(pd.concat(ids)).tolist() if ids else []

    def counts(self) -> dict[str, int]:
        """Row counts of each table plus distinct contexts (of any table) / annotators."""
        out = {name: len(self.table(name)) for name in TABLE_NAMES}
        out["n_contexts"] = len(self.context_ids())
        out["n_annotators"] = (
            int(self.human_scores["annotator"].nunique()) if len(self.human_scores) else 0
        )
        return out
