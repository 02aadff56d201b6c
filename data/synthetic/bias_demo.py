"""A simulated judge with known biases, made to show every section of the Judge bias page.

:func:`bias_demo` simulates (``data.synthetic.simulate.simulate_with_truth``) 40 contexts x 8
candidates from 8 systems whose strengths are evenly spaced (one logit apart), with texts, a
length bias, a first-slot bonus that decays with the quality gap, three injected cycles, ties,
three annotators and three sampled verdicts per ordered pair. :func:`truth_table` sets the
true values beside what the bias tables (``data.bias``) recovered.

Cycles: with three samples per order, close pairs sometimes flip their majority, so at this
seed two contexts (:data:`CHANCE_CYCLES`) have circular triads besides the injected ones.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from data.schema import Dataset
from data.synthetic.simulate import simulate_with_truth

__all__ = ["CHANCE_CYCLES", "NAME", "TRUTH_COLUMNS", "bias_demo", "true_first_win", "truth_table"]

#: Name of the dataset in the app.
NAME = "simulated biases"
#: Contexts whose circular triads come from the 3-sample noise, not the injection (seed 11).
CHANCE_CYCLES = ("d17", "d31")
#: Columns of :func:`truth_table`.
TRUTH_COLUMNS = ("check", "true", "found", "low", "high", "ok")

_C, _N, _SEED = 40, 8, 11
_BIAS = dict(length_bias=1.0, position_bias=1.0, position_bias_decay=0.5, cycles=3, tie_rate=0.05)
_COMMON = dict(
    n_systems=_N, texts=True, mode="samples", n_samples=3, likert=False, n_annotators=3,
    scale=(1, 9), random_state=_SEED,
)  # fmt: skip


def bias_demo() -> tuple[Dataset, dict]:
    """The simulated judge with known biases and its truth.

    Returns
    -------
    (Dataset, dict)
        The dataset (name :data:`NAME`, judge "simulated", attribute "quality"; its
        description states the true values) and the truth: ``length_bias`` (logit per unit
        of normalised word difference), ``position_bias`` and ``position_bias_decay`` (the
        first-slot bonus ``position_bias * exp(-decay * |q_i - q_j|)``), ``tie_rate``,
        ``cycle_contexts`` (the injected cycles), ``chance_cycles`` (:data:`CHANCE_CYCLES`),
        ``attribute``, ``judge``, ``description`` and ``quality`` (per candidate:
        context_id, candidate_id, system, quality, words).
    """
    probe, _ = simulate_with_truth(_C, _N, **_COMMON)
    strength = {f"s{k}": 3.5 - k for k in range(_N)}  # s0 best, one logit apart
    quality = probe.candidates["system"].map(strength).to_numpy().reshape(_C, _N)
    ds, latent = simulate_with_truth(_C, _N, quality=quality, judge_noise=0.0, **_BIAS, **_COMMON)
    injected = [f"d{c:02d}" for c in range(_BIAS["cycles"])]
    ds.name = NAME
    ds.description = (
        f"Simulated judge with known biases: {_C} contexts x {_N} candidates from {_N} systems "
        "(strengths one logit apart, s0 best), 3 annotators, 3 sampled verdicts per order, "
        f"tie rate {_BIAS['tie_rate']:g}, no judge noise. True length bias "
        f"{_BIAS['length_bias']:g} (logit per unit normalised word difference); first-slot "
        f"bonus {_BIAS['position_bias']:g} x exp(-{_BIAS['position_bias_decay']:g} x quality "
        f"gap); injected cycles in {', '.join(injected)} (1st and 3rd reversed); the 3-sample "
        f"noise adds cycles in {', '.join(CHANCE_CYCLES)}. Seed {_SEED}."
    )
    truth = dict(
        **{k: _BIAS[k] for k in ("length_bias", "position_bias", "position_bias_decay")},
        tie_rate=_BIAS["tie_rate"], cycle_contexts=injected, chance_cycles=list(CHANCE_CYCLES),
        attribute="quality", judge="simulated", description=ds.description,
        quality=latent[["context_id", "candidate_id", "system", "quality", "words"]],
    )  # fmt: skip
    return ds, truth


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def true_first_win(truth: dict, pairs: pd.DataFrame) -> np.ndarray:
    """The true first-position win rate of each pair (both orders averaged, ties 1/2).

    Parameters
    ----------
    truth : dict
        :func:`bias_demo`'s truth.
    pairs : DataFrame
        ``data.bias.pairs.pair_frame`` of the demo (context_id, a, b).

    Returns
    -------
    ndarray
        Per pair ``t/2 + (1 - t)/2 * (sigmoid(x + b) + sigmoid(-x + b))`` with ``x`` the
        judge's own preference for a (latent difference, reversed for the injected 1st/3rd
        pairs, plus the length term) and ``b`` the first-slot bonus at that gap.
    """
    q = truth["quality"].set_index(["context_id", "candidate_id"])
    ka = list(zip(pairs["context_id"], pairs["a"], strict=True))
    kb = list(zip(pairs["context_id"], pairs["b"], strict=True))
    qa, qb = q.loc[ka, "quality"].to_numpy(), q.loc[kb, "quality"].to_numpy()
    wa, wb = q.loc[ka, "words"].to_numpy(), q.loc[kb, "words"].to_numpy()
    d = qa - qb
    rank = q["quality"].groupby(level=0).rank(ascending=False, method="first")
    ra, rb = rank.loc[ka].to_numpy(), rank.loc[kb].to_numpy()
    flip = pairs["context_id"].isin(truth["cycle_contexts"]).to_numpy() & (
        ((ra == 1) & (rb == 3)) | ((ra == 3) & (rb == 1))
    )
    x = np.where(flip, -d, d) + truth["length_bias"] * (wa - wb) / (wa + wb)
    b = truth["position_bias"] * np.exp(-truth["position_bias_decay"] * np.abs(d))
    t = truth["tie_rate"]
    return t / 2 + (1 - t) / 2 * (_sigmoid(x + b) + _sigmoid(-x + b))


def truth_table(
    truth: dict,
    coefficients: pd.DataFrame,
    by_gap: pd.DataFrame,
    pairs: pd.DataFrame,
    cycles: pd.DataFrame,
) -> pd.DataFrame:
    """The true values beside the recovered ones, one row per check.

    Parameters
    ----------
    truth : dict
        :func:`bias_demo`'s truth.
    coefficients : DataFrame
        ``data.bias.style_coefficients`` (term, coef, low, high).
    by_gap : DataFrame
        ``data.bias.profile_by_gap`` (gap_low, gap_high, gap, first_win_rate(+_low/_high)).
    pairs : DataFrame
        ``data.bias.pair_frame`` (context_id, a, b, gap).
    cycles : DataFrame
        ``data.bias.cycles_summary`` (context_id, n_circular).

    Returns
    -------
    DataFrame
        check, true, found, low, high, ok (bool): the length coefficient (ok when its
        interval covers the truth), the first-win rate per gap bin (ok when covered; the true
        value is the mean of :func:`true_first_win` over the bin's pairs), and the contexts
        with a circular triad (ok when exactly the injected and chance ones); ``attrs["bins"]``
        holds gap and true first-win rate per bin for a plot.
    """
    rows = []
    coef = coefficients.set_index("term")
    if "length" in coef.index:
        c = coef.loc["length"]
        rows.append(("length coefficient", truth["length_bias"], c["coef"], c["low"], c["high"]))
    bins = pd.DataFrame(columns=["gap", "true"])
    if len(by_gap) and len(pairs):
        edges = np.r_[by_gap["gap_low"].to_numpy(float), by_gap["gap_high"].iloc[-1]]
        gap = pairs["gap"].to_numpy(float)
        k = np.clip(np.searchsorted(edges, gap, side="right") - 1, 0, len(by_gap) - 1)
        p = true_first_win(truth, pairs)
        want = [p[(k == b) & np.isfinite(gap)].mean() for b in range(len(by_gap))]
        bins = pd.DataFrame({"gap": by_gap["gap"].to_numpy(float), "true": want})
        for b, row in enumerate(by_gap.itertuples(index=False)):
            rows.append(
                (
                    f"first-win rate, gap {row.gap_low:.3g}–{row.gap_high:.3g}",
                    want[b], row.first_win_rate, row.first_win_rate_low, row.first_win_rate_high,
                )
            )  # fmt: skip
    rows = [(*r, bool(r[3] <= r[1] <= r[4])) for r in rows]
    found = sorted(cycles.loc[cycles["n_circular"] > 0, "context_id"].astype(str))
    want_cycles = sorted(truth["cycle_contexts"] + truth["chance_cycles"])
    rows.append(
        ("contexts with a cycle", ", ".join(want_cycles), ", ".join(found) or "none",
         np.nan, np.nan, found == want_cycles)
    )  # fmt: skip
    out = pd.DataFrame(rows, columns=list(TRUTH_COLUMNS))
    out.attrs["bins"] = bins
    return out
