"""Tables of the judge probes: per-candidate log-likelihood, perplexity and Min-K% Prob, the
judge's self-preference (Wataoka et al. 2024) and a contamination AUC (Shi et al. 2024).

The token log-probabilities come from ``judge.token_logprobs`` (the caller runs the model);
the statistics from :mod:`ranking.bias.probes`. Tables:

- :func:`probe_texts`: which candidate texts to score (capped, contexts kept whole);
- :func:`score_table`: one row per candidate with ``n_tokens``, ``mean_logprob``,
  ``perplexity``, ``min_k_prob``;
- :func:`preference_pairs`: one row per unordered candidate pair judged by the judge, with
  its preference for the first (both orders averaged), the log-likelihood difference and
  the human-score difference;
- :func:`self_preference_summary`: Spearman and Pearson with intervals, overall and within
  human-score strata;
- :func:`family_win_rates`: the win rate of the systems the user marks as the judge's own
  family against the others, at equal human score;
- :func:`contamination`: AUC of Min-K% (or another score) between two groups and histogram
  data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from data.natural import natural_key
from data.schema import DataError, Dataset
from ranking import auc_test, mean_interval, mean_logprob, min_k_prob, perplexity
from ranking import self_preference as _self_preference

SCORE_COLUMNS = ["n_tokens", "mean_logprob", "perplexity", "min_k_prob"]
#: human-score strata: the difference of the two candidates' mean human scores, rounded
EQUAL = 0.0


def probe_texts(ds: Dataset, max_texts: int | None = None) -> tuple[pd.DataFrame, str]:
    """Candidates to score: (context_id, candidate_id, system, text, context_text), and a note.

    Parameters
    ----------
    ds : Dataset
    max_texts : int, optional
        Keep whole contexts, in natural order of their ids, until this many candidates.

    Returns
    -------
    texts : DataFrame
    note : str
        "" or what the cap left out.
    """
    cand = ds.candidates
    if not len(cand):
        raise DataError("the dataset has no candidates, so there is no text to score")
    cols = ["context_id", "candidate_id", "text"]
    out = cand[cols].copy()
    out["system"] = cand["system"] if "system" in cand else cand["candidate_id"]
    ctx = ds.contexts.set_index("context_id")["text"] if len(ds.contexts) else pd.Series()
    out["context_text"] = out["context_id"].map(ctx).fillna("").astype(str)
    out["text"] = out["text"].fillna("").astype(str)
    out = out.sort_values(
        ["context_id", "candidate_id"], key=lambda s: s.map(natural_key)
    ).reset_index(drop=True)
    note = ""
    if max_texts is not None and len(out) > max_texts:
        sizes = out.groupby("context_id", sort=False).size()
        keep = sizes.index[sizes.cumsum() <= max(int(max_texts), int(sizes.iloc[0]))]
        n_all, n_ctx = len(out), out["context_id"].nunique()
        out = out[out["context_id"].isin(keep)].reset_index(drop=True)
        note = (
            f"scored {len(out)} of {n_all} candidates (the first {len(keep)} of {n_ctx} "
            f"contexts); raise the cap to score more"
        )
    return out[["context_id", "candidate_id", "system", "text", "context_text"]], note


def score_table(texts: pd.DataFrame, logprobs, k: float = 0.2) -> pd.DataFrame:
    """One row per text: ids, system and the per-token statistics of its log-probabilities.

    Parameters
    ----------
    texts : DataFrame
        From :func:`probe_texts` (any columns; ``context_id``, ``candidate_id``, ``system``
        are kept).
    logprobs : sequence of 1-D arrays
        ``judge.token_logprobs`` of ``texts["text"]``, aligned row by row.
    k : float
        Min-K% share.

    Returns
    -------
    DataFrame
        ``context_id, candidate_id, system`` and :data:`SCORE_COLUMNS`; NaN for empty texts.
    """
    if len(logprobs) != len(texts):
        raise ValueError(f"{len(logprobs)} log-prob arrays for {len(texts)} texts")
    keep = [c for c in ("context_id", "candidate_id", "system") if c in texts]
    out = texts[keep].reset_index(drop=True).copy()
    out["n_tokens"] = [int(np.sum(~np.isnan(np.asarray(a, float)))) for a in logprobs]
    out["mean_logprob"] = [mean_logprob(a) for a in logprobs]
    out["perplexity"] = [perplexity(a) for a in logprobs]
    out["min_k_prob"] = [min_k_prob(a, k) for a in logprobs]
    return out


def _judge_preferences(ds: Dataset, attribute: str, judge: str) -> pd.DataFrame:
    """(context_id, a, b, preference): preference for a over b, orders and samples averaged."""
    comp = ds.comparisons
    rows = comp[(comp["attribute"] == attribute) & (comp["judge"] == judge)]
    if len(rows):
        p = rows["p_first"].astype(float)
        first, second = rows["first_id"].astype(str), rows["second_id"].astype(str)
        swap = np.array(
            [natural_key(f) > natural_key(s) for f, s in zip(first, second, strict=True)]
        )
        df = pd.DataFrame(
            {
                "context_id": rows["context_id"].astype(str).to_numpy(),
                "a": np.where(swap, second, first),
                "b": np.where(swap, first, second),
                "pref": np.where(swap, 1.0 - p, p),
            }
        )
        # orders first averaged within each order, then the two orders averaged
        df["order"] = swap
        by_order = df.groupby(["context_id", "a", "b", "order"])["pref"].mean()
        return by_order.groupby(level=[0, 1, 2]).mean().rename("preference").reset_index()
    rat = ds.ratings
    rows = rat[(rat["attribute"] == attribute) & (rat["judge"] == judge)]
    if not len(rows):
        raise DataError(
            f"judge {judge!r} has no comparisons or ratings for attribute {attribute!r}"
        )
    mean = rows.groupby(["context_id", "candidate_id"])["score"].mean().dropna()
    out = []
    for ctx, part in mean.groupby(level=0):
        ids = sorted(part.index.get_level_values(1).astype(str), key=natural_key)
        vals = dict(zip(part.index.get_level_values(1).astype(str), part.to_numpy(), strict=True))
        for x in range(len(ids)):
            for y in range(x + 1, len(ids)):
                d = vals[ids[x]] - vals[ids[y]]
                out.append((str(ctx), ids[x], ids[y], 0.5 + 0.5 * float(np.sign(d))))
    return pd.DataFrame(out, columns=["context_id", "a", "b", "preference"])


def preference_pairs(ds: Dataset, attribute: str, judge: str, scores: pd.DataFrame) -> pd.DataFrame:
    """Judged pairs with the judge's preference, log-likelihood and human-score differences.

    Parameters
    ----------
    ds : Dataset
    attribute, judge : str
        A pairwise judge (p_first of both orders averaged) or a ratings judge (preference
        1 / 0.5 / 0 from its mean ratings of the two candidates).
    scores : DataFrame
        From :func:`score_table`.

    Returns
    -------
    DataFrame
        ``context_id, first_id, second_id, first_system, second_system, preference, ll_diff,
        human_diff, stratum``: ``preference`` for the first (the one the humans
        score higher; natural order of ids when equal or unscored),
        ``ll_diff`` its mean token log-probability minus the second's, ``human_diff`` the
        difference of mean human scores (>= 0; NaN without them) and ``stratum`` that
        difference rounded to an integer (0: equal human scores). Pairs with an unscored
        text are left out.
    """
    pref = _judge_preferences(ds, attribute, judge)
    sc = scores.assign(
        context_id=scores["context_id"].astype(str), candidate_id=scores["candidate_id"].astype(str)
    ).set_index(["context_id", "candidate_id"])
    hs = ds.human_scores
    hs = hs[hs["attribute"] == attribute]
    human = hs.groupby(["context_id", "candidate_id"])["score"].mean()
    human.index = human.index.map(lambda t: (str(t[0]), str(t[1])))
    ka = list(zip(pref["context_id"], pref["a"], strict=True))
    kb = list(zip(pref["context_id"], pref["b"], strict=True))
    ll = sc["mean_logprob"]
    out = pd.DataFrame(
        {
            "context_id": pref["context_id"],
            "first_id": pref["a"],
            "second_id": pref["b"],
            "first_system": sc["system"].reindex(ka).to_numpy(),
            "second_system": sc["system"].reindex(kb).to_numpy(),
            "preference": pref["preference"].to_numpy(),
            "ll_diff": ll.reindex(ka).to_numpy() - ll.reindex(kb).to_numpy(),
            "human_diff": human.reindex(ka).to_numpy() - human.reindex(kb).to_numpy(),
        }
    )
    # first = the candidate the humans score higher, so strata are |difference| >= 0
    flip = (out["human_diff"] < 0).to_numpy()
    for x, y in (("first_id", "second_id"), ("first_system", "second_system")):
        out.loc[flip, [x, y]] = out.loc[flip, [y, x]].to_numpy()
    for col in ("ll_diff", "human_diff"):
        out.loc[flip, col] = -out.loc[flip, col]
    out.loc[flip, "preference"] = 1.0 - out.loc[flip, "preference"]
    out["stratum"] = np.round(out["human_diff"].to_numpy(float))
    out = out[np.isfinite(out["ll_diff"].to_numpy(float))]
    return out.reset_index(drop=True)


def self_preference_summary(pairs: pd.DataFrame, *, n_boot=1000, random_state=None) -> pd.DataFrame:
    """Spearman and Pearson of preference against ``ll_diff``: all pairs, then each stratum.

    Returns
    -------
    DataFrame
        ``pairs`` ("all pairs" or "human diff = s"), ``n``, ``spearman``, ``spearman_low``,
        ``spearman_high``, ``pearson``, ``pearson_low``, ``pearson_high``, ``reason``.
    """
    rows = []
    have_strata = pairs["stratum"].notna().any()
    kw = dict(contexts=pairs["context_id"].to_numpy(), n_boot=n_boot, random_state=random_state)
    sub = pairs[pairs["stratum"].notna()]
    strata = sub["stratum"].to_numpy() if have_strata else None
    res = {}
    for method in ("spearman", "pearson"):
        full = _self_preference(pairs["preference"], pairs["ll_diff"], method=method, **kw)
        by = (
            _self_preference(
                sub["preference"],
                sub["ll_diff"],
                strata=strata,
                contexts=sub["context_id"].to_numpy(),
                method=method,
                n_boot=n_boot,
                random_state=random_state,
            ).strata
            if have_strata
            else {}
        )
        res[method] = {
            "all pairs": full.overall,
            **{f"human diff = {s:g}": r for s, r in by.items()},
        }
    for label in res["spearman"]:
        s, p = res["spearman"][label], res["pearson"][label]
        rows.append(
            {
                "pairs": label,
                "n": s.n_used,
                "spearman": s.value,
                "spearman_low": s.lower,
                "spearman_high": s.upper,
                "pearson": p.value,
                "pearson_low": p.lower,
                "pearson_high": p.upper,
                "reason": s.reason,
            }
        )
    return pd.DataFrame(rows)


def family_win_rates(
    pairs: pd.DataFrame, own: list[str], *, n_boot=1000, random_state=None
) -> pd.DataFrame:
    """Win rate of own-family systems against the other systems, at equal human score.

    Parameters
    ----------
    pairs : DataFrame
        From :func:`preference_pairs`.
    own : list of str
        Systems of the judge's own model family.

    Returns
    -------
    DataFrame
        One row per own system and one for all of them: ``system``, ``n_pairs`` (pairs against
        a non-family system whose rounded human scores are equal), ``win_rate`` (the judge's
        mean preference for the own system; 0.5 = no favour), ``low``, ``high``,
        ``ll_diff`` (mean log-likelihood advantage of the own system in those pairs).
    """
    own_set = {str(s) for s in own}
    a_own = pairs["first_system"].astype(str).isin(own_set)
    b_own = pairs["second_system"].astype(str).isin(own_set)
    sel = (a_own ^ b_own) & (pairs["stratum"] == EQUAL)
    p = pairs[sel]
    flip = ~a_own[sel].to_numpy()
    win = np.where(flip, 1.0 - p["preference"], p["preference"])
    ll = np.where(flip, -p["ll_diff"], p["ll_diff"])
    system = np.where(flip, p["second_system"].astype(str), p["first_system"].astype(str))
    rows = []
    groups = [(s, system == s) for s in sorted(own_set, key=natural_key)]
    for name, mask in groups + [("all own-family", np.ones(len(p), bool))]:
        r = mean_interval(
            win[mask], p["context_id"].to_numpy()[mask], n_boot=n_boot, random_state=random_state
        )
        rows.append(
            {
                "system": name,
                "n_pairs": int(mask.sum()),
                "win_rate": r.value,
                "low": r.lower,
                "high": r.upper,
                "ll_diff": float(np.mean(ll[mask])) if mask.any() else np.nan,
            }
        )
    return pd.DataFrame(rows)


def contamination(
    scores: pd.DataFrame,
    column: str,
    group_a,
    group_b,
    *,
    score: str = "min_k_prob",
    bins: int = 20,
    n_boot=1000,
    random_state=None,
) -> tuple[dict, pd.DataFrame]:
    """AUC of ``score`` between texts whose ``column`` is in ``group_a`` vs ``group_b``.

    Returns
    -------
    summary : dict
        ``auc`` (P(a text of A scores higher than one of B)), ``low``, ``high``, ``pvalue``,
        ``n_a``, ``n_b``, ``reason``.
    histogram : DataFrame
        ``group`` ("A"/"B"), ``bin_low``, ``bin_high``, ``count`` on shared bin edges.
    """
    if column not in scores:
        raise DataError(f"the score table has no column {column!r}")
    values = scores[column].astype(str)
    a_vals = {str(v) for v in group_a}
    b_vals = {str(v) for v in group_b}
    if a_vals & b_vals:
        raise DataError(f"{sorted(a_vals & b_vals)} are in both groups; a text belongs to one")
    a = scores.loc[values.isin(a_vals), score].to_numpy(float)
    b = scores.loc[values.isin(b_vals), score].to_numpy(float)
    res = auc_test(a, b, n_boot=n_boot, random_state=random_state)
    summary = {
        "auc": res.value,
        "low": res.lower,
        "high": res.upper,
        "pvalue": res.pvalue,
        "n_a": res.n_a,
        "n_b": res.n_b,
        "reason": res.reason,
    }
    both = np.r_[a, b]
    both = both[np.isfinite(both)]
    if not both.size:
        return summary, pd.DataFrame(columns=["group", "bin_low", "bin_high", "count"])
    edges = np.histogram_bin_edges(both, bins=bins)
    parts = []
    for name, x in (("A", a), ("B", b)):
        counts, _ = np.histogram(x[np.isfinite(x)], bins=edges)
        parts.append(
            pd.DataFrame(
                {"group": name, "bin_low": edges[:-1], "bin_high": edges[1:], "count": counts}
            )
        )
    return summary, pd.concat(parts, ignore_index=True)
