"""Run a judge over a dataset: pairwise comparisons and absolute ratings, resumable.

Every call first looks in the run store (:mod:`judge.store`); only missing answers go to the
backend, and each answer is stored as soon as it arrives (backends with ``iter_label_probs``
/ ``iter_generate`` stream them; others are called in chunks of ``chunk_size`` requests). A
run that is killed or cancelled picks up where it stopped. A request that fails is stored as
a failure with its reason and asked again on the next run; a run sharing its store with
another one waits for the calls the other is making instead of paying for them twice
(:mod:`judge.execute` says exactly what is guaranteed).

Pairwise (:func:`run_pairwise`) returns the canonical comparisons table with one row per
presentation order (both orders are separate rows, never averaged, so position bias stays
visible):

- ``mode="probs"``: p_first = P(A) / (P(A) + P(B)) from the label-word probabilities after
  the prompt (a tie label counts half); one row per ordered pair, ``sample`` 0, no verdict.
- ``mode="samples"``: K answers per ordered pair, parsed to A / B / tie; **one row per
  sample** with p_first 1 (A), 0 (B), 0.5 (tie) or NaN (unparsed, raw text kept) and the
  verdict. The mean over a pair's samples — what ``data.arrays.comparisons_to_P`` takes —
  is the share of A with ties counting half (``data.parsing.sample_verdicts_to_p``).

Absolute (:func:`run_absolute`) returns the canonical ratings table: ``mode="samples"`` K
answers per candidate parsed to Likert scores; ``mode="expected"`` the G-Eval expected score
sum s * P(s) over the score tokens, when the backend gives probabilities.

The ``judge`` column is readable: ``<model>/<template id>`` for pairwise probabilities,
``<model>/<template id>/t<temperature>-p<top_p>`` for pairwise samples; ratings carry the
template in ``prompt_id`` and name the judge ``<model>/t<temperature>-p<top_p>`` (samples) or
``<model>/expected``, so that prompts can be compared for one judge. :mod:`judge.names`
writes these names and reads them back (:func:`judge.names.parse_judge_name`).

Bad input is caught before any model call: a template field the data cannot fill, a
template of the wrong kind, an unknown context, an endpoint that does not answer or a model it
does not know (``backend.check()`` when the backend has it).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from data.schema import DataError, Dataset
from judge.backends.base import BackendError, Decoding, GenerateRequest, LabelRequest
from judge.execute import execute, failure_counts
from judge.names import judge_name
from judge.store import (
    RunItem,
    RunStore,
    comparisons_from_rows,
    key_base,
    key_from_base,
    prompt_hash,
    ratings_from_rows,
)

logger = logging.getLogger(__name__)

RunProgress = Callable[[int, int], None]  # (n_done, n_total), cached answers included
PAIRWISE_MODES = ("probs", "samples")
ABSOLUTE_MODES = ("samples", "expected")


@dataclass
class Plan:
    """Everything a run will ask, computed before any model call (also used by estimates)."""

    kind: str  # "pairwise" or "absolute"
    mode: str
    request_kind: str  # "label" or "generate"
    items: list[RunItem]
    requests: dict[str, object]  # key -> request, one per distinct key (in first-seen order)
    settings: dict
    run_id: str
    warnings: list[str] = field(default_factory=list)

    @property
    def n_calls(self) -> int:
        return len(self.requests)


# ---------------------------------------------------------------------------------------
# identities and settings
# ---------------------------------------------------------------------------------------
def backend_identity(backend) -> tuple[dict, str]:
    """(describe() dict, model_id) of a backend object or of an identity dict."""
    if isinstance(backend, dict):
        desc = dict(backend)
        return desc, str(desc.get("model_id") or desc.get("model") or desc.get("kind"))
    desc = dict(backend.describe())
    return desc, str(getattr(backend, "model_id", None) or desc.get("model"))


def _template_ident(template) -> dict:
    return {"id": template.id, "version": template.version, "key": template.key()}


def _seed_for(random_state, context_id: str) -> int:
    """A per-context seed, so the pairs of a context do not depend on which others run."""
    digest = hashlib.sha256(f"{random_state}\x1f{context_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _run_id(parts: dict) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------
# data access and checks
# ---------------------------------------------------------------------------------------
def _contexts_to_run(dataset: Dataset, contexts) -> list[tuple[str, str | None, pd.DataFrame]]:
    """[(context_id, context text or None, candidates of the context)] in dataset order."""
    cands = dataset.candidates
    if cands is None or len(cands) == 0:
        raise DataError(f"dataset {dataset.name!r} has no candidates to judge")
    cands = cands.assign(
        context_id=cands["context_id"].astype(str), candidate_id=cands["candidate_id"].astype(str)
    )
    texts: dict[str, str] = {}
    if dataset.contexts is not None and len(dataset.contexts):
        ctx = dataset.contexts
        texts = dict(zip(ctx["context_id"].astype(str), ctx["text"], strict=True))
    order = list(dict.fromkeys(cands["context_id"]))
    if isinstance(contexts, bool):
        raise ValueError("contexts must be a list of context ids or a count")
    if isinstance(contexts, int):
        if contexts < 1:
            raise ValueError(f"contexts must be at least 1 when given as a count; got {contexts}")
        order = order[:contexts]
    elif contexts is not None:
        wanted = {str(c) for c in contexts}
        unknown = sorted(wanted - set(order))
        if unknown:
            raise DataError(
                f"context(s) {unknown[:10]} are not in dataset {dataset.name!r} "
                f"(it has {len(order)} contexts with candidates, e.g. {order[:3]})"
            )
        order = [c for c in order if c in wanted]
    groups = {cid: g for cid, g in cands.groupby("context_id", sort=False)}
    return [(cid, texts.get(cid), groups[cid]) for cid in order]


def _specialise(
    template,
    kind: str,
    attribute: str,
    domain: str | None,
    values: dict | None,
    data_fields: set[str],
) -> tuple[object, dict]:
    """(template with its attribute fields filled, constant data values); checks the fields.

    ``values`` may hold attribute-level overrides (``question``, ``definition``, ...) and
    constant data fields (``reference``); the data supplies ``data_fields``.
    """
    from judge.templates import DATA_FIELDS, check_fields

    if template.kind != kind:
        other = "run_absolute" if template.kind == "absolute" else "run_pairwise"
        raise ValueError(
            f"template {template.id!r} is {template.kind}, not {kind}; use {other} or a "
            f"{kind} template"
        )
    values = dict(values or {})
    constant = {k: v for k, v in values.items() if k in DATA_FIELDS}
    overrides = {k: v for k, v in values.items() if k not in DATA_FIELDS}
    specialised = template.for_attribute(attribute, domain or "summary", **overrides)
    check_fields(specialised, data_fields | set(constant))
    return specialised, constant


def _missing_context_text(dataset: Dataset, runs) -> None:
    missing = [cid for cid, text, _ in runs if text is None]
    if missing:
        raise DataError(
            f"dataset {dataset.name!r}: context(s) {missing[:10]} have candidates but no row in "
            "the contexts table, and the template needs {context}; add the context texts"
        )


def _check_mode(mode: str, modes: tuple[str, ...], n_samples: int) -> None:
    if mode not in modes:
        raise ValueError(f"mode must be one of {modes}; got {mode!r}")
    if mode == "samples" and int(n_samples) < 1:
        raise ValueError(f"n_samples must be at least 1; got {n_samples}")


def _plan_key_base(desc, ident, labels: tuple[str, ...] | None, decoding: Decoding) -> str:
    """Key base for label requests (``labels`` given) or for sampled answers."""
    if labels is not None:
        return key_base(backend=desc, template=ident, kind="label", labels=labels)
    return key_base(
        backend=desc, template=ident, kind="generate", decoding=dataclasses.asdict(decoding)
    )


def _label_request(base: str, template, prefix: str, rest: str, labels) -> tuple[str, LabelRequest]:
    """(cache key, request) for the label probabilities after ``prefix + rest``."""
    req = LabelRequest(
        prompt=rest,
        labels=labels,
        prefix=prefix,
        decoder_prefix=template.decoder_prefix or "",
        system=template.system,
        answer_prefix=template.answer_prefix or None,
    )
    key = key_from_base(base, prompt_hash(rest, prefix=prefix, decoder_prefix=req.decoder_prefix))
    return key, req


def _generate_requests(base: str, prompt: str, decoding: Decoding, system, n_samples: int):
    """(sample index, cache key, request) for each of the ``n_samples`` answers to ``prompt``."""
    sha = prompt_hash(prompt, system=system)
    for k in range(int(n_samples)):
        req = GenerateRequest(prompt=prompt, decoding=decoding, sample=k, system=system)
        yield k, key_from_base(base, sha, k), req


# ---------------------------------------------------------------------------------------
# planning
# ---------------------------------------------------------------------------------------
def plan_pairwise(
    dataset: Dataset,
    *,
    attribute: str,
    template,
    backend,
    selection: str = "all",
    budget: int | None = None,
    random_state=0,
    mode: str = "probs",
    n_samples: int = 5,
    decoding: Decoding | None = None,
    contexts=None,
    domain: str | None = None,
    values: dict | None = None,
) -> Plan:
    """The model calls of a pairwise run (see :func:`run_pairwise`); no model is called.

    ``backend`` may be a backend object or its ``describe()`` dict (for estimates).
    """
    from ranking.selection import select_comparisons

    _check_mode(mode, PAIRWISE_MODES, n_samples)
    decoding = decoding or Decoding()
    desc, model_id = backend_identity(backend)
    spec, fixed = _specialise(
        template, "comparative", attribute, domain, values, {"context", "a", "b"}
    )
    runs = _contexts_to_run(dataset, contexts)
    if "context" in spec.fields:
        _missing_context_text(dataset, runs)
    labels = tuple(template.labels)
    tie = template.tie_label
    label_set = labels + ((tie,) if tie else ())
    ident = _template_ident(template)
    system = template.system
    base = _plan_key_base(desc, ident, label_set if mode == "probs" else None, decoding)
    items: list[RunItem] = []
    requests: dict[str, object] = {}
    notes: list[str] = []
    for cid, text, group in runs:
        ids = group["candidate_id"].tolist()
        cand_text = group["text"].tolist()
        if len(ids) < 2:
            notes.append(f"context {cid!r} has {len(ids)} candidate(s); skipped")
            continue
        try:
            pairs = select_comparisons(
                selection, len(ids), budget, random_state=_seed_for(random_state, cid)
            )
        except ValueError as exc:
            raise ValueError(f"context {cid!r} ({len(ids)} candidates): {exc}") from None
        for i, j in pairs.tolist():
            vals = dict(
                fixed, context=text if text is not None else "", a=cand_text[i], b=cand_text[j]
            )
            if mode == "probs":
                # context and first candidate as the shared prefix: the pairs of a context
                # come grouped by first candidate, so a causal backend reuses its KV cache
                prefix, rest = spec.split(share_first=True, **vals)
                key, req = _label_request(base, template, prefix, rest, label_set)
                items.append(RunItem(key, cid, 0, ids[i], ids[j], request=req))
                requests.setdefault(key, req)
            else:
                prompt = spec.render(**vals)
                for k, key, req in _generate_requests(base, prompt, decoding, system, n_samples):
                    items.append(RunItem(key, cid, k, ids[i], ids[j], request=req))
                    requests.setdefault(key, req)
    judge = judge_name(model_id, template.id, mode, decoding)
    settings = {
        "kind": "pairwise",
        "mode": mode,
        "judge": judge,
        "attribute": attribute,
        "template": ident,
        "labels": list(labels),
        "tie_labels": [tie] if tie else [],
        "aliases": dict(spec.parsing.get("aliases") or {}) or None,
        "backend": desc,
        "selection": selection,
        "budget": budget,
        "random_state": random_state,
        "n_samples": int(n_samples) if mode == "samples" else 1,
        "decoding": dataclasses.asdict(decoding) if mode == "samples" else None,
        "dataset": dataset.name,
        "domain": domain,
    }
    run_id = _run_id({**settings, "contexts": [c for c, _, _ in runs], "values": values})
    return Plan(
        "pairwise",
        mode,
        "label" if mode == "probs" else "generate",
        items,
        requests,
        settings,
        run_id,
        notes,
    )


def plan_absolute(
    dataset: Dataset,
    *,
    attribute: str,
    template,
    backend,
    mode: str = "samples",
    n_samples: int = 3,
    decoding: Decoding | None = None,
    parse_rule: str | None = None,
    drop: Sequence[str] | None = None,
    contexts=None,
    domain: str | None = None,
    values: dict | None = None,
) -> Plan:
    """The model calls of an absolute run (see :func:`run_absolute`); no model is called."""
    _check_mode(mode, ABSOLUTE_MODES, n_samples)
    decoding = decoding or Decoding()
    desc, model_id = backend_identity(backend)
    spec, fixed = _specialise(
        template, "absolute", attribute, domain, values, {"context", "candidate"}
    )
    lo, hi = template.scale
    score_labels: tuple[str, ...] = ()
    if mode == "expected":
        score_labels = tuple(template.score_labels)
        if not score_labels:
            raise ValueError(
                f"expected scores need an integer scale; {template.id!r} has {template.scale}"
            )
    runs = _contexts_to_run(dataset, contexts)
    if "context" in spec.fields:
        _missing_context_text(dataset, runs)
    ident = _template_ident(template)
    system = template.system
    parse_rule = parse_rule or spec.parsing.get("rule") or "strict"
    drop = tuple(spec.parsing.get("drop") or ()) if drop is None else tuple(drop)
    base = _plan_key_base(desc, ident, score_labels if mode == "expected" else None, decoding)
    items: list[RunItem] = []
    requests: dict[str, object] = {}
    for cid, text, group in runs:
        for cand_id, cand_text in zip(group["candidate_id"], group["text"], strict=True):
            vals = dict(fixed, context=text if text is not None else "", candidate=cand_text)
            if mode == "expected":
                prefix, rest = spec.split(**vals)
                key, req = _label_request(base, template, prefix, rest, score_labels)
                items.append(RunItem(key, cid, 0, candidate_id=str(cand_id), request=req))
                requests.setdefault(key, req)
                continue
            prompt = spec.render(**vals)
            for k, key, req in _generate_requests(base, prompt, decoding, system, n_samples):
                items.append(RunItem(key, cid, k, candidate_id=str(cand_id), request=req))
                requests.setdefault(key, req)
    judge = judge_name(model_id, None, mode, decoding)
    settings = {
        "kind": "absolute",
        "mode": mode,
        "judge": judge,
        "attribute": attribute,
        "prompt_id": template.id,
        "template": ident,
        "scale": [lo, hi],
        "parse_rule": parse_rule,
        "drop": list(drop),
        "backend": desc,
        "n_samples": int(n_samples) if mode == "samples" else 1,
        "decoding": dataclasses.asdict(decoding) if mode == "samples" else None,
        "dataset": dataset.name,
        "domain": domain,
    }
    run_id = _run_id({**settings, "contexts": [c for c, _, _ in runs], "values": values})
    return Plan(
        "absolute",
        mode,
        "label" if mode == "expected" else "generate",
        items,
        requests,
        settings,
        run_id,
    )


# ---------------------------------------------------------------------------------------
# execution
# ---------------------------------------------------------------------------------------
def _open_store(store) -> tuple[RunStore, bool]:
    if isinstance(store, RunStore):
        return store, False
    if store is False:
        return RunStore(":memory:"), True
    return RunStore(store), True  # None -> default path, or a path


def _needs_check(plan: Plan, store: RunStore) -> bool:
    keys = list(plan.requests)
    return len(store.get_many(keys)) < len(keys)


def _check_backend(backend) -> None:
    check = getattr(backend, "check", None)
    if callable(check):
        check()


def _run_plan(
    plan: Plan,
    backend,
    store: RunStore,
    to_table: Callable,
    *,
    progress: RunProgress | None,
    cancel: threading.Event | None,
    chunk_size: int,
) -> pd.DataFrame:
    """Execute ``plan`` against ``store`` and build its table with ``to_table``."""
    store.start_run(plan.run_id, plan.settings, plan.items)
    stats = execute(
        plan,
        backend,
        store,
        model_id=backend_identity(backend)[1],
        progress=progress,
        cancel=cancel,
        chunk_size=chunk_size,
    )
    rows = store.get_many([it.key for it in plan.items], include_failed=True)
    df = to_table(plan.items, rows, plan.settings)
    return _finish(df, plan, stats, store, failure_counts(plan.requests, rows))


def _finish(df: pd.DataFrame, plan: Plan, stats: dict, store: RunStore, failures) -> pd.DataFrame:
    df.attrs.update(
        {
            "run_id": plan.run_id,
            "store": store.path,
            "mode": plan.mode,
            "judge": plan.settings["judge"],
            "n_calls": stats["n_calls"],
            "n_cached": stats["n_cached"],
            "n_called": stats["n_called"],
            "n_by_others": stats["n_by_others"],
            "n_in_progress": stats["n_in_progress"],
            "n_failed": sum(failures.values()),
            "failures": dict(failures.most_common()),
            "cancelled": stats["cancelled"],
            "n_missing": len(plan.items) - len(df),
            "notes": list(plan.warnings),
        }
    )
    return df


def run_pairwise(
    dataset: Dataset,
    *,
    attribute: str,
    template,
    backend,
    selection: str = "all",
    budget: int | None = None,
    random_state=0,
    mode: str = "probs",
    n_samples: int = 5,
    decoding: Decoding | None = None,
    store: RunStore | str | None | bool = None,
    progress: RunProgress | None = None,
    cancel: threading.Event | None = None,
    contexts=None,
    domain: str | None = None,
    values: dict | None = None,
    chunk_size: int = 256,
) -> pd.DataFrame:
    """Judge ordered pairs of candidates; the canonical comparisons table.

    Parameters
    ----------
    dataset : Dataset
        Needs ``candidates`` (and ``contexts`` when the template uses ``{context}``).
    attribute : str
        The attribute judged (fills ``{attribute}``, ``{adjective}``, ... through
        ``judge.templates.attribute_values``).
    template : judge.templates.Template
        A comparative template (fields ``{a}`` and ``{b}``).
    backend : Backend
        ``judge.backends.openai_compat.OpenAIBackend``, ``judge.backends.hf.HFBackend``, ...
    selection : {"all", "random", "no-repeat", "symmetric"}
        Which ordered pairs per context (``ranking.selection.select_comparisons``).
    budget : int, optional
        Comparisons per context (required except for "all").
    random_state : int
        Seeds the selection; each context gets its own seed derived from it and its id.
    mode : {"probs", "samples"}
        Label-word probabilities, or K sampled answers parsed to verdicts. When the backend
        offers no probabilities (``supports_logprobs`` is False after ``check()``), probs
        falls back to samples with a warning.
    n_samples : int
        K answers per ordered pair in samples mode.
    decoding : Decoding, optional
        Sampling settings for samples mode (part of the cache key and the judge name).
    store : RunStore, path, None or False
        Where answers are kept: None = the default store (``JUDGESCOPE_CACHE``), False = in
        memory only (no resume).
    progress : callable(n_done, n_total), optional
        Called as answers arrive (cached ones count as done from the start).
    cancel : threading.Event, optional
        When set, no new requests are sent; answers in flight are still stored, and the
        table holds what is done (``df.attrs["cancelled"]``).
    contexts : list of context ids or int, optional
        Run only these contexts (an int: the first N).
    domain : str, optional
        Passed to ``attribute_values`` ("summary", "dialogue", "data-to-text", "story").
    values : dict, optional
        Extra constant template field values.
    chunk_size : int
        Requests per call for backends that do not stream results.

    Returns
    -------
    pandas.DataFrame
        Columns context_id, attribute, judge, first_id, second_id, p_first, verdict, sample,
        raw; one row per ordered pair (probs) or per pair and sample (samples). ``attrs``
        holds run_id, n_calls, n_cached (answered before), n_called (asked now), n_by_others
        (answered meanwhile by another run on the store), n_failed and failures (failed calls
        by error code; their rows have NaN and ``[error] ...`` in raw, and the next run asks
        them again), n_in_progress (calls another run was still making when a cancel ended
        the wait), cancelled, n_missing.
    """
    store_obj, owned = _open_store(store)
    try:
        kw = dict(
            attribute=attribute,
            template=template,
            backend=backend,
            selection=selection,
            budget=budget,
            random_state=random_state,
            n_samples=n_samples,
            decoding=decoding,
            contexts=contexts,
            domain=domain,
            values=values,
        )
        plan = plan_pairwise(dataset, mode=mode, **kw)
        if _needs_check(plan, store_obj):
            _check_backend(backend)
            if plan.mode == "probs" and getattr(backend, "supports_logprobs", True) is False:
                warnings.warn(
                    f"{backend_identity(backend)[1]} offers no token probabilities; sampling "
                    f"{n_samples} answers per pair instead (mode='samples')",
                    stacklevel=2,
                )
                plan = plan_pairwise(dataset, mode="samples", **kw)
        return _run_plan(
            plan,
            backend,
            store_obj,
            comparisons_from_rows,
            progress=progress,
            cancel=cancel,
            chunk_size=chunk_size,
        )
    finally:
        if owned:
            store_obj.close()


def run_absolute(
    dataset: Dataset,
    *,
    attribute: str,
    template,
    backend,
    n_samples: int = 3,
    decoding: Decoding | None = None,
    parse_rule: str | None = None,
    drop: Sequence[str] | None = None,
    mode: str = "samples",
    store: RunStore | str | None | bool = None,
    progress: RunProgress | None = None,
    cancel: threading.Event | None = None,
    contexts=None,
    domain: str | None = None,
    values: dict | None = None,
    chunk_size: int = 256,
) -> pd.DataFrame:
    """Score every candidate on its own; the canonical ratings table.

    Parameters
    ----------
    template : judge.templates.Template
        An absolute template with a ``scale`` (fields ``{candidate}``, ``{context}``, ...).
    n_samples : int
        K answers per candidate (samples mode).
    decoding : Decoding, optional
        Sampling settings (Chiang & Lee: top_p 0.9; HANNA: (1, 0.95) or (0.7, 1)).
    parse_rule : str, optional
        ``data.parsing.parse_likert`` rule ("chiang_lee", "strict", "keyed", ...); default
        the template's own (``template.parsing["rule"]``, else "strict"). Raw answers are
        stored, so ``RunStore.export_ratings(run_id, parse_rule=...)`` re-reads them with
        another rule without calling the model.
    drop : sequence of str, optional
        Extra strings deleted before reading numbers (default the template's
        ``parsing["drop"]``, e.g. ``("title 1", "title 2")``).
    mode : {"samples", "expected"}
        "expected": G-Eval expected score from the probabilities of the score tokens (needs
        a backend with probabilities; a clear BackendError otherwise, before any call).

    Other parameters are as in :func:`run_pairwise`.

    Returns
    -------
    pandas.DataFrame
        Columns context_id, candidate_id, attribute, judge, prompt_id, sample, score (NaN
        when unparsed), raw.
    """
    store_obj, owned = _open_store(store)
    try:
        plan = plan_absolute(
            dataset,
            attribute=attribute,
            template=template,
            backend=backend,
            mode=mode,
            n_samples=n_samples,
            decoding=decoding,
            parse_rule=parse_rule,
            drop=drop,
            contexts=contexts,
            domain=domain,
            values=values,
        )
        if _needs_check(plan, store_obj):
            _check_backend(backend)
            if plan.mode == "expected" and getattr(backend, "supports_logprobs", True) is False:
                raise BackendError(
                    f"{backend_identity(backend)[1]} offers no token probabilities, so the "
                    "expected score cannot be computed; use mode='samples'"
                )
        return _run_plan(
            plan,
            backend,
            store_obj,
            ratings_from_rows,
            progress=progress,
            cancel=cancel,
            chunk_size=chunk_size,
        )
    finally:
        if owned:
            store_obj.close()


__all__ = [
    "Plan",
    "plan_absolute",
    "plan_pairwise",
    "run_absolute",
    "run_pairwise",
]
