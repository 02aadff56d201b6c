"""Judge-only, human-only and PPI++ estimates per system, and interval width against the
number of human labels (``ranking.ppi`` does the statistics)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from data.ppi.units import PPIUnits
from ranking import bradley_terry, ppi_bradley_terry, ppi_mean
from ranking.ppi import classical_mean

#: The three estimates, in display order.
METHODS = ("judge only", "human only", "PPI++")
#: Columns of :func:`ppi_estimates`.
ESTIMATE_COLUMNS = [
    "system",
    "method",
    "estimate",
    "lower",
    "upper",
    "width",
    "n_labeled",
    "n_unlabeled",
    "lam",
    "note",
]
#: Columns of :func:`width_curve`.
CURVE_COLUMNS = ["n_labels", "method", "width", "width_q25", "width_q75", "coverage", "failed"]


def _labelled_ids(units: PPIUnits, n_labels, rng) -> np.ndarray:
    ids = units.frame.loc[units.frame["human"].notna(), "label_id"].unique()
    if n_labels is None or n_labels >= len(ids):
        return ids
    if n_labels < 2:
        raise ValueError(f"n_labels must be at least 2; got {n_labels}")
    return rng.choice(ids, int(n_labels), replace=False)


def _mean_rows(units, lab_ids, confidence):
    """Per system: the three estimates of a mean (or win rate: a mean of outcomes)."""
    f = units.frame
    rows = []
    for s in units.systems:
        g = f[f["system"] == s]
        if not len(g):
            continue
        lab = g["label_id"].isin(lab_ids).to_numpy() & g["human"].notna().to_numpy()
        y, yh = g["human"].to_numpy(float), g["judge"].to_numpy(float)
        fits = {}
        try:
            fits["judge only"] = classical_mean(yh, confidence=confidence)
        except ValueError as err:
            fits["judge only"] = str(err)
        for method, lam in (("human only", 0.0), ("PPI++", None)):
            try:
                fits[method] = ppi_mean(y[lab], yh[lab], yh[~lab], lam=lam, confidence=confidence)
            except ValueError as err:
                fits[method] = str(err)
        for method in METHODS:
            r = fits[method]
            if isinstance(r, str):
                rows.append(
                    [s, method, *[np.nan] * 4, int(lab.sum()), int((~lab).sum()), np.nan, r]
                )
            else:
                rows.append(
                    [
                        s,
                        method,
                        r.estimate[0],
                        r.lower[0],
                        r.upper[0],
                        r.width[0],
                        r.n_labeled,
                        r.n_unlabeled,
                        r.lam,
                        "; ".join(r.notes),
                    ]
                )
    return rows


def _bt_arrays(units):
    f = units.frame
    code = {s: i for i, s in enumerate(units.systems)}
    first = f["system"].map(code).to_numpy(np.int64)
    second = f["opponent"].map(code).to_numpy(np.int64)
    return first, second, f["human"].to_numpy(float), f["judge"].to_numpy(float)


def _bt_rows(units, lab_ids, confidence):
    first, second, y, yh = _bt_arrays(units)
    k = len(units.systems)
    lab = units.frame["label_id"].isin(lab_ids).to_numpy() & np.isfinite(y)
    fits = {}
    try:
        j = bradley_terry(
            first=first,
            second=second,
            outcome=yh,
            n_items=k,
            intervals="fisher",
            confidence=confidence,
        )
        fits["judge only"] = (j.scores, j.lower, j.upper, 0.0, "")
    except ValueError as err:
        fits["judge only"] = str(err)
    for method, lam in (("human only", 0.0), ("PPI++", None)):
        try:
            r = ppi_bradley_terry(first, second, y, yh, lab, k, lam=lam, confidence=confidence)
            fits[method] = (r.estimate, r.lower, r.upper, r.lam, "; ".join(r.notes))
        except ValueError as err:
            fits[method] = str(err)
    rows = []
    for i, s in enumerate(units.systems):
        for method in METHODS:
            r = fits[method]
            nl, nu = (int(lab.sum()), int((~lab).sum())) if method != "judge only" else (0, len(y))
            if isinstance(r, str):
                rows.append([s, method, *[np.nan] * 4, nl, nu, np.nan, r])
            else:
                est, lo, hi, lam, note = r
                rows.append([s, method, est[i], lo[i], hi[i], hi[i] - lo[i], nl, nu, lam, note])
    return rows


def ppi_estimates(
    units: PPIUnits, *, n_labels: int | None = None, seed: int = 0, confidence: float = 0.95
) -> pd.DataFrame:
    """Per system: the judge-only, human-only and PPI++ estimates with their intervals.

    Parameters
    ----------
    units : PPIUnits
        From :func:`data.ppi.ppi_units`.
    n_labels : int, optional
        Use the human labels of this many label ids, drawn at random (seeded); None: every
        label we have (then PPI++ has no judge-only unit and equals human-only).
    seed : int
        Seed of the draw.
    confidence : float
        Coverage of the intervals.

    Returns
    -------
    pandas.DataFrame
        :data:`ESTIMATE_COLUMNS`, one row per system and method (:data:`METHODS`); NaN with
        the reason in ``note`` where an estimate is impossible. The judge-only estimate is on
        the judge's scale (a mean) and carries its bias; PPI++ tunes lam, so the judge's
        scale need not match the humans'.
    """
    lab_ids = _labelled_ids(units, n_labels, np.random.default_rng(seed))
    fn = _bt_rows if units.quantity == "bradley_terry" else _mean_rows
    return pd.DataFrame(fn(units, lab_ids, confidence), columns=ESTIMATE_COLUMNS)


def label_grid(n_max: int, n_points: int = 10, n_min: int = 10) -> list[int]:
    """Label counts from ~``n_min`` to ``n_max``, spaced geometrically, ``n_max`` included.

    Parameters
    ----------
    n_max : int
        Every label we have.
    n_points : int
        Points wanted (fewer when rounding makes two equal).
    n_min : int
        The smallest count (at least 2).

    Returns
    -------
    list of int
        Ascending, distinct.
    """
    lo = min(n_min, n_max)
    grid = np.unique(np.round(np.geomspace(max(lo, 2), n_max, n_points)).astype(int))
    return [int(n) for n in grid]


def _subsample_widths(units, ids_lab, full, confidence):
    """Per method: widths and whether each covers the full-label human estimate."""
    if units.quantity == "bradley_terry":
        first, second, y, yh = _bt_arrays(units)
        lab = units.frame["label_id"].isin(ids_lab).to_numpy() & np.isfinite(y)
        k = len(units.systems)
        out = {}
        for method, lam in (("human only", 0.0), ("PPI++", None)):
            try:
                r = ppi_bradley_terry(first, second, y, yh, lab, k, lam=lam, confidence=confidence)
                out[method] = (r.width, (r.lower <= full) & (full <= r.upper))
            except ValueError:
                out[method] = None
        return out
    f = units.frame
    out = {m: ([], []) for m in ("human only", "PPI++")}
    lab_all = f["label_id"].isin(ids_lab).to_numpy() & f["human"].notna().to_numpy()
    for i, s in enumerate(units.systems):
        sel = (f["system"] == s).to_numpy()
        if not sel.any():
            continue
        lab = lab_all[sel]
        y, yh = f["human"].to_numpy(float)[sel], f["judge"].to_numpy(float)[sel]
        for method, lam in (("human only", 0.0), ("PPI++", None)):
            try:
                r = ppi_mean(y[lab], yh[lab], yh[~lab], lam=lam, confidence=confidence)
                out[method][0].append(r.width[0])
                out[method][1].append(r.lower[0] <= full[i] <= r.upper[0])
            except ValueError:
                out[method][0].append(np.nan)
                out[method][1].append(False)
    return {m: (np.array(w), np.array(c)) for m, (w, c) in out.items()}


def width_curve(
    units: PPIUnits,
    *,
    grid: list[int] | None = None,
    repeats: int = 30,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Interval width against the number of human labels, by subsampling the labels we have.

    For every count n of ``grid`` (default :func:`label_grid` up to every label), ``repeats``
    seeded draws of n label ids: the human-only and PPI++ intervals of every system; the
    judge-only width (all units, no label) is the same for every n.

    Returns
    -------
    pandas.DataFrame
        :data:`CURVE_COLUMNS`: per n and method the median over draws of the mean width over
        systems (with its quartiles), ``coverage`` the share of (draw, system) intervals that
        contain the full-label human estimate (1 at n = every label, by construction; the
        reference is itself an estimate, so this is a check, not a proof of validity), and
        ``failed`` the share of draws with no estimate (too few labels for a system).
    """
    n_max = units.n_labels
    grid = label_grid(n_max) if grid is None else sorted({int(n) for n in grid if 2 <= n <= n_max})
    full_table = ppi_estimates(units, confidence=confidence)
    human = full_table[full_table["method"] == "human only"].set_index("system")["estimate"]
    full = human.reindex(units.systems).to_numpy(float)
    judge = full_table[full_table["method"] == "judge only"]["width"].mean()
    ids = units.frame.loc[units.frame["human"].notna(), "label_id"].unique()
    rng = np.random.default_rng(seed)
    rows = []
    for n in grid:
        draws = 1 if n >= len(ids) else repeats
        acc = {m: ([], [], 0) for m in ("human only", "PPI++")}
        for _ in range(draws):
            sub = ids if n >= len(ids) else rng.choice(ids, n, replace=False)
            res = _subsample_widths(units, sub, full, confidence)
            for m, r in res.items():
                w, c, bad = acc[m]
                if r is None or not np.isfinite(r[0]).any():
                    acc[m] = (w, c, bad + 1)
                    continue
                w.append(np.nanmean(r[0]))
                c.extend(np.asarray(r[1])[np.isfinite(r[0])].tolist())
                acc[m] = (w, c, bad)
        rows.append([n, "judge only", judge, judge, judge, np.nan, 0.0])
        for m, (w, c, bad) in acc.items():
            q = np.percentile(w, [50, 25, 75]) if w else [np.nan] * 3
            rows.append([n, m, q[0], q[1], q[2], np.mean(c) if c else np.nan, bad / draws])
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def _log_interp(x, xs, ys) -> float:
    """Log-log interpolation of ys(xs) at x (xs ascending)."""
    return float(np.exp(np.interp(np.log(x), np.log(xs), np.log(ys))))


def _crossing(xs, ys, target) -> float:
    """The first x at which the width curve ys(xs) gets down to ``target`` (log-log between
    the grid points around the crossing); NaN when it never does. The curve of medians over
    draws need not be monotone at small n, so the first crossing is taken."""
    below = np.flatnonzero(ys <= target * (1 + 1e-9))
    if not len(below):
        return np.nan
    i = int(below[0])
    if i == 0:
        return float(xs[0])
    lx, ly = np.log(xs[i - 1 : i + 1]), np.log(ys[i - 1 : i + 1])
    t = (np.log(target) - ly[0]) / (ly[1] - ly[0])
    return float(np.exp(lx[0] + t * (lx[1] - lx[0])))


#: Grid points whose intervals cover the full-label estimate less often than this (or where
#: some draws had no estimate) are outside the CLT's comfort zone: too few labels per
#: system for the interval to be trusted, so they do not answer "how many labels".
TRUSTED_COVERAGE = 0.9


def trusted(curve: pd.DataFrame) -> pd.Series:
    """Which rows of a :func:`width_curve` table answer questions: a width, coverage at
    least :data:`TRUSTED_COVERAGE` for both human-only and PPI++ at that n, no failed draw.

    Parameters
    ----------
    curve : pandas.DataFrame
        A :func:`width_curve` table.

    Returns
    -------
    pandas.Series of bool
        Aligned with ``curve``'s rows.
    """
    ok = curve["width"].notna() & (
        (curve["coverage"] >= TRUSTED_COVERAGE) | (curve["method"] == "judge only")
    )
    ok &= curve["failed"] == 0
    good_n = ok.groupby(curve["n_labels"]).transform("all")
    return ok & good_n


def _curve(curve: pd.DataFrame, method: str) -> tuple[np.ndarray, np.ndarray]:
    c = curve[(curve["method"] == method) & trusted(curve)].sort_values("n_labels")
    return c["n_labels"].to_numpy(float), c["width"].to_numpy(float)


def effective_labels(curve: pd.DataFrame, n: float) -> float:
    """How many human labels alone give the width PPI++ has with ``n`` labels.

    Read off the two median-width curves of :func:`width_curve` (log-log interpolation,
    trusted points only, see :func:`trusted`);
    at most every label we have (PPI++ cannot beat every label alone: the judge only adds
    the items left unlabelled). NaN when the curves are empty.

    Parameters
    ----------
    curve : pandas.DataFrame
        A :func:`width_curve` table.
    n : float
        Labels used by PPI++.

    Returns
    -------
    float
        Human labels alone giving the same median width.
    """
    nh, wh = _curve(curve, "human only")
    npp, wp = _curve(curve, "PPI++")
    if len(nh) < 2 or len(npp) < 2:
        return np.nan
    n_eff = _crossing(nh, wh, _log_interp(n, npp, wp))
    return float(np.clip(n_eff, nh[0], nh[-1])) if np.isfinite(n_eff) else float(nh[-1])


def labels_needed(curve: pd.DataFrame, n_human: float) -> float:
    """How many labels PPI++ needs for the width that ``n_human`` human labels give alone.

    Log-log interpolation of the trusted points of the median-width curves (see
    :func:`trusted`); ``n_human`` itself when the judge
    does not help. NaN when the curves are empty.

    Parameters
    ----------
    curve : pandas.DataFrame
        A :func:`width_curve` table.
    n_human : float
        Human labels alone.

    Returns
    -------
    float
        Labels PPI++ needs for the same median width (at most ``n_human``).
    """
    nh, wh = _curve(curve, "human only")
    npp, wp = _curve(curve, "PPI++")
    if len(nh) < 2 or len(npp) < 2:
        return np.nan
    n = _crossing(npp, wp, _log_interp(n_human, nh, wh))
    return float(np.clip(n, npp[0], n_human)) if np.isfinite(n) else float(n_human)
