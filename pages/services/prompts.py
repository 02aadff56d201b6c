"""Services of the Prompt sensitivity page: how templates and temperature move a judge.

Ratings grouped by model and variant (template, and temperature when a model ran at
several), the paired shift of each variant against a baseline
(``ranking.significance.paired_shift``), the stability of the rankings the variants induce
(``ranking.metrics.kendall_matrix``), unparsed shares, and position bias and accuracy per
comparative template.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from data.natural import natural_sorted
from data.schema import AUTOMATIC, HUMAN_JUDGE_PREFIX, DataError, Dataset
from pages.services.bias import bias_table
from pages.services.common import cache_data, cache_resource, judge_model, with_systems
from pages.services.comparisons import HUMAN_POOL, human_reference, pmatrix
from ranking import kendall_matrix, paired_shift, pairwise_accuracy


@cache_resource(show_spinner=False, max_entries=4)
def rating_variants(ds: Dataset) -> pd.DataFrame:
    """Ratings with ``model``, ``temperature``, ``variant`` (template, and temperature
    when a model was run at several) and ``automatic`` (an automatic measure: no prompt, no
    variants) columns; see :func:`~pages.services.common.judge_model`.

    Names are worked out once per (judge, prompt_id) pair and spread over the rows by group
    codes: HANNA has 530k ratings but 92 pairs. One shared frame (``cache_resource``, not
    copied out to each caller: 530k rows): read it, never change it in place. The raw
    answers are left out.
    """
    r = ds.ratings
    if not len(r):
        return r.assign(model=[], temperature=[], variant=[], automatic=[])
    codes = r.groupby(["judge", "prompt_id"], sort=False, observed=True).ngroup().to_numpy()
    first = pd.Series(np.arange(len(r))).groupby(codes).first().to_numpy()
    pairs = pd.DataFrame(
        {
            "judge": r["judge"].astype(str).to_numpy()[first],
            "prompt_id": r["prompt_id"].astype(str).to_numpy()[first],
        }
    )
    info = [judge_model(j, p) for j, p in zip(pairs["judge"], pairs["prompt_id"], strict=True)]
    pairs["model"] = [m for m, _ in info]
    pairs["temperature"] = pd.Series([t for _, t in info], dtype="float64")
    pairs["automatic"] = pairs["prompt_id"] == AUTOMATIC
    n_temps = pairs.groupby("model")["temperature"].nunique(dropna=False)
    several = pairs["model"].map(n_temps).to_numpy() > 1
    temp_txt = pairs["temperature"].map(lambda t: "t?" if pd.isna(t) else f"t{t:g}")
    pairs["variant"] = np.where(several, pairs["prompt_id"] + " @ " + temp_txt, pairs["prompt_id"])
    out = r.drop(columns=["raw"], errors="ignore")
    for col in ("model", "temperature", "variant", "automatic"):
        out[col] = pairs[col].to_numpy()[codes]
    return out


def model_options(variants: pd.DataFrame) -> list[str]:
    """Models, the one with the most templates (then most rows) first; automatic measures
    (no prompt, so no prompt variants) after every LLM judge, in natural order."""
    if not len(variants):
        return []
    stats = variants.groupby("model").agg(
        n_var=("variant", "nunique"), n=("score", "size"), automatic=("automatic", "all")
    )
    llm = stats[~stats["automatic"]].sort_values(["n_var", "n"], ascending=False)
    measures = natural_sorted(stats.index[stats["automatic"]].astype(str))
    return llm.index.astype(str).tolist() + measures


def automatic_models(variants: pd.DataFrame) -> set[str]:
    """The models of ``variants`` that are automatic measures (prompt_id "automatic")."""
    if not len(variants):
        return set()
    flags = variants["automatic"].to_numpy(dtype=bool)
    return {str(m) for m in pd.unique(variants["model"].to_numpy()[flags])}


def item_means(variants: pd.DataFrame, model: str, attribute: str) -> pd.DataFrame:
    """Mean parsed score per item (context, candidate) and variant for one model/attribute.

    NaN where none of the item's answers under that variant parsed; a variant whose answers
    never parsed keeps its (all-NaN) rows, so it is reported, not lost.
    """
    sel = variants[(variants["model"] == model) & (variants["attribute"].astype(str) == attribute)]
    return (
        sel.groupby(["context_id", "candidate_id", "variant"], observed=True)["score"]
        .mean()
        .reset_index()
    )


def _by_variant(means: pd.DataFrame, index, names) -> pd.DataFrame:
    """Mean scores with one column per variant in ``names``, all-NaN columns kept.

    ``pivot_table`` drops a column that is all NaN — exactly a template whose answers never
    parsed — so the columns are put back in.
    """
    wide = means.pivot_table(index=index, columns="variant", values="score")
    return wide.reindex(columns=list(names))


@cache_data(show_spinner=False, max_entries=32)
def mean_shift(ds: Dataset, model: str, baseline: str, confidence: float = 0.95) -> pd.DataFrame:
    """Mean score of each variant minus the baseline's, paired over items, with a t interval.

    Per attribute and variant: ``shift`` = mean over items rated (parsed) under both of
    (score - baseline score), ``lower``/``upper`` the ``confidence`` t interval, ``pvalue``
    of the paired t-test (``ranking.significance.paired_shift``), ``n_items``. Items are
    (context, candidate) with the score averaged over samples.
    """
    variants = rating_variants(ds)
    rows = []
    sel = variants[variants["model"] == model]
    for attribute in sorted(sel["attribute"].astype(str).unique()):
        means = item_means(variants, model, attribute)
        if baseline not in set(means["variant"]):
            continue
        wide = _by_variant(means, ["context_id", "candidate_id"], sorted(means["variant"].unique()))
        base = wide[baseline].to_numpy(dtype=np.float64)
        for v in wide.columns:
            if v == baseline:
                continue
            res = paired_shift(wide[v].to_numpy(dtype=np.float64), base, confidence)
            rows.append(
                dict(
                    attribute=attribute,
                    variant=v,
                    baseline=baseline,
                    shift=res.shift,
                    lower=res.lower,
                    upper=res.upper,
                    pvalue=res.pvalue,
                    n_items=res.n_used,
                    reason=res.reason,
                )
            )
    return pd.DataFrame(rows).reindex(
        columns=[
            "attribute",
            "variant",
            "baseline",
            "shift",
            "lower",
            "upper",
            "pvalue",
            "n_items",
            "reason",
        ]
    )


@cache_data(show_spinner="Comparing the rankings the templates induce…", max_entries=32)
def rank_stability(ds: Dataset, model: str, attribute: str, unit: str = "system") -> pd.DataFrame:
    """Kendall tau-b between the rankings two variants induce, variant x variant
    (``ranking.metrics.kendall_matrix``).

    ``unit`` "system": systems ranked by their mean score (needs system labels). "item":
    candidates ranked within each context; the mean of the per-context taus (contexts
    where a tau is undefined, e.g. constant scores, are left out).
    """
    means = item_means(rating_variants(ds), model, attribute)
    names = sorted(means["variant"].unique())
    if unit == "system":
        cands = ds.candidates
        if "system" not in cands.columns or not cands["system"].notna().any():
            raise DataError(f"{ds.name}: candidates carry no system labels; use the item level")
        lut = (
            cands[["context_id", "candidate_id", "system"]]
            .astype(str)
            .drop_duplicates(["context_id", "candidate_id"])
        )
        means = means.astype({"context_id": str, "candidate_id": str}).merge(
            lut, on=["context_id", "candidate_id"], how="left"
        )
        wide = _by_variant(means, "system", names)
        vectors = [wide[v].to_numpy(dtype=np.float64) for v in names]
    elif unit == "item":
        wide = _by_variant(means, ["context_id", "candidate_id"], names)
        # one (contexts x candidates) block per variant, all on the same rows and columns
        vectors = [wide[v].unstack("candidate_id").to_numpy(dtype=np.float64) for v in names]
    else:
        raise ValueError(f"unit must be 'system' or 'item'; got {unit!r}")
    taus = kendall_matrix(np.stack(vectors)) if names else np.empty((0, 0))
    return pd.DataFrame(taus, index=names, columns=names)


def rating_failure_frame(variants: pd.DataFrame, model: str) -> pd.DataFrame:
    """Share of unparsed ratings per variant and attribute for one model."""
    sel = variants[variants["model"] == model]
    out = (
        sel.assign(failed=sel["score"].isna())
        .groupby(["variant", "attribute"], observed=True)["failed"]
        .agg(failure_rate="mean", n_failed="sum", n_outputs="size")
        .reset_index()
    )
    out["n_failed"] = out["n_failed"].astype("int64")
    return out


@cache_data(show_spinner="Position bias and accuracy per template…", max_entries=16)
def pairwise_by_template(ds: Dataset) -> pd.DataFrame:
    """Per comparative judge (its name carries the template) and attribute: the position-bias
    columns of :func:`~pages.services.bias.bias_table`, pairwise accuracy against the
    human reference (:func:`~pages.services.comparisons.human_reference`; NaN without one)
    and the share of unparsed answers. Human annotators are left out (they have no
    template)."""
    bias = bias_table(ds)
    if not len(bias):
        return bias
    names = bias["judge"].astype(str)
    bias = bias[(names != HUMAN_POOL) & ~names.str.startswith(HUMAN_JUDGE_PREFIX)]
    comps = ds.comparisons
    failed = (
        comps.assign(failed=comps["p_first"].isna())
        .groupby(["judge", "attribute"], observed=True)["failed"]
        .mean()
    )
    accuracy, reference, failure = [], [], []
    for judge, attribute in zip(bias["judge"], bias["attribute"], strict=True):
        ref = human_reference(ds, attribute, judge)
        # NaN where no pair has two different reference scores (undefined, not zero)
        acc = math.nan
        if ref is not None:
            acc = float(pairwise_accuracy(pmatrix(ds, attribute, judge).P, ref.scores))
        accuracy.append(acc)
        reference.append(ref.source if ref is not None else "none")
        failure.append(float(failed.get((judge, attribute), math.nan)))
    return bias.assign(
        pairwise_accuracy=accuracy, failure_rate=failure, reference=reference
    ).reset_index(drop=True)


@cache_data(show_spinner=False, max_entries=32)
def variant_item_scores(ds: Dataset, model: str, attribute: str) -> pd.DataFrame:
    """One row per rated item (context, candidate) of ``model`` on ``attribute``: its
    ``system`` and one column per variant (template) with the mean parsed score, NaN where
    none parsed; for comparing groups of systems (``pages.shell.system_groups``).

    Empty (with the id columns) when the candidates carry no system labels.
    """
    means = item_means(rating_variants(ds), model, attribute)
    names = sorted(means["variant"].unique())
    cands = ds.candidates
    if "system" not in cands.columns or not cands["system"].notna().any():
        return pd.DataFrame(columns=["context_id", "candidate_id", "system", *names])
    wide = _by_variant(means, ["context_id", "candidate_id"], names).reset_index()
    wide.columns.name = None
    wide = wide.astype({"context_id": str, "candidate_id": str})
    out = with_systems(wide, cands)
    return out[["context_id", "candidate_id", "system", *names]]
