"""A judge's ratings per system and attribute (HANNA, Chhun et al. 2024, Tables 6 and 7)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from data.agreement._tables import ITEM
from data.agreement.reference import judge_scores
from data.schema import Dataset

#: The attribute label of the row that pools every attribute's ratings of a system.
AVERAGE = "Average"
#: Columns of :func:`system_ratings_table`, in order.
SYSTEM_RATINGS_COLUMNS = ["system", "attribute", "mean", "sd", "half_width", "lower", "upper", "n"]


def _moments(values: np.ndarray) -> tuple[float, float, int]:
    """(mean, standard deviation, n) of the finite ``values``: NaN mean without any, NaN
    standard deviation with fewer than two."""
    v = values[np.isfinite(values)]
    n = int(v.size)
    if n == 0:
        return np.nan, np.nan, 0
    return float(v.mean()), float(v.std(ddof=1)) if n > 1 else np.nan, n


def system_ratings_table(
    ds: Dataset, judge: str, prompt_id=None, confidence: float = 0.95
) -> pd.DataFrame:
    """A judge's mean rating per system and attribute, with a t interval of the mean.

    Parameters
    ----------
    ds : Dataset
        Ratings and a ``system`` column in the candidates table.
    judge : str
        The judge.
    prompt_id : str, optional
        Its prompt; default every prompt of the judge.
    confidence : float
        Coverage of the interval.

    Returns
    -------
    pandas.DataFrame
        :data:`SYSTEM_RATINGS_COLUMNS`: one row per system (first-seen order) and attribute
        (the dataset's order), then one with attribute :data:`AVERAGE` pooling every
        attribute; an item's score is the mean of its parsed samples; mean, sd (ddof=1),
        half_width, lower, upper and n (items with a score). Empty without system labels.

    Raises
    ------
    DataError
        A judge or prompt that does not appear in the ratings.
    """
    if "system" not in ds.candidates.columns:
        return pd.DataFrame(columns=SYSTEM_RATINGS_COLUMNS)
    scores = judge_scores(ds, judge=judge, prompt_id=prompt_id)
    sys_of = ds.candidates[[*ITEM, "system"]].drop_duplicates(ITEM)
    scores = scores.merge(sys_of, on=ITEM, how="inner")
    scores = scores[scores["system"].notna()]
    present = set(scores["attribute"].astype(str))
    order = [a for a in ds.attributes if a in present]
    score = scores["score"].to_numpy(dtype=np.float64)
    attrs = scores["attribute"].astype(str).to_numpy()
    sys_codes, systems = pd.factorize(scores["system"])  # first-seen order
    cells = []
    for code, system in enumerate(systems):
        rows = np.flatnonzero(sys_codes == code)
        for attribute in [*order, AVERAGE]:
            x = rows if attribute == AVERAGE else rows[attrs[rows] == attribute]
            cells.append((str(system), attribute, *_moments(score[x])))
    out = pd.DataFrame(cells, columns=["system", "attribute", "mean", "sd", "n"])
    n = out["n"].to_numpy()
    # the t interval of the mean, where there is a standard deviation (two or more items)
    t = stats.t.ppf(0.5 + confidence / 2, np.maximum(n - 1, 1))
    out["half_width"] = np.where(n > 1, t * out["sd"].to_numpy() / np.sqrt(n), np.nan)
    out["lower"] = out["mean"] - out["half_width"]
    out["upper"] = out["mean"] + out["half_width"]
    return out[SYSTEM_RATINGS_COLUMNS]
