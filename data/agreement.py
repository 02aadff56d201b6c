"""Agreement tables: where the canonical tables meet the agreement statistics of ``ranking``.

Each function takes a :class:`~data.schema.Dataset` (plus a selection of judges, Eval-Prompts
and attributes) and returns a tidy DataFrame; the statistics themselves live in
``ranking/correlations.py``, ``ranking/reliability.py`` and ``ranking/significance.py``. The
``level`` column of the tables is the aggregation unit (item, system, overall) of the
correlation. From the command line::

    python -m data.agreement --benchmark hanna [--judge J ...] [--attribute A ...]

prints the human inter-annotator agreement, the human baseline, judge-human correlations,
the Williams + Benjamini-Hochberg matrices between judges and judge self-consistency.

The human reference is the mean over the chosen annotators of each (context, candidate,
attribute). Annotators named ``<group>_<n>`` (``expert_1``, ``crowd_3``) form groups; when a
data set has several groups the reference must be chosen with ``annotators=``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

import ranking as rk
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset
from ranking._score_checks import check_choice
from ranking.correlations import KENDALL_VARIANTS, METHODS, UNITS

__all__ = [
    "annotator_groups",
    "human_reference",
    "judge_scores",
    "aligned_scores",
    "correlation_table",
    "williams_table",
    "williams_matrix_frame",
    "iaa_table",
    "human_baseline_table",
    "self_consistency_table",
    "pairwise_accuracy_table",
    "verdict_agreement_table",
    "main",
]

ITEM = ["context_id", "candidate_id"]
_GROUP = re.compile(r"^(?P<group>.+?)[_\-]?\d+$")


# ----------------------------------------------------------------------------- selection


def _as_list(value) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _pick(table: pd.DataFrame, column: str, wanted, what: str) -> pd.DataFrame:
    """Rows whose ``column`` is in ``wanted`` (None: all); unknown names raise DataError."""
    wanted = _as_list(wanted)
    if wanted is None:
        return table
    known = set(table[column].astype(str).unique())
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise DataError(
            f"{what}: {column} {', '.join(map(repr, unknown))} not found; available: "
            f"{', '.join(map(repr, sorted(known)))}"
        )
    return table[table[column].astype(str).isin(wanted)]


def annotator_groups(ds: Dataset) -> dict[str, list[str]]:
    """Annotators grouped by name: ``expert_1``..``expert_3`` -> ``expert``.

    A name without a trailing number is a group of its own (``expert_mean``, ``mean``).
    """
    groups: dict[str, list[str]] = {}
    names = (
        sorted(ds.human_scores["annotator"].astype(str).unique()) if len(ds.human_scores) else []
    )
    for name in names:
        m = _GROUP.match(name)
        groups.setdefault(m.group("group") if m else name, []).append(name)
    return groups


def _reference_annotators(ds: Dataset, annotators) -> list[str]:
    if annotators is not None:
        return _as_list(annotators)
    groups = annotator_groups(ds)
    if not groups:
        raise DataError(f"{ds.name}: no human scores; agreement with humans needs them")
    if len(groups) > 1:
        listing = "; ".join(f"{g}: {', '.join(m)}" for g, m in groups.items())
        raise DataError(
            f"{ds.name}: human scores come from several annotator groups ({listing}); pass "
            "annotators=[...] (--annotators on the command line) to choose the human reference"
        )
    return next(iter(groups.values()))


def human_reference(ds: Dataset, annotators=None, attribute=None) -> pd.DataFrame:
    """Mean human score per (context, candidate, attribute) over the chosen annotators.

    Returns columns context_id, candidate_id, attribute, human, n_annotators. NaN scores are
    left out of the mean.
    """
    names = _reference_annotators(ds, annotators)
    hs = _pick(ds.human_scores, "annotator", names, f"{ds.name} human_scores")
    hs = _pick(hs, "attribute", attribute, f"{ds.name} human_scores")
    out = (
        hs.groupby([*ITEM, "attribute"], sort=False, observed=True)["score"]
        .agg(human="mean", n_annotators="count")
        .reset_index()
    )
    return out


def judge_scores(ds: Dataset, judge=None, prompt_id=None, attribute=None) -> pd.DataFrame:
    """Judge score per (context, candidate, attribute, judge, prompt_id): mean of its parsed
    samples (NaN when none parsed). Adds n_samples and n_unparsed."""
    r = _pick(ds.ratings, "judge", judge, f"{ds.name} ratings")
    r = _pick(r, "prompt_id", prompt_id, f"{ds.name} ratings")
    r = _pick(r, "attribute", attribute, f"{ds.name} ratings")
    keys = [*ITEM, "attribute", "judge", "prompt_id"]
    out = (
        r.groupby(keys, sort=False, observed=True)["score"]
        .agg(score="mean", n_samples="size", n_parsed="count")
        .reset_index()
    )
    out["n_unparsed"] = out["n_samples"] - out["n_parsed"]
    return out.drop(columns="n_parsed")


def aligned_scores(
    ds: Dataset, judge=None, prompt_id=None, attribute=None, annotators=None
) -> pd.DataFrame:
    """Judge scores joined with the human reference and the candidates' systems.

    One row per item the judge rated (unparsed ones kept with NaN score) that has a human
    score; ``system`` is NaN where the candidates table has none.
    """
    if not len(ds.ratings):
        raise DataError(f"{ds.name}: no judge ratings (absolute scores) to compare with humans")
    js = judge_scores(ds, judge, prompt_id, attribute)
    hr = human_reference(ds, annotators, attribute)
    out = js.merge(hr, on=[*ITEM, "attribute"], how="inner")
    cands = ds.candidates
    if "system" in cands.columns:
        out = out.merge(cands[[*ITEM, "system"]].drop_duplicates(ITEM), on=ITEM, how="left")
    else:
        out["system"] = np.nan
    return out


_COUNTS = {
    "n",
    "n_items",
    "n_used",
    "n_dropped_nan",
    "n_units",
    "n_skipped",
    "n_annotators",
    "icc2k_items",
    "n_samples",
    "n_nan",
    "n_contexts",
}


def _frame(rows: list[dict], cols: list[str]) -> pd.DataFrame:
    """The table with columns in order and "" for no reason. Counts stay plain numbers
    (float with NaN where a row has none, e.g. the "mean" row of the human baseline)."""
    out = pd.DataFrame(rows).reindex(columns=cols)
    if "reason" in out.columns:
        out["reason"] = out["reason"].fillna("")
    return out


def _codes(series: pd.Series) -> np.ndarray:
    """Integer codes of labels (-1 for missing), first-seen order."""
    codes, _ = pd.factorize(series, use_na_sentinel=True)
    return codes


def _wide(
    frame: pd.DataFrame, column: str, value: str = "score", columns: Sequence | None = None
) -> tuple[np.ndarray, pd.DataFrame, list]:
    """Items x ``column`` matrix of ``value`` (mean of duplicates, NaN where absent).

    Faster than ``pivot_table`` for the many small tables built here. Returns the matrix,
    the items (context_id, candidate_id) in first-seen order and the column labels.
    """
    item = frame.groupby(ITEM, sort=False, observed=True).ngroup().to_numpy()
    col_codes, col_labels = pd.factorize(frame[column], sort=True)
    col_labels = list(col_labels)
    if columns is not None:
        order = {c: i for i, c in enumerate(col_labels)}
        remap = np.array([order.get(c, -1) for c in columns])
        pos = np.full(len(col_labels), -1)
        pos[remap[remap >= 0]] = np.flatnonzero(remap >= 0)
        col_codes = pos[col_codes]
        col_labels = list(columns)
    n_items = int(item.max()) + 1 if len(item) else 0
    vals = frame[value].to_numpy(dtype=np.float64)
    keep = (col_codes >= 0) & np.isfinite(vals)
    flat = item[keep] * len(col_labels) + col_codes[keep]
    size = n_items * len(col_labels)
    sums = np.bincount(flat, vals[keep], size)
    counts = np.bincount(flat, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        M = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    first = np.unique(item, return_index=True)[1]
    items = frame.iloc[first][ITEM].reset_index(drop=True)
    return M.reshape(n_items, len(col_labels)), items, col_labels


# ----------------------------------------------------------------------------- correlations


def correlation_table(
    ds: Dataset,
    judge=None,
    prompt_id=None,
    attribute=None,
    annotators=None,
    units: Sequence[str] = ("overall", "system", "item"),
    methods: Sequence[str] = ("kendall",),
    variant: str = "b",
    n_boot: int = 1000,
    confidence: float = 0.95,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Judge-human correlations: one row per judge x prompt x attribute x unit x method.

    Columns: judge, prompt_id, attribute, level, method, variant, value, lower, upper,
    pvalue, n_items (rated by the judge and the humans), n_used, n_dropped_nan, n_units
    (contexts / systems / items correlated), n_skipped, reason. ``level`` is the unit: item
    level correlates within each context (``context_id``), system level over ``system``
    means, overall pools all items; ``confidence`` intervals resample contexts (``n_boot``
    replicates, seeded by ``random_state``).
    """
    for u in units:
        check_choice(u, UNITS, "unit")
    for m in methods:
        check_choice(m, METHODS, "method")
    df = aligned_scores(ds, judge, prompt_id, attribute, annotators)
    score = df["score"].to_numpy(dtype=np.float64)
    human = df["human"].to_numpy(dtype=np.float64)
    ctx_all = _codes(df["context_id"])
    sys_all = _codes(df["system"])
    rows = []
    groups = df.groupby(["judge", "prompt_id", "attribute"], sort=True, observed=True).indices
    for (jname, pid, attr), idx in groups.items():
        x, y, ctx, sysc = score[idx], human[idx], ctx_all[idx], sys_all[idx]
        has_sys = bool((sysc >= 0).all())
        for unit in units:
            for method in methods:
                base = dict(
                    judge=jname,
                    prompt_id=pid,
                    attribute=attr,
                    level=unit,
                    method=method,
                    variant=variant if method == "kendall" else "",
                    n_items=len(idx),
                )
                if unit == "system" and not has_sys:
                    rows.append(
                        {**base, "value": np.nan, "reason": "candidates carry no system labels"}
                    )
                    continue
                # The same seed in every cell: a cell's interval does not depend on which
                # others were asked for, and judges are resampled alike.
                res = rk.correlation(
                    x,
                    y,
                    unit=unit,
                    method=method,
                    variant=variant,
                    contexts=ctx,
                    systems=sysc if has_sys else None,
                    n_boot=n_boot,
                    confidence=confidence,
                    random_state=random_state,
                )
                rows.append({**base, **_corr_fields(res)})
    cols = [
        "judge",
        "prompt_id",
        "attribute",
        "level",
        "method",
        "variant",
        "value",
        "lower",
        "upper",
        "pvalue",
        "n_items",
        "n_used",
        "n_dropped_nan",
        "n_units",
        "n_skipped",
        "reason",
    ]
    return _frame(rows, cols)


def _corr_fields(res: rk.CorrelationResult) -> dict:
    return dict(
        value=res.value,
        lower=res.lower,
        upper=res.upper,
        pvalue=res.pvalue,
        n_used=res.n_used,
        n_dropped_nan=res.n_dropped_nan,
        n_units=res.n_units,
        n_skipped=res.n_skipped,
        reason=res.reason,
    )


def williams_table(
    ds: Dataset,
    judge=None,
    prompt_id=None,
    attribute=None,
    annotators=None,
    unit: str = "overall",
    method: str = "kendall",
    variant: str = "b",
) -> pd.DataFrame:
    """Williams' test between every pair of judges under the same prompt, per attribute.

    The Benjamini-Hochberg family is the judge pairs of one (attribute, prompt_id). Columns:
    attribute, prompt_id, judge_a, judge_b, r_a, r_b (each judge against the humans on the
    items both judges have), r_ab, n, t (positive: judge_a agrees more), p, p_bh, level
    (``unit``: "overall" or "system"), method, reason. A pair appears once (judge_a before
    judge_b in sorted order).
    """
    df = aligned_scores(ds, judge, prompt_id, attribute, annotators)
    # Integer codes once for the whole frame; each family is then laid out with numpy
    # (per-family pandas pivots and merges cost more than the tests themselves).
    item_all = df.groupby(ITEM, sort=False, observed=True).ngroup().to_numpy()
    judge_all, judge_labels = pd.factorize(df["judge"], sort=True)
    score_all = df["score"].to_numpy(dtype=np.float64)
    human_all = df["human"].to_numpy(dtype=np.float64)
    sys_all = _codes(df["system"])
    rows = []
    families = df.groupby(["attribute", "prompt_id"], sort=True, observed=True).indices
    for (attr, pid), idx in families.items():
        _, item = np.unique(item_all[idx], return_inverse=True)
        present, jcol = np.unique(judge_all[idx], return_inverse=True)
        judges = [str(judge_labels[c]) for c in present]
        if len(judges) < 2:
            continue
        n_items = int(item.max()) + 1
        S = np.full((n_items, len(judges)), np.nan)
        S[item, jcol] = score_all[idx]
        human = np.full(n_items, np.nan)
        human[item] = human_all[idx]
        sysc = np.full(n_items, -1)
        sysc[item] = sys_all[idx]
        systems = sysc if (sysc >= 0).all() else None
        if unit == "system" and systems is None:
            raise DataError(f"{ds.name}: system-level Williams tests need system labels")
        res = rk.williams_matrix(
            S, human, unit=unit, method=method, variant=variant, systems=systems, names=judges
        )
        for a in range(len(judges)):
            for b in range(a + 1, len(judges)):
                rows.append(
                    dict(
                        attribute=attr,
                        prompt_id=pid,
                        judge_a=judges[a],
                        judge_b=judges[b],
                        r_a=res.r_human_pair[a, b],
                        r_b=res.r_human_pair[b, a],
                        r_ab=res.r_between[a, b],
                        n=int(res.n[a, b]),
                        t=res.statistic[a, b],
                        p=res.pvalue[a, b],
                        p_bh=res.pvalue_adjusted[a, b],
                        level=unit,
                        method=method,
                        reason=res.reasons.get((a, b), ""),
                    )
                )
    cols = [
        "attribute",
        "prompt_id",
        "judge_a",
        "judge_b",
        "r_a",
        "r_b",
        "r_ab",
        "n",
        "t",
        "p",
        "p_bh",
        "level",
        "method",
        "reason",
    ]
    return _frame(rows, cols)


def williams_matrix_frame(
    table: pd.DataFrame, attribute: str, prompt_id: str, value: str = "p_bh"
) -> pd.DataFrame:
    """One (attribute, prompt_id) of :func:`williams_table` as a square judge x judge frame.

    ``value`` "t" is antisymmetric (row judge minus column judge); p-values are symmetric.
    """
    sel = table[(table["attribute"] == attribute) & (table["prompt_id"] == prompt_id)]
    judges = sorted(set(sel["judge_a"]) | set(sel["judge_b"]))
    M = pd.DataFrame(np.nan, index=judges, columns=judges)
    sign = -1.0 if value == "t" else 1.0
    for row in sel.itertuples(index=False):
        v = getattr(row, value)
        M.loc[row.judge_a, row.judge_b] = v
        M.loc[row.judge_b, row.judge_a] = sign * v
    return M


# ----------------------------------------------------------------------------- humans


def _rating_matrix(hs: pd.DataFrame, names: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    M, items, _ = _wide(hs, "annotator", columns=names)
    return M, items


def iaa_table(
    ds: Dataset,
    attribute=None,
    groups: dict[str, list[str]] | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Inter-annotator agreement per annotator group and attribute.

    Columns: group, attribute, n_items, n_annotators, icc2k, icc2k_lower, icc2k_upper,
    icc2k_items (items rated by every annotator), alpha_nominal, alpha_ordinal,
    alpha_interval (Krippendorff's alpha at three scales), share_all_agree, reason (why a
    value is NaN). Groups with a single annotator are left out; ``confidence`` is the
    coverage of the ICC interval.
    """
    groups = groups if groups is not None else annotator_groups(ds)
    hs = _pick(ds.human_scores, "attribute", attribute, f"{ds.name} human_scores")
    rows = []
    for gname, names in groups.items():
        if len(names) < 2:
            continue
        sub = _pick(hs, "annotator", names, f"{ds.name} human_scores")
        for attr, g in sub.groupby("attribute", sort=True, observed=True):
            Y, _ = _rating_matrix(g, list(names))
            row = dict(group=gname, attribute=attr, n_items=Y.shape[0], n_annotators=len(names))
            reasons = []
            res = rk.icc(Y, kind="ICC2k", confidence=confidence)
            row.update(
                icc2k=res.value,
                icc2k_lower=res.lower,
                icc2k_upper=res.upper,
                icc2k_items=res.n_items,
            )
            if res.reason:
                reasons.append(f"ICC2k: {res.reason}")
            for scale in ("nominal", "ordinal", "interval"):
                alpha = rk.krippendorff_alpha(Y, scale)
                row[f"alpha_{scale}"] = alpha.value
                if alpha.reason:
                    reasons.append(f"alpha ({scale}): {alpha.reason}")
            share = rk.share_all_agree(Y)
            row["share_all_agree"] = share.value
            reasons.append(share.reason)
            row["reason"] = "; ".join(dict.fromkeys(r for r in reasons if r))
            rows.append(row)
    cols = [
        "group",
        "attribute",
        "n_items",
        "n_annotators",
        "icc2k",
        "icc2k_lower",
        "icc2k_upper",
        "icc2k_items",
        "alpha_nominal",
        "alpha_ordinal",
        "alpha_interval",
        "share_all_agree",
        "reason",
    ]
    return _frame(rows, cols)


def human_baseline_table(
    ds: Dataset,
    attribute=None,
    groups: dict[str, list[str]] | None = None,
    units: Sequence[str] = ("overall", "system"),
    method: str = "kendall",
    variant: str = "b",
) -> pd.DataFrame:
    """Each annotator against the mean of the other annotators of the group.

    Columns: group, attribute, level (the unit), method, annotator ("mean" for the mean
    over annotators), value, n_used, n_dropped_nan, reason.
    """
    groups = groups if groups is not None else annotator_groups(ds)
    hs = _pick(ds.human_scores, "attribute", attribute, f"{ds.name} human_scores")
    has_sys = "system" in ds.candidates.columns
    rows = []
    for gname, names in groups.items():
        if len(names) < 2:
            continue
        sub = _pick(hs, "annotator", names, f"{ds.name} human_scores")
        for attr, g in sub.groupby("attribute", sort=True, observed=True):
            Y, items = _rating_matrix(g, list(names))
            ctx = _codes(items["context_id"])
            sysc = None
            if has_sys:
                sys_col = items.merge(
                    ds.candidates[[*ITEM, "system"]].drop_duplicates(ITEM), on=ITEM, how="left"
                )["system"]
                sysc = _codes(sys_col) if sys_col.notna().all() else None
            for unit in units:
                base = dict(group=gname, attribute=attr, level=unit, method=method)
                if unit == "system" and sysc is None:
                    rows.append(
                        {
                            **base,
                            "annotator": "mean",
                            "value": np.nan,
                            "reason": "candidates carry no system labels",
                        }
                    )
                    continue
                res = rk.human_baseline(
                    Y, contexts=ctx, systems=sysc, unit=unit, method=method, variant=variant
                )
                for name, r in zip(names, res.results, strict=True):
                    rows.append(
                        {
                            **base,
                            "annotator": name,
                            "value": r.value,
                            "n_used": r.n_used,
                            "n_dropped_nan": r.n_dropped_nan,
                            "reason": r.reason,
                        }
                    )
                rows.append({**base, "annotator": "mean", "value": res.mean, "reason": res.reason})
    cols = [
        "group",
        "attribute",
        "level",
        "method",
        "annotator",
        "value",
        "n_used",
        "n_dropped_nan",
        "reason",
    ]
    return _frame(rows, cols)


# ----------------------------------------------------------------------------- judges


def self_consistency_table(
    ds: Dataset, judge=None, prompt_id=None, attribute=None, confidence: float = 0.95
) -> pd.DataFrame:
    """Agreement of each judge with itself across its samples (tries) per item.

    Columns: judge, prompt_id, attribute, n_items, n_samples, icc2k, icc2k_lower,
    icc2k_upper, icc2k_items (items with every sample parsed), share_identical, n_nan
    (samples missing or unparsed), reason. A judge with one sample per item gets NaN with a
    reason.
    """
    r = _pick(ds.ratings, "judge", judge, f"{ds.name} ratings")
    r = _pick(r, "prompt_id", prompt_id, f"{ds.name} ratings")
    r = _pick(r, "attribute", attribute, f"{ds.name} ratings")
    rows = []
    keys = ["judge", "prompt_id", "attribute"]
    n_samples = r.groupby(keys, sort=True, observed=True)["sample"].nunique()
    n_items = r.drop_duplicates([*keys, *ITEM]).groupby(keys, sort=True, observed=True).size()
    groups = r.groupby(keys, sort=True, observed=True).indices
    for (jname, pid, attr), k in n_samples.items():
        base = dict(
            judge=jname,
            prompt_id=pid,
            attribute=attr,
            n_items=int(n_items.loc[(jname, pid, attr)]),
            n_samples=int(k),
        )
        if k < 2:
            rows.append(
                {
                    **base,
                    "reason": "one sample per item; self-consistency needs 2 or "
                    "more samples (tries)",
                }
            )
            continue
        Y, _, _ = _wide(r.iloc[groups[(jname, pid, attr)]], "sample")
        res = rk.self_consistency(Y, confidence=confidence)
        rows.append(
            {
                **base,
                "icc2k": res.icc.value,
                "icc2k_lower": res.icc.lower,
                "icc2k_upper": res.icc.upper,
                "icc2k_items": res.n_items_icc,
                "share_identical": res.share_identical,
                "n_nan": res.n_nan_samples,
                "reason": res.reason,
            }
        )
    cols = [
        "judge",
        "prompt_id",
        "attribute",
        "n_items",
        "n_samples",
        "icc2k",
        "icc2k_lower",
        "icc2k_upper",
        "icc2k_items",
        "share_identical",
        "n_nan",
        "reason",
    ]
    return _frame(rows, cols)


def pairwise_accuracy_table(
    ds: Dataset, judge=None, attribute=None, annotators=None, tau: float = 0.5
) -> pd.DataFrame:
    """Pairwise accuracy of comparative judges against the human reference.

    Uses the ranking engine's ``pairwise_accuracy`` (pairs whose human scores differ,
    decision 1[p > tau]). Columns: judge, attribute, tau, accuracy, n_contexts, reason.
    """
    from data.arrays import comparisons_to_P, scores_to_matrix
    from ranking.metrics import pairwise_accuracy

    comp = _pick(ds.comparisons, "judge", judge, f"{ds.name} comparisons")
    comp = _pick(comp, "attribute", attribute, f"{ds.name} comparisons")
    names = _reference_annotators(ds, annotators)
    rows = []
    for (jname, attr), g in comp.groupby(["judge", "attribute"], sort=True, observed=True):
        pm = comparisons_to_P(g, attribute=attr, judge=jname, candidates=ds.candidates)
        ref = scores_to_matrix(ds.human_scores, pm, attribute=attr, annotators=names)
        acc = pairwise_accuracy(pm.P, ref, tau=tau)  # NaN with the reason when undefined
        rows.append(
            dict(
                judge=jname,
                attribute=attr,
                tau=tau,
                n_contexts=len(pm.context_ids),
                accuracy=float(acc),
                reason=acc.reason,
            )
        )
    return _frame(rows, ["judge", "attribute", "tau", "accuracy", "n_contexts", "reason"])


def _verdict_labels(comps: pd.DataFrame) -> np.ndarray:
    """A / B / tie per comparison row: the verdict, else read from p_first; None if neither."""
    p = comps["p_first"].to_numpy(dtype=np.float64)
    from_p = np.where(p > 0.5, "A", np.where(p < 0.5, "B", "tie")).astype(object)
    from_p[~np.isfinite(p)] = None
    if "verdict" in comps.columns:
        v = comps["verdict"].astype(object).to_numpy()
        given = np.array([isinstance(x, str) and x in ("A", "B", "tie") for x in v])
        from_p[given] = v[given]
    return from_p


def verdict_agreement_table(ds: Dataset) -> pd.DataFrame:
    """Agreement of every pairwise judge with every human annotator's verdicts (PandaLM).

    Human verdicts are comparisons by judges named ``human:...``. Verdicts (A / B / tie, or
    p_first read as A above 0.5, B below, tie at 0.5) are matched on context, pair order,
    attribute and sample. The annotator "human majority" (when there are several humans) is
    the most common human verdict of a pair; pairs without a single most common verdict
    are left out.

    Returns
    -------
    pandas.DataFrame
        One row per (judge, annotator), human annotators compared with each other too:
        judge, annotator, n_pairs, agreement (share of identical verdicts), cohen_kappa
        (``ranking.reliability.cohen_kappa``), is_human, reason (why a value is NaN). Empty
        when the dataset has no human verdicts.
    """
    comps = ds.comparisons
    if not len(comps):
        return pd.DataFrame()
    names = comps["judge"].astype(str)
    human = names.str.startswith(HUMAN_JUDGE_PREFIX)
    if not human.any():
        return pd.DataFrame()
    keys = ["context_id", "attribute", "first_id", "second_id", "sample"]
    lab = comps[keys + ["judge"]].astype({k: str for k in keys[:4]}).copy()
    lab["label"] = _verdict_labels(comps)
    humans = sorted(names[human].unique())
    models = sorted(names[~human].unique())
    by_judge = {j: g.drop(columns="judge").drop_duplicates(keys) for j, g in lab.groupby("judge")}
    hv = lab[human.to_numpy()].dropna(subset=["label"])
    counts = hv.groupby(keys + ["label"], observed=True).size().rename("n").reset_index()
    top = counts.sort_values("n", ascending=False).groupby(keys, observed=True)
    best = top.head(1).set_index(keys)
    second = top.nth(1).set_index(keys)["n"] if len(counts) else pd.Series(dtype=float)
    tie = best["n"].reindex(best.index).eq(second.reindex(best.index)).fillna(False)
    majority = best[~tie.to_numpy()].reset_index()[keys + ["label"]]
    refs = {h: by_judge[h] for h in humans}
    if len(humans) > 1:
        refs["human majority"] = majority
    rows = []
    for j in models + humans:
        for h, ref in refs.items():
            if j == h:
                continue
            both = by_judge[j].merge(ref, on=keys, suffixes=("_j", "_h"))
            both = both.dropna(subset=["label_j", "label_h"])
            row = dict(judge=j, annotator=h, n_pairs=len(both), reason="")
            if not len(both):
                rows.append(
                    {
                        **row,
                        "agreement": np.nan,
                        "cohen_kappa": np.nan,
                        "reason": "no pair judged by both",
                    }
                )
                continue
            row["agreement"] = float((both["label_j"] == both["label_h"]).mean())
            kappa = rk.cohen_kappa(
                both["label_j"].to_numpy(object), both["label_h"].to_numpy(object)
            )
            row.update(cohen_kappa=kappa.value, reason=kappa.reason)
            rows.append(row)
    out = pd.DataFrame(rows)
    out["is_human"] = out["judge"].str.startswith(HUMAN_JUDGE_PREFIX)
    return out.reindex(
        columns=["judge", "annotator", "n_pairs", "agreement", "cohen_kappa", "is_human", "reason"]
    )


# ----------------------------------------------------------------------------- command line


def _split(values: Iterable[str] | None) -> list[str] | None:
    if not values:
        return None
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    return out or None


def _show(title: str, frame: pd.DataFrame, out) -> None:
    print(f"\n== {title} ==", file=out)
    if frame.empty:
        print("(nothing to show)", file=out)
        return
    frame = frame.copy()
    for col in frame.columns:
        if col in _COUNTS:  # whole numbers print without decimals, missing as <NA>
            frame[col] = frame[col].astype("Int64")
    with pd.option_context(
        "display.width",
        200,
        "display.max_columns",
        50,
        "display.max_rows",
        500,
        "display.max_colwidth",
        60,
    ):
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.3f}"), file=out)


def main(argv: Sequence[str] | None = None, out=None) -> int:
    """Print the agreement tables of a benchmark (see the module docstring)."""
    from data import load_benchmark

    out = out or sys.stdout
    p = argparse.ArgumentParser(
        prog="python -m data.agreement", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--benchmark", required=True, help="benchmark name, e.g. hanna, summeval")
    p.add_argument("--data-dir", default=None, help="folder with the benchmark files")
    p.add_argument("--judge", action="append", help="judge name(s); repeat or comma-separate")
    p.add_argument("--prompt-id", action="append", help="prompt id(s) (Eval-Prompts)")
    p.add_argument("--attribute", action="append", help="attribute(s)")
    p.add_argument(
        "--annotators",
        action="append",
        help="annotators whose mean is the human reference (default: the only group)",
    )
    p.add_argument(
        "--levels", default="overall,system,item", help="units correlated: item, system, overall"
    )
    p.add_argument("--methods", default="kendall")
    p.add_argument("--variant", default="b", choices=list(KENDALL_VARIANTS))
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--williams-level", default="overall", choices=["overall", "system"])
    p.add_argument(
        "--tables",
        default="iaa,baseline,correlation,williams,consistency,accuracy",
        help="comma-separated subset of the default",
    )
    args = p.parse_args(argv)

    try:
        _print_tables(load_benchmark(args.benchmark, data_dir=args.data_dir), args, out)
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


def _print_tables(ds: Dataset, args: argparse.Namespace, out) -> None:
    judge, prompt, attr = _split(args.judge), _split(args.prompt_id), _split(args.attribute)
    annotators = _split(args.annotators)
    tables = set(_split([args.tables]) or [])
    print(f"{ds.name}: {ds.counts()}", file=out)
    if "iaa" in tables and len(ds.human_scores):
        _show("human inter-annotator agreement", iaa_table(ds, attr), out)
    if "baseline" in tables and len(ds.human_scores):
        _show(
            "human baseline (each annotator vs the mean of the others)",
            human_baseline_table(ds, attr, method=args.methods.split(",")[0], variant=args.variant),
            out,
        )
    if len(ds.ratings):
        if "correlation" in tables:
            _show(
                "judge vs human mean",
                correlation_table(
                    ds,
                    judge,
                    prompt,
                    attr,
                    annotators,
                    units=args.levels.split(","),
                    methods=args.methods.split(","),
                    variant=args.variant,
                    n_boot=args.n_boot,
                    random_state=args.seed,
                ),
                out,
            )
        if "williams" in tables:
            wt = williams_table(
                ds,
                judge,
                prompt,
                attr,
                annotators,
                unit=args.williams_level,
                method=args.methods.split(",")[0],
                variant=args.variant,
            )
            _show(
                "Williams tests between judges (p_bh: Benjamini-Hochberg per attribute and prompt)",
                wt,
                out,
            )
        if "consistency" in tables:
            _show(
                "judge self-consistency across samples",
                self_consistency_table(ds, judge, prompt, attr),
                out,
            )
    if "accuracy" in tables and len(ds.comparisons) and len(ds.human_scores):
        _show(
            "pairwise accuracy of comparative judges",
            pairwise_accuracy_table(ds, judge, attr, annotators),
            out,
        )


if __name__ == "__main__":
    raise SystemExit(main())
