"""Run a judge over a dataset: pairwise comparisons and absolute ratings, resumable.

A run is planned first (:mod:`judge.runs.plan`: every call, before any is made), then carried
out against the run store (:mod:`judge.runs.execute`): only calls the store has no answer for go to
the backend, and each answer is stored as soon as it arrives (backends with
``iter_label_probs`` / ``iter_generate`` stream them; others are called in chunks of
``chunk_size`` requests). A run that is killed or cancelled picks up where it stopped. A
request that fails is stored as a failure with its reason and asked again on the next run; a
run sharing its store with another one waits for the calls the other is making instead of
paying for them twice (:mod:`judge.runs.execute` says exactly what is guaranteed).

Both runners return a :class:`RunResult`: the table, the call counts (cached, new, failed by
reason, answered by another run, still in progress), the plan's notes and the run's
warnings — collected on the result, never through the process-wide ``warnings`` module, so
one session's run cannot hide or take over another's.

Pairwise (:func:`run_pairwise`): the canonical comparisons table with one row per
presentation order (both orders are separate rows, never averaged, so position bias stays
visible):

- ``mode="probs"``: p_first = P(A) / (P(A) + P(B)) from the label-word probabilities after
  the prompt (a tie label counts half); one row per ordered pair, ``sample`` 0, no verdict.
- ``mode="samples"``: K answers per ordered pair, parsed to A / B / tie; **one row per
  sample** with p_first 1 (A), 0 (B), 0.5 (tie) or NaN (unparsed, raw text kept) and the
  verdict. The mean over a pair's samples — what ``data.arrays.comparisons_to_P`` takes —
  is the share of A with ties counting half (``data.parsing.sample_verdicts_to_p``).

Absolute (:func:`run_absolute`): the canonical ratings table: ``mode="samples"`` K answers
per candidate parsed to Likert scores; ``mode="expected"`` the G-Eval expected score
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

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from data.schema import Dataset
from judge.backends.base import BackendError, Decoding
from judge.runs.execute import execute, failure_counts
from judge.runs.plan import Plan, backend_identity, plan_absolute, plan_pairwise
from judge.store import RunStore, comparisons_from_rows, open_store, ratings_from_rows

RunProgress = Callable[[int, int], None]  # (n_done, n_total), cached answers included


@dataclass(eq=False)
class RunResult:
    """What :func:`run_pairwise` / :func:`run_absolute` give back: the table and what
    happened to each call.

    Attributes
    ----------
    table : pandas.DataFrame
        The canonical comparisons or ratings table (one row per item that has a result).
    run_id, judge, kind, mode : str
        The run's id in the store, its ``judge`` name, "pairwise" / "absolute" and the mode
        it ran in (samples when probabilities were not offered).
    store : str
        Path of the run store.
    n_calls : int
        Distinct model calls the run needs.
    n_cached : int
        Answered before the run started (reused, not sent again).
    n_called : int
        Asked by this run (failed calls included).
    n_by_others : int
        Answered meanwhile by another run on the same store (waited for, not paid twice).
    n_in_progress : int
        Still being made by another run when a cancel ended the wait.
    failures : dict
        Failed calls by reason (``{"http-503": 2, "timeout": 1}``, most common first); their
        rows have NaN and ``[error] ...`` in raw, and the next run asks them again.
    cancelled : bool
        The run was cancelled before every call had a result.
    n_missing : int
        Planned items without a result (a cancelled run).
    notes : list of str
        What the plan left out ("context 'x' has 1 candidate(s); skipped").
    warnings : list of str
        What the run has to tell the user (a fallback from probabilities to samples).
    """

    table: pd.DataFrame = field(repr=False)
    run_id: str
    judge: str
    kind: str
    mode: str
    store: str
    n_calls: int = 0
    n_cached: int = 0
    n_called: int = 0
    n_by_others: int = 0
    n_in_progress: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    cancelled: bool = False
    n_missing: int = 0
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def n_failed(self) -> int:
        """Calls that failed (after the backend's retries), all reasons together."""
        return sum(self.failures.values())

    @property
    def n_rows(self) -> int:
        return len(self.table)

    def summary(self) -> dict:
        """Everything but the table, as plain values (for the command line, the page)."""
        return {
            "run_id": self.run_id,
            "judge": self.judge,
            "kind": self.kind,
            "mode": self.mode,
            "store": self.store,
            "n_rows": self.n_rows,
            "n_calls": self.n_calls,
            "n_cached": self.n_cached,
            "n_called": self.n_called,
            "n_by_others": self.n_by_others,
            "n_in_progress": self.n_in_progress,
            "n_failed": self.n_failed,
            "failures": dict(self.failures),
            "cancelled": self.cancelled,
            "n_missing": self.n_missing,
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }


# ---------------------------------------------------------------------------------------
# execution
# ---------------------------------------------------------------------------------------
def _needs_check(plan: Plan, store: RunStore) -> bool:
    keys = list(plan.requests)
    return len(store.get_many(keys)) < len(keys)


def _check_backend(backend) -> None:
    check = getattr(backend, "check", None)
    if callable(check):
        check()


def _run(
    plan_run: Callable[..., Plan],
    dataset: Dataset,
    *,
    mode: str,
    backend,
    store,
    progress: RunProgress | None,
    cancel: threading.Event | None,
    chunk_size: int,
    **plan_args,
) -> RunResult:
    """Plan with ``plan_run`` (``plan_pairwise`` / ``plan_absolute``), check the backend when
    the store lacks an answer, execute; ``plan_args`` are the planning arguments.

    A backend found to offer no token probabilities turns a pairwise probs run into a
    samples run (with a warning on the result) and stops an expected-score run.
    """

    def make_plan(mode: str) -> Plan:
        return plan_run(dataset, mode=mode, backend=backend, **plan_args)

    with open_store(store) as store_obj:
        plan = make_plan(mode)
        warnings: list[str] = []
        if _needs_check(plan, store_obj):
            _check_backend(backend)
            no_probs = getattr(backend, "supports_logprobs", True) is False
            if plan.request_kind == "label" and no_probs:
                who = backend_identity(backend)[1]
                if plan.kind == "absolute":
                    raise BackendError(
                        f"{who} offers no token probabilities, so the expected score cannot "
                        "be computed; use mode='samples'"
                    )
                plan = make_plan("samples")
                warnings.append(
                    f"{who} offers no token probabilities; sampling "
                    f"{plan.settings['n_samples']} answers per pair instead (mode='samples')"
                )
        return _execute(
            plan,
            backend,
            store_obj,
            progress=progress,
            cancel=cancel,
            chunk_size=chunk_size,
            warnings=warnings,
        )


def _execute(
    plan: Plan,
    backend,
    store: RunStore,
    *,
    progress: RunProgress | None,
    cancel: threading.Event | None,
    chunk_size: int,
    warnings: list[str],
) -> RunResult:
    """Execute ``plan`` against ``store``; its table and counts."""
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
    to_table = comparisons_from_rows if plan.kind == "pairwise" else ratings_from_rows
    table = to_table(plan.items, rows, plan.settings)
    return RunResult(
        table,
        run_id=plan.run_id,
        judge=plan.settings["judge"],
        kind=plan.kind,
        mode=plan.mode,
        store=store.path,
        n_calls=stats["n_calls"],
        n_cached=stats["n_cached"],
        n_called=stats["n_called"],
        n_by_others=stats["n_by_others"],
        n_in_progress=stats["n_in_progress"],
        failures=dict(failure_counts(plan.requests, rows).most_common()),
        cancelled=stats["cancelled"],
        n_missing=len(plan.items) - len(table),
        notes=list(plan.notes),
        warnings=list(warnings),
    )


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
) -> RunResult:
    """Judge ordered pairs of candidates; the canonical comparisons table and the counts.

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
        Which ordered pairs per context (``ranking.budget.select_comparisons``).
    budget : int, optional
        Comparisons per context (required except for "all").
    random_state : int
        Seeds the selection; each context gets its own seed derived from it and its id.
    mode : {"probs", "samples"}
        Label-word probabilities, or K sampled answers parsed to verdicts. When the backend
        offers no probabilities (``supports_logprobs`` is False after ``check()``), probs
        falls back to samples and says so in the result's ``warnings``.
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
        table holds what is done (``result.cancelled``).
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
    RunResult
        ``table``: columns context_id, attribute, judge, first_id, second_id, p_first,
        verdict, sample, raw; one row per ordered pair (probs) or per pair and sample
        (samples). With the counts (n_calls, n_cached, n_called, n_by_others, failures,
        n_in_progress, cancelled, n_missing), notes and warnings.
    """
    return _run(plan_pairwise, **locals())  # every argument, planning and execution


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
) -> RunResult:
    """Score every candidate on its own; the canonical ratings table and the counts.

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
    RunResult
        ``table``: columns context_id, candidate_id, attribute, judge, prompt_id, sample,
        score (NaN when unparsed), raw; the counts as for :func:`run_pairwise`.
    """
    return _run(plan_absolute, **locals())  # every argument, planning and execution


__all__ = ["RunProgress", "RunResult", "run_absolute", "run_pairwise"]
