"""Williams' tests between raters: which judge (or automatic measure) agrees more with humans.

Two tables. :func:`williams_table` tests every pair of judges under the same prompt, per
attribute. :func:`williams_versus_table` tests one rater against every other rater, across
prompts and automatic measures (HANNA's Figure 6: Beluga-13B with Eval-Prompt 1 against every
other measure, one-sided, Benjamini-Hochberg over the six criteria of each comparison).

Both take the side of the test (``alternative``: "two-sided", "greater": rater a agrees more
with the humans than rater b, "less") and the Benjamini-Hochberg family (``family``):
"judges" (the pairs of one attribute; of one prompt too in :func:`williams_table`),
"attributes" (the attributes of one pair) or "all" (every row of the table).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import ranking as rk
from data.agreement._tables import ITEM, as_list, codes, table_frame
from data.agreement.reference import aligned_scores
from data.natural import natural_key
from data.schema import DataError, Dataset
from ranking._core import check_choice
from ranking.agreement import ALTERNATIVES

#: Benjamini-Hochberg families of the Williams tables.
FAMILIES = ("judges", "attributes", "all")
#: Columns of :func:`williams_table`, in order.
WILLIAMS_COLUMNS = (
    "attribute prompt_id judge_a judge_b r_a r_b r_ab n t p p_bh level method alternative "
    "family reason"
).split()
#: Columns of :func:`williams_versus_table`, in order.
VERSUS_COLUMNS = (
    "attribute judge_a prompt_a judge_b prompt_b r_a r_b r_ab n t p p_bh level method "
    "alternative family reason"
).split()


def _adjust(table: pd.DataFrame, by: list[str]) -> pd.Series:
    """Benjamini-Hochberg adjusted ``p`` within each group of rows (all rows for ``by=[]``)."""
    out = pd.Series(np.nan, index=table.index)
    if not len(table):
        return out
    groups = (
        table.groupby(by, sort=False, observed=True).indices if by else {(): np.arange(len(table))}
    )
    p = table["p"].to_numpy(dtype=np.float64)
    vals = out.to_numpy(copy=True)
    for idx in groups.values():
        vals[idx] = rk.bh_adjust(p[idx])
    return pd.Series(vals, index=table.index)


def _layout(df: pd.DataFrame, rater: np.ndarray, n_raters: int):
    """Items x raters scores, the human reference and system codes of one attribute."""
    _, item = np.unique(
        df.groupby(ITEM, sort=False, observed=True).ngroup().to_numpy(), return_inverse=True
    )
    n_items = int(item.max()) + 1 if len(item) else 0
    S = np.full((n_items, n_raters), np.nan)
    S[item, rater] = df["score"].to_numpy(dtype=np.float64)
    human = np.full(n_items, np.nan)
    human[item] = df["human"].to_numpy(dtype=np.float64)
    sysc = np.full(n_items, -1)
    sysc[item] = codes(df["system"])
    return S, human, (sysc if (sysc >= 0).all() else None)


def williams_table(
    ds: Dataset,
    judge=None,
    prompt_id=None,
    attribute=None,
    annotators=None,
    unit: str = "overall",
    method: str = "kendall",
    variant: str = "b",
    alternative: str = "two-sided",
    family: str = "judges",
) -> pd.DataFrame:
    """Williams' test between every pair of judges under the same prompt, per attribute.

    Parameters
    ----------
    ds, judge, prompt_id, attribute, annotators
        As for :func:`data.agreement.correlation_table`: the data, the ratings kept
        (default all) and the human reference.
    unit : {"overall", "system"}
        Correlate over all items or over per-system means.
    method : str
        Correlation coefficient.
    variant : str
        Kendall's variant.
    alternative : {"two-sided", "greater", "less"}
        Two-sided: the correlations differ; "greater": judge_a correlates more with the
        humans than judge_b; "less": less (``ranking.williams_test``).
    family : {"judges", "attributes", "all"}
        The rows each Benjamini-Hochberg adjustment runs over: the judge pairs of one
        attribute and prompt_id, the attributes of one (prompt_id, judge_a, judge_b), or
        every row.

    Returns
    -------
    pandas.DataFrame
        :data:`WILLIAMS_COLUMNS`: attribute, prompt_id, judge_a, judge_b, r_a, r_b (each
        judge against the humans on the items both judges have), r_ab, n, t (positive:
        judge_a agrees more), p, p_bh, level (``unit``), method, alternative, family,
        reason. Two-sided, a pair appears once (judge_a before judge_b in sorted order);
        one-sided, both orders appear (each is its own hypothesis). A family with one judge
        has no rows.

    Raises
    ------
    ValueError
        An unknown alternative or family.
    DataError
        System-level tests without system labels; no ratings, no human reference, or a
        chosen name that does not appear.
    """
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(family, FAMILIES, "family")
    df = aligned_scores(ds, judge, prompt_id, attribute, annotators)
    judge_all, judge_labels = pd.factorize(df["judge"], sort=True)
    rows = []
    families = df.groupby(["attribute", "prompt_id"], sort=True, observed=True).indices
    for (attr, pid), idx in families.items():
        present, jcol = np.unique(judge_all[idx], return_inverse=True)
        judges = [str(judge_labels[c]) for c in present]
        if len(judges) < 2:
            continue
        S, human, systems = _layout(df.iloc[idx], jcol, len(judges))
        if unit == "system" and systems is None:
            raise DataError(f"{ds.name}: system-level Williams tests need system labels")
        res = rk.williams_matrix(
            S,
            human,
            unit=unit,
            method=method,
            variant=variant,
            systems=systems,
            names=judges,
            alternative=alternative,
        )
        for a in range(len(judges)):
            for b in range(len(judges)):
                if a == b or (alternative == "two-sided" and b < a):
                    continue
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
                        level=unit,
                        method=method,
                        alternative=alternative,
                        family=family,
                        reason=res.reasons.get((min(a, b), max(a, b)), ""),
                    )
                )
    out = table_frame(rows, WILLIAMS_COLUMNS)
    by = {
        "judges": ["attribute", "prompt_id"],
        "attributes": ["prompt_id", "judge_a", "judge_b"],
        "all": [],
    }[family]
    out["p_bh"] = _adjust(out, by)
    return out


def _rater(ds: Dataset, judge, prompt_id) -> tuple[str, str]:
    """The (judge, prompt_id) of one rater given as a name or a pair."""
    if isinstance(judge, tuple | list) and len(judge) == 2:
        name, pid = str(judge[0]), str(judge[1])
    else:
        name, pid = str(judge), None if prompt_id is None else str(prompt_id)
    r = ds.ratings
    prompts = sorted(r.loc[r["judge"].astype(str) == name, "prompt_id"].astype(str).unique())
    if not prompts:
        known = sorted(r["judge"].astype(str).unique(), key=natural_key)
        raise DataError(
            f"{ds.name} ratings: judge {name!r} not found; available: {', '.join(map(repr, known))}"
        )
    if pid is None:
        if len(prompts) > 1:
            raise DataError(
                f"{ds.name} ratings: judge {name!r} rates under several prompts "
                f"({', '.join(prompts)}); pass prompt_id= or judge=(name, prompt_id)"
            )
        pid = prompts[0]
    if pid not in prompts:
        raise DataError(
            f"{ds.name} ratings: judge {name!r} has no ratings under prompt_id {pid!r}; "
            f"its prompts: {', '.join(prompts)}"
        )
    return name, pid


def _versus_raters(ds: Dataset, me: tuple[str, str], versus) -> list[tuple[str, str]]:
    """The (judge, prompt_id) raters ``me`` is tested against, in natural order."""
    pairs = ds.ratings[["judge", "prompt_id"]].astype(str).drop_duplicates()
    every = list(pairs.itertuples(index=False, name=None))
    if versus is None:
        chosen = every
    else:
        items = [versus] if isinstance(versus, str | tuple) else list(versus)
        chosen = []
        for v in items:
            if isinstance(v, tuple | list):
                found = [tuple(map(str, v))] if tuple(map(str, v)) in every else []
            else:
                found = [p for p in every if p[0] == str(v)]
            if not found:
                known = sorted({j for j, _ in every}, key=natural_key)
                raise DataError(
                    f"{ds.name} ratings: rater {v!r} not found; available judges: "
                    f"{', '.join(map(repr, known))}"
                )
            chosen += found
    out = [p for p in dict.fromkeys(chosen) if p != me]
    return sorted(out, key=lambda p: (natural_key(p[1]), natural_key(p[0])))


def williams_versus_table(
    ds: Dataset,
    judge,
    versus=None,
    prompt_id=None,
    attribute=None,
    annotators=None,
    unit: str = "overall",
    method: str = "kendall",
    variant: str = "b",
    alternative: str = "greater",
    family: str = "attributes",
) -> pd.DataFrame:
    """Williams' tests of one rater against every other rater, across prompts (HANNA Fig. 6).

    Parameters
    ----------
    ds : Dataset
        As for :func:`data.agreement.correlation_table`.
    judge : str or (str, str)
        The rater tested (judge_a): a judge name, or a (judge, prompt_id) pair.
    versus : str, (str, str) or iterable of them, optional
        The raters it is tested against (judge_b): a judge name stands for each of its
        prompts. Default every other (judge, prompt_id) in the ratings, automatic measures
        (prompt_id "automatic") included.
    prompt_id : str, optional
        The prompt of ``judge`` when it is given by name and rates under several prompts.
    attribute : str or iterable of str, optional
        The attributes kept; default all.
    annotators : str or iterable of str, optional
        The human reference (``data.agreement.reference_annotators``).
    unit : {"overall", "system"}
        Correlate over all items (n = items) or over per-system means (n = systems).
    method, variant : str
        Correlation coefficient and Kendall's variant.
    alternative : {"greater", "two-sided", "less"}
        "greater" (default, as in HANNA): judge_a correlates more with the humans.
    family : {"attributes", "judges", "all"}
        The rows each Benjamini-Hochberg adjustment runs over: the attributes of one
        comparison (default, as in HANNA), the raters of one attribute, or every row.

    Returns
    -------
    pandas.DataFrame
        :data:`VERSUS_COLUMNS`, one row per (attribute, other rater): attribute, judge_a,
        prompt_a, judge_b, prompt_b, r_a, r_b (each against the humans on the items both
        rated), r_ab, n, t (positive: judge_a agrees more), p, p_bh, level, method,
        alternative, family, reason (why p is NaN).

    Raises
    ------
    ValueError
        An unknown unit, alternative or family.
    DataError
        An unknown judge or rater, a judge name with several prompts and no prompt_id,
        system-level tests without system labels, no human reference.
    """
    check_choice(unit, ("overall", "system"), "unit")
    check_choice(alternative, ALTERNATIVES, "alternative")
    check_choice(family, FAMILIES, "family")
    me = _rater(ds, judge, prompt_id)
    others = _versus_raters(ds, me, versus)
    raters = [me, *others]
    df = aligned_scores(ds, sorted({j for j, _ in raters}), None, as_list(attribute), annotators)
    key = pd.MultiIndex.from_frame(df[["judge", "prompt_id"]].astype(str))
    code = pd.Index(raters).get_indexer(key)
    df, code = df[code >= 0], code[code >= 0]
    rows = []
    for attr, idx in df.groupby("attribute", sort=True, observed=True).indices.items():
        present = set(code[idx].tolist())
        if 0 not in present:
            continue
        S, human, systems = _layout(df.iloc[idx], code[idx], len(raters))
        if unit == "system" and systems is None:
            raise DataError(f"{ds.name}: system-level Williams tests need system labels")
        for o in range(1, len(raters)):
            if o not in present:
                continue
            res = rk.williams_matrix(
                S[:, [0, o]],
                human,
                unit=unit,
                method=method,
                variant=variant,
                systems=systems,
                names=[f"{me[0]} ({me[1]})", f"{raters[o][0]} ({raters[o][1]})"],
                alternative=alternative,
            )
            rows.append(
                dict(
                    attribute=attr,
                    judge_a=me[0],
                    prompt_a=me[1],
                    judge_b=raters[o][0],
                    prompt_b=raters[o][1],
                    r_a=res.r_human_pair[0, 1],
                    r_b=res.r_human_pair[1, 0],
                    r_ab=res.r_between[0, 1],
                    n=int(res.n[0, 1]),
                    t=res.statistic[0, 1],
                    p=res.pvalue[0, 1],
                    level=unit,
                    method=method,
                    alternative=alternative,
                    family=family,
                    reason=res.reasons.get((0, 1), ""),
                )
            )
    out = table_frame(rows, VERSUS_COLUMNS)
    by = {"judges": ["attribute"], "attributes": ["judge_b", "prompt_b"], "all": []}[family]
    out["p_bh"] = _adjust(out, by)
    return out


def williams_matrix_frame(
    table: pd.DataFrame, attribute: str, prompt_id: str, value: str = "p_bh"
) -> pd.DataFrame:
    """One (attribute, prompt_id) of :func:`williams_table` as a square judge x judge frame.

    Parameters
    ----------
    table : pandas.DataFrame
        A :func:`williams_table`.
    attribute, prompt_id : str
        The family shown.
    value : str
        The column shown ("p_bh", "p", "t", "r_ab", ...).

    Returns
    -------
    pandas.DataFrame
        Judges (sorted) as index and columns, NaN on the diagonal and for pairs not tested.
        "t" is antisymmetric (row judge minus column judge). A two-sided table gives
        symmetric p-values; a one-sided one has a row per order, so cell (row, column) is
        the test of the row judge against the column judge.
    """
    sel = table[(table["attribute"] == attribute) & (table["prompt_id"] == prompt_id)]
    judges = sorted(set(sel["judge_a"]) | set(sel["judge_b"]))
    M = pd.DataFrame(np.nan, index=judges, columns=judges)
    one_sided = "alternative" in sel.columns and (sel["alternative"] != "two-sided").any()
    sign = -1.0 if value == "t" else 1.0
    for row in sel.itertuples(index=False):
        v = getattr(row, value)
        M.loc[row.judge_a, row.judge_b] = v
        if not one_sided:
            M.loc[row.judge_b, row.judge_a] = sign * v
    return M
