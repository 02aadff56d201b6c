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


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float, float, int]:
    """(mean, standard deviation, half-width of the t interval of the mean, n)."""
    v = values[np.isfinite(values)]
    n = int(v.size)
    if n == 0:
        return np.nan, np.nan, np.nan, 0
    if n == 1:
        return float(v[0]), np.nan, np.nan, 1
    sd = float(v.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / np.sqrt(n))
    return float(v.mean()), sd, half, n


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
    rows = []
    for system, g in scores.groupby("system", sort=False, observed=True):
        attrs = g["attribute"].astype(str)
        for attribute in [*order, AVERAGE]:
            x = g["score"] if attribute == AVERAGE else g.loc[attrs == attribute, "score"]
            mean, sd, half, n = _interval(x.to_numpy(dtype=np.float64), confidence)
            rows.append(
                dict(
                    system=str(system),
                    attribute=attribute,
                    mean=mean,
                    sd=sd,
                    half_width=half,
                    lower=mean - half,
                    upper=mean + half,
                    n=n,
                )
            )
    return pd.DataFrame(rows, columns=SYSTEM_RATINGS_COLUMNS)
