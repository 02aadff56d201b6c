"""The analysis tables of Liusie, Manakul & Gales (2024) for any loaded pairwise judge.

* :func:`judge_template_table`: one row per judge x attribute (the judge name carries the
  prompt template, e.g. ``gpt-3.5-turbo-0301/ab-choice``): position bias P(A) (Tables 5/9),
  pairwise accuracy before and after debiasing (Tables 7/10), Spearman of the win-ratio and
  the maximum-likelihood rankings (Table 11) and of the debiased win-ratio (Table 6).
* :func:`subset_table`: self-consistency of rankings of random candidate subsets against the
  full ranking and the humans (Table 8, ``ranking.subset_consistency``).

The maths is ``ranking``'s; this module builds the arrays (``data.arrays``) and the human
reference. The reference is the mean human score over the chosen annotators
(``data.agreement.reference_annotators``) where the human scores rate the attribute;
otherwise the win-ratio of the pooled human verdicts in the comparisons (judges
``human:...``, leaving out the judge itself), as the app's pages do.

Debiasing follows the paper and the Position bias page: one decision threshold per judge
and attribute, ``ranking.balanced_threshold``, that brings P(A) to 0.5.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import ranking as rk
from data.agreement._tables import table_frame
from data.agreement.reference import reference_annotators
from data.arrays import PMatrix, comparisons_to_P, scores_to_matrix
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset

__all__ = [
    "SUBSET_COLUMNS",
    "TEMPLATE_COLUMNS",
    "comparison_choices",
    "human_scores_for",
    "judge_pmatrix",
    "judge_template_table",
    "subset_table",
]

#: Columns of :func:`judge_template_table`, in order.
TEMPLATE_COLUMNS = (
    "judge attribute n_comparisons p_first balanced_tau accuracy accuracy_debiased "
    "spearman_wr spearman_ml spearman_debiased n_contexts reference reason"
).split()
#: Columns of :func:`subset_table`, in order.
SUBSET_COLUMNS = ["n", "final", "gold", "n_contexts", "n_draws"]


def _parsed(ds: Dataset) -> pd.DataFrame:
    comps = ds.comparisons
    if not len(comps):
        raise DataError(f"{ds.name}: the dataset has no pairwise comparisons")
    return comps[comps["p_first"].notna()]


def comparison_choices(ds: Dataset) -> dict[str, list[str]]:
    """Attribute -> judges with at least one parsed comparison (both sorted).

    Parameters
    ----------
    ds : Dataset
        Its comparisons.

    Returns
    -------
    dict of str to list of str
        Empty when the dataset has no parsed comparison.
    """
    comps = ds.comparisons
    if not len(comps):
        return {}
    rows = comps[comps["p_first"].notna()]
    pairs = rows[["attribute", "judge"]].astype(str).drop_duplicates()
    out: dict[str, list[str]] = {}
    for attr, judge in sorted(pairs.itertuples(index=False, name=None)):
        out.setdefault(attr, []).append(judge)
    return out


def _choices_or_raise(ds: Dataset) -> dict[str, list[str]]:
    choices = comparison_choices(ds)
    if not choices:
        n = len(ds.comparisons)
        if not n:
            raise DataError(f"{ds.name}: the dataset has no pairwise comparisons")
        raise DataError(
            f"{ds.name}: none of its {n} comparisons was parsed (p_first missing); see the "
            "raw answers on the Judge page"
        )
    return choices


def _choose(value, options, what: str, arg: str, ds: Dataset) -> str:
    options = list(options)
    if value is None:
        if len(options) == 1:
            return options[0]
        raise DataError(
            f"{ds.name}: comparisons hold several {what}s ({', '.join(map(repr, options))}); "
            f"choose one with {arg}=..."
        )
    if str(value) not in options:
        raise DataError(
            f"{ds.name}: no parsed comparisons with {what} {value!r}; available: "
            f"{', '.join(map(repr, options)) or 'none'}"
        )
    return str(value)


def judge_pmatrix(ds: Dataset, attribute: str, judge: str) -> PMatrix:
    """P of one attribute and judge from its parsed comparisons (unparsed rows left out).

    Parameters
    ----------
    ds : Dataset
        Its comparisons.
    attribute, judge : str
        The selection.

    Returns
    -------
    PMatrix
        Contexts with a parsed comparison; per context the compared candidates, sorted.

    Raises
    ------
    DataError
        No parsed comparison of that attribute and judge.
    """
    rows = _parsed(ds)
    rows = rows[(rows["attribute"].astype(str) == attribute) & (rows["judge"].astype(str) == judge)]
    if not len(rows):
        raise DataError(
            f"{ds.name}: no parsed comparison for attribute {attribute!r} by judge {judge!r}"
        )
    return comparisons_to_P(rows, attribute=attribute, judge=judge)


def human_scores_for(
    ds: Dataset, attribute: str, pm: PMatrix, annotators=None
) -> tuple[np.ndarray | None, str]:
    """Human reference scores laid out like ``pm``, and where they come from.

    Parameters
    ----------
    ds : Dataset
        Its human scores, else its human comparisons (judges ``human:...``).
    attribute : str
        The attribute.
    pm : PMatrix
        The layout (its judge, when human, is left out of the pooled human verdicts).
    annotators : str or iterable of str, optional
        The reference annotators of the human scores (``data.agreement
        .reference_annotators``); default the only annotator group.

    Returns
    -------
    (ndarray of shape (n_contexts, N_max) or None, str)
        The scores (higher is better, NaN where missing) and one line saying what they are;
        None and the reason when the dataset has no human reference for the attribute.

    Raises
    ------
    DataError
        Several annotator groups and no ``annotators`` (the message lists them), or an
        unknown annotator.
    """
    hs = ds.human_scores
    if len(hs) and (hs["attribute"].astype(str) == attribute).any():
        names = reference_annotators(ds, annotators)
        scores = scores_to_matrix(hs, pm, attribute=attribute, annotators=names)
        if np.isfinite(scores).sum() >= 2:
            who = names[0] if len(names) == 1 else f"{len(names)} annotators"
            return scores, f"mean human score ({who})"
    comps = _parsed(ds) if len(ds.comparisons) else ds.comparisons
    if len(comps):
        names = comps["judge"].astype(str)
        keep = (
            names.str.startswith(HUMAN_JUDGE_PREFIX)
            & (names != str(pm.judge))
            & (comps["attribute"].astype(str) == attribute)
        )
        rows = comps[keep]
        layout = dict(zip(pm.context_ids, pm.candidate_ids, strict=True))
        if len(rows):  # both candidates in the layout of their context
            cells = pd.MultiIndex.from_arrays(
                [
                    np.repeat(list(layout), [len(v) for v in layout.values()]),
                    [x for v in layout.values() for x in v],
                ]
            )
            ctx = rows["context_id"].astype(str).to_numpy(dtype=object)
            inside = np.ones(len(rows), dtype=bool)
            for col in ("first_id", "second_id"):
                probe = [ctx, rows[col].astype(str).to_numpy(dtype=object)]
                inside &= pd.MultiIndex.from_arrays(probe).isin(cells)
            rows = rows[inside]
        if len(rows):
            n_ann = rows["judge"].nunique()
            hp = comparisons_to_P(
                rows.assign(judge="humans"), attribute=attribute, judge="humans", candidates=layout
            )
            scores = np.full(pm.P.shape[:2], np.nan)
            where = {ctx: c for c, ctx in enumerate(pm.context_ids)}
            scores[[where[c] for c in hp.context_ids], : hp.P.shape[1]] = rk.win_ratio(
                hp.P, tau=0.5
            )
            return scores, f"win-ratio of the pooled verdicts of {n_ann} human annotator(s)"
    return None, f"no human scores or human verdicts for attribute {attribute!r}"


def _mean_finite(values) -> float:
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan


def _template_row(ds: Dataset, attribute: str, judge: str, annotators) -> dict:
    pm = judge_pmatrix(ds, attribute, judge)
    P = pm.P
    row = dict(
        judge=judge,
        attribute=attribute,
        n_comparisons=int(np.isfinite(P).sum()),
        n_contexts=len(pm.context_ids),
    )
    reasons = []
    pa = rk.position_bias(P)
    tau_b = rk.balanced_threshold(P)
    row.update(p_first=float(pa), balanced_tau=float(tau_b))
    if pa.reason:
        reasons.append(f"p_first: {pa.reason}")
    ref, source = human_scores_for(ds, attribute, pm, annotators)
    row["reference"] = source if ref is not None else ""
    if ref is None:
        reasons.append(source)
        row["reason"] = "; ".join(reasons)
        return row
    acc = rk.pairwise_accuracy(P, ref, tau=0.5)
    row["accuracy"] = float(acc)
    if acc.reason:
        reasons.append(f"accuracy: {acc.reason}")
    if math.isfinite(tau_b):
        row["accuracy_debiased"] = float(rk.pairwise_accuracy(P, ref, tau=float(tau_b)))
        row["spearman_debiased"] = _mean_finite(rk.spearman(rk.win_ratio(P, tau=float(tau_b)), ref))
        if not math.isfinite(row["spearman_debiased"]):
            reasons.append(
                f"spearman_debiased: at tau = {float(tau_b):g} the win-ratio is constant in "
                "every context"
            )
    row["spearman_wr"] = _mean_finite(rk.spearman(rk.win_ratio(P, tau=0.5), ref))
    row["spearman_ml"] = _mean_finite(rk.spearman(rk.ml_ranking(P).scores, ref))
    if not math.isfinite(row["spearman_wr"]):
        many = pm.n_candidates >= 3
        reasons.append(
            "spearman: no context has a defined correlation"
            + ("" if many.any() else " (every context has fewer than 3 compared candidates)")
        )
    row["reason"] = "; ".join(reasons)
    return row


def judge_template_table(ds: Dataset, attribute=None, judge=None, annotators=None) -> pd.DataFrame:
    """Bias, accuracy and ranking quality of each pairwise judge (Liusie et al. Tables 5-11).

    Parameters
    ----------
    ds : Dataset
        Its comparisons and human scores (or human verdicts).
    attribute, judge : str or iterable of str, optional
        The attributes and judges kept; default every attribute, and every judge that is not
        a human annotator (``human:...``) — every judge when all are human.
    annotators : str or iterable of str, optional
        The reference annotators of the human scores (see :func:`human_scores_for`).

    Returns
    -------
    pandas.DataFrame
        :data:`TEMPLATE_COLUMNS`, one row per judge x attribute (judges in name order):

        - ``n_comparisons``: parsed (first, second) cells of P;
        - ``p_first``: P(A), the share of comparisons won by the first candidate (hard
          decisions at 0.5, ``ranking.position_bias``; Tables 5/9);
        - ``balanced_tau``: the threshold that brings P(A) to 0.5
          (``ranking.balanced_threshold``), the debiasing of the columns ``*_debiased``;
        - ``accuracy`` / ``accuracy_debiased``: pairwise accuracy over the comparisons whose
          human scores differ, at 0.5 / at ``balanced_tau`` (Tables 7/10);
        - ``spearman_wr`` / ``spearman_ml``: Spearman against the human reference per
          context, averaged over the contexts where it is defined, of the win-ratio (hard
          wins at 0.5) and the maximum-likelihood ranking (probabilities; Table 11);
        - ``spearman_debiased``: the same for the win-ratio at ``balanced_tau`` (Table 6);
        - ``n_contexts``: contexts with a parsed comparison; ``reference``: what the human
          reference is; ``reason``: why a value is NaN (no human reference, too few
          candidates, no comparison).

    Raises
    ------
    DataError
        No comparisons, an unknown attribute or judge, or several annotator groups and no
        ``annotators``.
    """
    choices = _choices_or_raise(ds)
    attrs = sorted(choices) if attribute is None else _as_list(attribute)
    for a in attrs:
        _choose(a, sorted(choices), "attribute", "attribute", ds)
    rows = []
    for a in attrs:
        judges = choices[a]
        if judge is None:
            models = [j for j in judges if not j.startswith(HUMAN_JUDGE_PREFIX)]
            wanted = models or judges
        else:
            wanted = _as_list(judge)
            known = sorted({j for js in choices.values() for j in js})
            for j in wanted:
                _choose(j, known, "judge", "judge", ds)
            wanted = [j for j in wanted if j in judges]
        rows += [_template_row(ds, a, j, annotators) for j in wanted]
    return table_frame(rows, TEMPLATE_COLUMNS)


def _as_list(value) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in value]


def subset_table(
    ds: Dataset,
    attribute=None,
    judge=None,
    sizes=None,
    n_draws: int = 50,
    random_state=0,
    *,
    tau: float | None = 0.5,
    annotators=None,
) -> pd.DataFrame:
    """Self-consistency of rankings of random candidate subsets (Liusie et al. Table 8).

    Parameters
    ----------
    ds : Dataset
        Its comparisons and human scores (or human verdicts).
    attribute, judge : str, optional
        The comparisons ranked; may be omitted when the dataset has one.
    sizes : sequence of int, optional
        Subset sizes; default (2, 3, 4, 6, 8, 12) below N plus N, the most candidates
        compared in a context (``ranking.subset_consistency``).
    n_draws : int, default 50
        Random subsets per context and size.
    random_state : None, int or numpy.random.Generator, default 0
        Seed of the draws (the default makes the table reproducible).
    tau : float or None, default 0.5
        Win-ratio of hard decisions at tau (0.5: the paper's win counts), or None for soft
        outcomes.
    annotators : str or iterable of str, optional
        The reference annotators of the human scores (see :func:`human_scores_for`).

    Returns
    -------
    pandas.DataFrame
        :data:`SUBSET_COLUMNS`, one row per size: n, final (pairwise accuracy against the
        full-set ranking), gold (against the human reference, NaN without one), n_contexts
        (contexts with n compared candidates that took part), n_draws. ``attrs`` holds
        ``reference`` (what the human reference is), ``reasons`` (why a value is NaN, per
        size), ``judge``, ``attribute`` and ``tau``.

    Raises
    ------
    DataError
        No comparisons, an unknown or ambiguous attribute or judge, or several annotator
        groups and no ``annotators``.
    ValueError
        Bad sizes or n_draws.
    """
    choices = _choices_or_raise(ds)
    attribute = _choose(attribute, sorted(choices), "attribute", "attribute", ds)
    judge = _choose(judge, choices[attribute], "judge", "judge", ds)
    pm = judge_pmatrix(ds, attribute, judge)
    ref, source = human_scores_for(ds, attribute, pm, annotators)
    res = rk.subset_consistency(
        pm.P, sizes=sizes, human=ref, n_draws=n_draws, tau=tau, random_state=random_state
    )
    out = pd.DataFrame(
        {
            "n": res.sizes,
            "final": res.final,
            "gold": res.gold,
            "n_contexts": res.n_contexts,
            "n_draws": res.n_draws,
        }
    )
    out.attrs.update(
        reference=source if ref is not None else "",
        reasons=list(res.reasons),
        judge=judge,
        attribute=attribute,
        tau=tau,
    )
    return out
