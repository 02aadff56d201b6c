"""A seeded synthetic judge: datasets with a known truth, of any size.

Model (all draws from one ``numpy.random.Generator``, vectorised, no loop over pairs):

* **Latent quality** ``q[a, c, i]`` of candidate i of context c on attribute a, standard
  normal. Attributes share a common part (correlation ``ATTRIBUTE_CORRELATION``). With
  ``n_systems`` every candidate belongs to a system and half of its variance is the
  system's (so systems have a true order). ``quality`` can be given instead.
* **Human scores**: annotator k sees ``q + human_noise * e`` and answers the Likert score
  ``round(mid + spread * x)`` clipped to ``scale``, with ``mid`` the middle of the scale and
  ``spread`` a quarter of its width (so q = +-2 reaches the ends).
* **Pairwise judge**, all N(N-1) ordered pairs per context and attribute: logit
  ``q_i - q_j + position_bias * exp(-position_bias_decay * |q_i - q_j|) + judge_noise * e_ij
  + length_bias * (w_i - w_j) / (w_i + w_j)`` (one ``e_ij`` per ordered pair: the judge's own
  error, shared by its samples; ``w`` the candidates' word counts). With ``cycles = k`` the
  judge reverses, in the first k contexts, its preference between the candidates ranked 1st
  and 3rd by latent quality (``q_i - q_j`` enters with the other sign for that pair), which
  makes exactly one circular triad per such context when ``judge_noise = 0``. With tie probability ``t`` the verdict
  probabilities are A: ``(1 - t) * sigmoid``, B: ``(1 - t) * (1 - sigmoid)``, tie: ``t``.
  ``mode="soft"`` stores the expected score ``p_first = (1 - t) * sigmoid + t / 2`` (one
  row per pair, sample 0, no verdict); ``mode="samples"`` draws ``n_samples`` verdicts
  (p_first 1 / 0.5 / 0 for A / tie / B), whose mean estimates the soft value.
* **Texts** (``texts=True``, implied by ``length_bias``): word counts uniform on 20-200,
  texts from a small word list with some markdown headers, list items and bold
  (``data.synthetic.simulate_bias``). Drawn from a child generator (``Generator.spawn``), so every
  other draw is the same as without texts.
* **Judge Likert ratings** (``likert=True``): per prompt a leniency offset, per prompt and
  candidate an error ``judge_noise * e``, per sample a small extra noise; mapped to the
  scale like human scores; ``n_samples`` samples per prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from data.bias.features import normalized_diff
from data.schema import Dataset
from data.synthetic.simulate_bias import bias_note, draw_words, make_texts, reverse_first_third

#: Correlation between the latent qualities of two attributes of the same candidate.
ATTRIBUTE_CORRELATION = 0.7
#: Share of a candidate's latent variance that comes from its system (with n_systems).
SYSTEM_SHARE = 0.5
#: Standard deviation of a prompt's leniency offset (latent units) in judge ratings.
PROMPT_OFFSET_SD = 0.3
#: Standard deviation of the per-sample noise (latent units) in judge ratings.
SAMPLE_NOISE_SD = 0.5


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _likert(latent, scale):
    lo, hi = scale
    mid, spread = (lo + hi) / 2.0, (hi - lo) / 4.0
    return np.clip(np.rint(mid + spread * latent), lo, hi)


def _ids(prefix: str, n: int) -> np.ndarray:
    width = len(str(max(n - 1, 0)))
    return np.array([f"{prefix}{k:0{width}d}" for k in range(n)], dtype=object)


def simulate_with_truth(
    n_contexts: int,
    n_candidates: int,
    *,
    attributes: Sequence[str] = ("quality",),
    n_annotators: int = 3,
    judge_noise: float = 1.0,
    position_bias: float = 0.0,
    tie_rate: float = 0.0,
    mode: str = "soft",
    n_samples: int = 5,
    likert: bool = True,
    scale: tuple[float, float] = (1, 5),
    n_systems: int | None = None,
    human_noise: float = 0.5,
    prompts: Sequence[str] = ("plain",),
    quality: np.ndarray | None = None,
    random_state: int | np.random.Generator | None = 0,
    judge_name: str = "simulated",
    length_bias: float = 0.0,
    position_bias_decay: float = 0.0,
    cycles: int = 0,
    texts: bool = False,
) -> tuple[Dataset, pd.DataFrame]:
    """Simulate a dataset and return it with the latent truth.

    Parameters
    ----------
    n_contexts, n_candidates : int
        Number of contexts and candidates per context (>= 1 and >= 2).
    attributes : sequence of str
        Attribute names; each gets its own latent quality, human scores, comparisons and
        ratings.
    n_annotators : int
        Human annotators (``human_1``, ``human_2``, ...) scoring every candidate; 0 for none.
    judge_noise : float
        Standard deviation of the judge's error in logits (pairwise) and latent units
        (ratings).
    position_bias : float
        Added to the logit of the candidate shown first; > 0 favours slot A.
    tie_rate : float
        Probability in [0, 1) of a tie verdict.
    mode : {"soft", "samples"}
        Soft probabilities (one row per ordered pair) or ``n_samples`` sampled verdicts.
    n_samples : int
        Verdicts per ordered pair in ``"samples"`` mode, and rating samples per prompt.
    likert : bool
        Also produce judge Likert ratings (the ratings table).
    scale : (low, high)
        Likert range of human scores and judge ratings (integer steps).
    n_systems : int, optional
        Candidates belong to systems ``s0``, ``s1``, ... (distinct within a context when
        ``n_systems >= n_candidates``).
    human_noise : float
        Standard deviation of each annotator's error (latent units).
    prompts : sequence of str
        Prompt ids of the judge ratings.
    quality : ndarray, optional
        Latent qualities of shape (n_contexts, n_candidates) (same for every attribute)
        or (n_attributes, n_contexts, n_candidates), replacing the random ones. The Likert
        map turns q into ``mid + spread * q``: on a 1-5 scale, q = score - 3.
    random_state : int, Generator or None
        Seed; the same seed gives the same dataset.
    judge_name : str
        The ``judge`` column of comparisons and ratings.
    length_bias : float
        Added to the judge's logit times the normalised word-count difference
        ``(w_first - w_second) / (w_first + w_second)``; > 0 favours the longer candidate.
        Non-zero implies ``texts``.
    position_bias_decay : float
        >= 0; the first-slot bonus is ``position_bias * exp(-position_bias_decay * |q_i -
        q_j|)``: with a decay, position bias is strongest between close candidates.
    cycles : int
        Contexts (the first ``cycles``) where the judge's preference between the candidates
        ranked 1st and 3rd by latent quality is reversed (needs n_candidates >= 3).
    texts : bool
        Give candidates real-looking texts with varied word counts (20-200) and some
        markdown headers, list items and bold.

    Returns
    -------
    dataset : Dataset
        Contexts, candidates, human_scores, comparisons and (if ``likert``) ratings; the
        ``scales`` map every attribute to ``scale``.
    truth : pandas.DataFrame
        One row per candidate and attribute: context_id, candidate_id, attribute, system,
        quality (the latent value), and ``words`` (the word count) with texts.

    Raises
    ------
    ValueError
        ``n_contexts < 1`` or ``n_candidates < 2``; ``mode`` not ``"soft"`` / ``"samples"``;
        ``tie_rate`` outside [0, 1); ``n_samples < 1`` or ``n_annotators < 0``; a negative
        ``judge_noise`` or ``human_noise``; ``scale`` without low < high; ``n_systems < 1``;
        ``attributes`` empty or repeated; ``quality`` of another shape or not finite;
        ``position_bias_decay < 0``; ``cycles`` negative, above ``n_contexts``, or with fewer
        than 3 candidates.
    """
    if n_contexts < 1 or n_candidates < 2:
        raise ValueError(
            f"need n_contexts >= 1 and n_candidates >= 2; got {n_contexts} and {n_candidates}"
        )
    if mode not in ("soft", "samples"):
        raise ValueError(f"mode must be 'soft' or 'samples', got {mode!r}")
    if not 0.0 <= tie_rate < 1.0:
        raise ValueError(f"tie_rate must lie in [0, 1), got {tie_rate}")
    if n_samples < 1 or n_annotators < 0:
        raise ValueError(
            f"need n_samples >= 1 and n_annotators >= 0; got {n_samples}, {n_annotators}"
        )
    if judge_noise < 0 or human_noise < 0:
        raise ValueError("judge_noise and human_noise must be >= 0")
    lo, hi = float(scale[0]), float(scale[1])
    if not lo < hi:
        raise ValueError(f"scale must be (low, high) with low < high, got {scale}")
    if n_systems is not None and n_systems < 1:
        raise ValueError(f"n_systems must be >= 1, got {n_systems}")
    if position_bias_decay < 0:
        raise ValueError(f"position_bias_decay must be >= 0, got {position_bias_decay}")
    if not 0 <= cycles <= n_contexts or (cycles and n_candidates < 3):
        raise ValueError(
            f"cycles must lie in [0, n_contexts] = [0, {n_contexts}] and needs n_candidates >= 3;"
            f" got cycles={cycles} with {n_candidates} candidates"
        )
    texts = bool(texts) or length_bias != 0
    attributes = [str(a) for a in attributes]
    prompts = [str(p) for p in prompts]
    if not attributes or len(set(attributes)) != len(attributes):
        raise ValueError(f"attributes must be distinct and non-empty, got {attributes}")
    rng = np.random.default_rng(random_state)
    n_attr, C, N = len(attributes), n_contexts, n_candidates

    # --- truth
    if n_systems is not None:
        S = n_systems
        if S >= N:
            system_idx = np.argsort(rng.random((C, S)), axis=1)[:, :N]
        else:
            system_idx = np.argsort(rng.random((C, N)), axis=1) % S
        system_effect = rng.standard_normal((n_attr + 1, S))
        own = rng.standard_normal((n_attr + 1, C, N))
        parts = (
            np.sqrt(SYSTEM_SHARE) * system_effect[:, system_idx] + np.sqrt(1 - SYSTEM_SHARE) * own
        )
    else:
        system_idx = None
        parts = rng.standard_normal((n_attr + 1, C, N))
    rho = ATTRIBUTE_CORRELATION
    q = rho * parts[0][None] + np.sqrt(1 - rho**2) * parts[1:]
    if quality is not None:
        given = np.asarray(quality, dtype=np.float64)
        if given.shape == (C, N):
            given = np.broadcast_to(given, (n_attr, C, N))
        if given.shape != (n_attr, C, N) or not np.isfinite(given).all():
            raise ValueError(
                f"quality must be finite with shape ({C}, {N}) or ({n_attr}, {C}, {N}); "
                f"got shape {np.shape(quality)}"
            )
        q = given.copy()

    ctx_names = _ids("d", C)
    cand_names = _ids("c", N)
    sys_names = _ids("s", n_systems) if n_systems is not None else None
    attr_names = np.array(attributes, dtype=object)

    contexts = pd.DataFrame(
        {"context_id": ctx_names, "text": [f"Simulated context {k}" for k in range(C)]}
    )
    cc, ii = np.meshgrid(np.arange(C), np.arange(N), indexing="ij")
    cc, ii = cc.ravel(), ii.ravel()
    words = None
    if texts:
        text_rng = rng.spawn(1)[0]  # leaves rng's own stream untouched
        words = draw_words(text_rng, (C, N))
        cand_texts = make_texts(text_rng, words.ravel())
    else:
        cand_texts = [
            f"Simulated candidate {i} of context {c}" for c, i in zip(cc, ii, strict=True)
        ]
    candidates = pd.DataFrame(
        {
            "context_id": ctx_names[cc],
            "candidate_id": cand_names[ii],
            "system": (
                sys_names[system_idx.ravel()]
                if system_idx is not None
                else np.full(C * N, np.nan, dtype=object)
            ),
            "text": cand_texts,
        }
    )
    truth = pd.DataFrame(
        {
            "context_id": np.tile(ctx_names[cc], n_attr),
            "candidate_id": np.tile(cand_names[ii], n_attr),
            "attribute": np.repeat(attr_names, C * N),
            "system": np.tile(candidates["system"].to_numpy(dtype=object), n_attr),
            "quality": q.reshape(-1),
        }
    )
    if words is not None:
        truth["words"] = np.tile(words.ravel(), n_attr)

    # --- human scores: shape (n_attr, C, N, n_annotators)
    noise = rng.standard_normal((n_attr, C, N, n_annotators))
    human = _likert(q[..., None] + human_noise * noise, (lo, hi))
    a_idx, c_idx, i_idx, k_idx = (x.ravel() for x in np.indices(human.shape))
    human_scores = pd.DataFrame(
        {
            "context_id": ctx_names[c_idx],
            "candidate_id": cand_names[i_idx],
            "attribute": attr_names[a_idx],
            "annotator": np.array([f"human_{k + 1}" for k in range(n_annotators)], dtype=object)[
                k_idx
            ],
            "score": human.ravel(),
        }
    )

    # --- pairwise judge over all ordered pairs
    first_idx, second_idx = np.nonzero(~np.eye(N, dtype=bool))
    M = len(first_idx)
    pair_noise = rng.standard_normal((n_attr, C, M))
    diff = q[:, :, first_idx] - q[:, :, second_idx]
    bonus = position_bias * np.exp(-position_bias_decay * np.abs(diff))
    if cycles:
        diff = reverse_first_third(diff, q, cycles, first_idx, second_idx)
    logits = diff + bonus + judge_noise * pair_noise
    if length_bias:
        logits = logits + length_bias * normalized_diff(words[:, first_idx], words[:, second_idx])
    win = (1.0 - tie_rate) * _sigmoid(logits)
    if mode == "soft":
        p = win + tie_rate / 2.0
        K = 1
        verdict = np.full(p.shape, np.nan, dtype=object)
        p = p[..., None]
        verdict = verdict[..., None]
    else:
        K = n_samples
        u = rng.random((n_attr, C, M, K))
        is_tie = u < tie_rate
        is_a = ~is_tie & (u < tie_rate + win[..., None])
        p = np.where(is_tie, 0.5, np.where(is_a, 1.0, 0.0))
        verdict = np.where(is_tie, "tie", np.where(is_a, "A", "B")).astype(object)
    a_idx, c_idx, m_idx, k_idx = (x.ravel() for x in np.indices((n_attr, C, M, K)))
    comparisons = pd.DataFrame(
        {
            "context_id": ctx_names[c_idx],
            "attribute": attr_names[a_idx],
            "judge": judge_name,
            "first_id": cand_names[first_idx[m_idx]],
            "second_id": cand_names[second_idx[m_idx]],
            "p_first": p.ravel(),
            "verdict": verdict.ravel(),
            "grade": np.nan,  # the simulated judge gives plain verdicts
            "weight": 1.0,
            "sample": k_idx.astype(np.int64),
            "raw": "",
        }
    )

    # --- judge Likert ratings: shape (n_attr, n_prompts, C, N, n_samples)
    ratings = None
    if likert:
        n_prompts = len(prompts)
        offset = PROMPT_OFFSET_SD * rng.standard_normal(n_prompts)
        err = judge_noise * rng.standard_normal((n_attr, n_prompts, C, N))
        sample_noise = SAMPLE_NOISE_SD * rng.standard_normal((n_attr, n_prompts, C, N, n_samples))
        latent = q[:, None, :, :, None] + offset[None, :, None, None, None] + err[..., None]
        rated = _likert(latent + sample_noise, (lo, hi))
        a_idx, p_idx, c_idx, i_idx, k_idx = (x.ravel() for x in np.indices(rated.shape))
        ratings = pd.DataFrame(
            {
                "context_id": ctx_names[c_idx],
                "candidate_id": cand_names[i_idx],
                "attribute": attr_names[a_idx],
                "judge": judge_name,
                "prompt_id": np.array(prompts, dtype=object)[p_idx],
                "sample": k_idx.astype(np.int64),
                "score": rated.ravel(),
                "raw": "",
            }
        )

    ds = Dataset(
        name="simulated",
        contexts=_canonical(contexts),
        candidates=_canonical(candidates),
        human_scores=_canonical(human_scores),
        comparisons=_canonical(comparisons),
        scales={a: (lo, hi) for a in attributes},
        description=(
            f"Simulated: {C} contexts x {N} candidates, attributes {', '.join(attributes)}, "
            f"{n_annotators} annotators, judge noise {judge_noise:g}, position bias "
            f"{position_bias:g}, tie rate {tie_rate:g}, {mode} mode, seed {random_state!r}"
            + bias_note(length_bias, position_bias_decay, cycles, ctx_names, texts)
        ),
        source="data.synthetic.simulate",
    )
    if ratings is not None:
        ds.ratings = _canonical(ratings)
    return ds, _canonical(truth)


def _canonical(df: pd.DataFrame) -> pd.DataFrame:
    """Object columns as pandas ``str`` (the canonical dtype), without a full validation."""
    for col in df.columns:
        if df[col].dtype == object:
            df[col] = df[col].astype("str")
    return df


def simulate(n_contexts: int, n_candidates: int, **options) -> Dataset:
    """Simulate a dataset: :func:`simulate_with_truth` without the truth table.

    Takes the same arguments; see :func:`simulate_with_truth` for them and for the model.

    Parameters
    ----------
    n_contexts, n_candidates : int
        Number of contexts and candidates per context (>= 1 and >= 2).
    **options
        Keyword arguments of :func:`simulate_with_truth` (``attributes``, ``judge_noise``,
        ``position_bias``, ``mode``, ``random_state``, ...).

    Returns
    -------
    Dataset
        The simulated dataset, the same as ``simulate_with_truth(...)[0]``.

    Raises
    ------
    ValueError
        Invalid arguments, as for :func:`simulate_with_truth`.
    """
    return simulate_with_truth(n_contexts, n_candidates, **options)[0]
