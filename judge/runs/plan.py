"""Planning a judge run: every model call it will make, before any is made.

:func:`plan_pairwise` and :func:`plan_absolute` turn a dataset, a template and a backend's
identity into a :class:`Plan`: the run store keys and requests of every call, the items they
judge (context, candidates, sample) and the run's settings. :mod:`judge.runs.runners`
carries a plan out (through :mod:`judge.runs.execute`); :mod:`judge.runs.estimate` counts its
calls, tokens and price. A backend object or its ``describe()`` dict will do, since planning calls no model.

Pairwise plans ask for one call per ordered pair (both presentation orders, never merged):
the label-word probabilities after the prompt (``mode="probs"``; the context and first
candidate are the shared prefix, so a causal backend reuses its KV cache), or K sampled
answers (``mode="samples"``). Absolute plans ask for K sampled answers per candidate, or the
probabilities of the score tokens (``mode="expected"``, G-Eval).

Bad input is caught here, before any model call: a template field the data cannot fill, a
template of the wrong kind, an unknown context, a budget the selection cannot meet.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from data.schema import DataError, Dataset
from judge.backends.base import Decoding, GenerateRequest, LabelRequest
from judge.names import judge_name
from judge.store import RunItem, key_base, key_from_base, prompt_hash

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
    #: what the plan left out and why ("context 'x' has 1 candidate(s); skipped")
    notes: list[str] = field(default_factory=list)

    @property
    def n_calls(self) -> int:
        return len(self.requests)

    def add(self, item: RunItem) -> None:
        """Plan ``item``; its request is asked once however many items share its key."""
        self.items.append(item)
        self.requests.setdefault(item.key, item.request)


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


@dataclass
class _Setup:
    """What both kinds of plan start from, checked."""

    spec: object  # the template with its attribute fields filled
    fixed: dict  # constant data values
    desc: dict
    model_id: str
    decoding: Decoding
    ident: dict


def _setup(
    kind: str,
    template,
    backend,
    attribute: str,
    domain: str | None,
    values: dict | None,
    mode: str,
    n_samples: int,
    decoding: Decoding | None,
) -> _Setup:
    """Check the mode and the template, and fill the template's attribute fields."""
    if kind == "pairwise":
        modes, template_kind, data_fields = PAIRWISE_MODES, "comparative", {"context", "a", "b"}
    else:
        modes, template_kind, data_fields = ABSOLUTE_MODES, "absolute", {"context", "candidate"}
    _check_mode(mode, modes, n_samples)
    desc, model_id = backend_identity(backend)
    spec, fixed = _specialise(template, template_kind, attribute, domain, values, data_fields)
    return _Setup(spec, fixed, desc, model_id, decoding or Decoding(), _template_ident(template))


def _new_plan(
    kind: str,
    mode: str,
    request_kind: str,
    setup: _Setup,
    dataset: Dataset,
    runs,
    values: dict | None,
    *,
    judge: str,
    attribute: str,
    domain: str | None,
    n_samples: int,
    specific: dict,
    notes: list[str] | None = None,
) -> Plan:
    """An empty plan with its settings (``specific``: those of this kind) and run id."""
    sampled = mode == "samples"
    settings = {
        "kind": kind,
        "mode": mode,
        "judge": judge,
        "attribute": attribute,
        **specific,
        "backend": setup.desc,
        "n_samples": int(n_samples) if sampled else 1,
        "decoding": dataclasses.asdict(setup.decoding) if sampled else None,
        "dataset": dataset.name,
        "domain": domain,
    }
    run_id = _run_id({**settings, "contexts": [c for c, _, _ in runs], "values": values})
    return Plan(kind, mode, request_kind, [], {}, settings, run_id, list(notes or []))


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


def _runs(dataset: Dataset, spec, contexts) -> list[tuple[str, str | None, pd.DataFrame]]:
    """The contexts to run; every one has its text when the template shows ``{context}``."""
    runs = _contexts_to_run(dataset, contexts)
    missing = [cid for cid, text, _ in runs if text is None]
    if missing and "context" in spec.fields:
        raise DataError(
            f"dataset {dataset.name!r}: context(s) {missing[:10]} have candidates but no row in "
            "the contexts table, and the template needs {context}; add the context texts"
        )
    return runs


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


def _check_mode(mode: str, modes: tuple[str, ...], n_samples: int) -> None:
    if mode not in modes:
        raise ValueError(f"mode must be one of {modes}; got {mode!r}")
    if mode == "samples" and int(n_samples) < 1:
        raise ValueError(f"n_samples must be at least 1; got {n_samples}")


# ---------------------------------------------------------------------------------------
# requests and their keys
# ---------------------------------------------------------------------------------------
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
    """The model calls of a pairwise run (see :func:`judge.runs.runners.run_pairwise`).

    ``backend`` may be a backend object or its ``describe()`` dict (for estimates).
    """
    from ranking import select_comparisons

    setup = _setup(
        "pairwise", template, backend, attribute, domain, values, mode, n_samples, decoding
    )
    spec, decoding = setup.spec, setup.decoding
    runs = _runs(dataset, spec, contexts)
    labels = tuple(template.labels)
    tie = template.tie_label
    label_set = labels + ((tie,) if tie else ())
    notes = [
        f"context {cid!r} has {len(g)} candidate(s); skipped" for cid, _, g in runs if len(g) < 2
    ]
    plan = _new_plan(
        "pairwise",
        mode,
        "label" if mode == "probs" else "generate",
        setup,
        dataset,
        runs,
        values,
        judge=judge_name(setup.model_id, template.id, mode, decoding),
        attribute=attribute,
        domain=domain,
        n_samples=n_samples,
        specific={
            "template": setup.ident,
            "labels": list(labels),
            "tie_labels": [tie] if tie else [],
            "aliases": dict(spec.parsing.get("aliases") or {}) or None,
            "selection": selection,
            "budget": budget,
            "random_state": random_state,
        },
        notes=notes,
    )
    base = _plan_key_base(setup.desc, setup.ident, label_set if mode == "probs" else None, decoding)
    for cid, text, group in runs:
        ids = group["candidate_id"].tolist()
        cand_text = group["text"].tolist()
        if len(ids) < 2:
            continue
        try:
            pairs = select_comparisons(
                selection, len(ids), budget, random_state=_seed_for(random_state, cid)
            )
        except ValueError as exc:
            raise ValueError(f"context {cid!r} ({len(ids)} candidates): {exc}") from None
        for i, j in pairs.tolist():
            vals = dict(
                setup.fixed,
                context=text if text is not None else "",
                a=cand_text[i],
                b=cand_text[j],
            )
            if mode == "probs":
                # context and first candidate as the shared prefix: the pairs of a context
                # come grouped by first candidate, so a causal backend reuses its KV cache
                prefix, rest = spec.split(share_first=True, **vals)
                key, req = _label_request(base, template, prefix, rest, label_set)
                plan.add(RunItem(key, cid, 0, ids[i], ids[j], request=req))
                continue
            prompt = spec.render(**vals)
            for k, key, req in _generate_requests(
                base, prompt, decoding, template.system, n_samples
            ):
                plan.add(RunItem(key, cid, k, ids[i], ids[j], request=req))
    return plan


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
    """The model calls of an absolute run (see :func:`judge.runs.runners.run_absolute`)."""
    setup = _setup(
        "absolute", template, backend, attribute, domain, values, mode, n_samples, decoding
    )
    spec, decoding = setup.spec, setup.decoding
    score_labels: tuple[str, ...] = ()
    if mode == "expected":
        score_labels = tuple(template.score_labels)
        if not score_labels:
            raise ValueError(
                f"expected scores need an integer scale; {template.id!r} has {template.scale}"
            )
    runs = _runs(dataset, spec, contexts)
    lo, hi = template.scale
    drop = tuple(spec.parsing.get("drop") or ()) if drop is None else tuple(drop)
    plan = _new_plan(
        "absolute",
        mode,
        "label" if mode == "expected" else "generate",
        setup,
        dataset,
        runs,
        values,
        judge=judge_name(setup.model_id, None, mode, decoding),
        attribute=attribute,
        domain=domain,
        n_samples=n_samples,
        specific={
            "prompt_id": template.id,
            "template": setup.ident,
            "scale": [lo, hi],
            "parse_rule": parse_rule or spec.parsing.get("rule") or "strict",
            "drop": list(drop),
        },
    )
    labels = score_labels if mode == "expected" else None
    base = _plan_key_base(setup.desc, setup.ident, labels, decoding)
    for cid, text, group in runs:
        for cand_id, cand_text in zip(group["candidate_id"], group["text"], strict=True):
            vals = dict(setup.fixed, context=text if text is not None else "", candidate=cand_text)
            if mode == "expected":
                prefix, rest = spec.split(**vals)
                key, req = _label_request(base, template, prefix, rest, score_labels)
                plan.add(RunItem(key, cid, 0, candidate_id=str(cand_id), request=req))
                continue
            prompt = spec.render(**vals)
            for k, key, req in _generate_requests(
                base, prompt, decoding, template.system, n_samples
            ):
                plan.add(RunItem(key, cid, k, candidate_id=str(cand_id), request=req))
    return plan


#: arguments of one kind of plan that :func:`plan_for` drops for the other kind
_ONLY = {"pairwise": ("selection", "budget", "random_state"), "absolute": ("parse_rule", "drop")}


def plan_for(
    dataset: Dataset,
    *,
    template,
    mode: str | None = None,
    n_samples: int | None = None,
    **kw,
) -> Plan:
    """:func:`plan_pairwise` or :func:`plan_absolute`, as the template's kind says.

    ``mode`` defaults to "probs" (pairwise) or "samples" (absolute), ``n_samples`` to 5
    (pairwise) or 3 (absolute). ``kw``: the other arguments of either function; the
    selection arguments (``selection``, ``budget``, ``random_state``) are used for
    comparative templates only and ``parse_rule`` / ``drop`` for absolute ones.
    """
    kind = "pairwise" if template.kind == "comparative" else "absolute"
    plan, default_mode, default_n = {
        "pairwise": (plan_pairwise, "probs", 5),
        "absolute": (plan_absolute, "samples", 3),
    }[kind]
    other = _ONLY["absolute" if kind == "pairwise" else "pairwise"]
    kw = {k: v for k, v in kw.items() if k not in other}
    return plan(
        dataset,
        template=template,
        mode=mode or default_mode,
        n_samples=n_samples or default_n,
        **kw,
    )


__all__ = [
    "ABSOLUTE_MODES",
    "PAIRWISE_MODES",
    "Plan",
    "backend_identity",
    "plan_absolute",
    "plan_for",
    "plan_pairwise",
]
