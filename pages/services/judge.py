"""Services of the Judge page: templates, prompt preview, backends and runs.

A run goes to a background thread (:class:`JudgeJob`) with progress and cancel; its outputs
are merged into a copy of the judged dataset (``judge_outputs.merge_outputs``). The heavy
parts of ``judge`` (torch, openai) are imported when a backend is chosen.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from data.schema import DataError, Dataset
from pages.services.judge_outputs import merge_outputs

#: Judge modes: label -> (run kind, runner mode, template kind).
JUDGE_MODES = {
    "pairwise: label probabilities": ("pairwise", "probs", "comparative"),
    "pairwise: sampled verdicts": ("pairwise", "samples", "comparative"),
    "absolute: Likert score (samples)": ("absolute", "samples", "absolute"),
    "absolute: expected score (G-Eval)": ("absolute", "expected", "absolute"),
}
#: Backends offered on the Judge page.
BACKENDS = {
    "openai": "OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, TGI, llama.cpp)",
    "hf": "transformers model (Hub id or local folder)",
}


#: What the custom-template box starts with: a small valid comparative template.
CUSTOM_TEMPLATE_EXAMPLE = """\
id: my-pairwise
version: "1"
kind: comparative
text: |
  {context}

  Response A: {a}

  Response B: {b}

  Which response is better in {attribute}? Answer A or B.
labels: [A, B]
"""


# ---------------------------------------------------------------------------------------
# Templates and the prompt preview
# ---------------------------------------------------------------------------------------


#: Words in a dataset's description (or name) that say which domain its texts are in.
DOMAIN_WORDS = {
    "story": ("story", "stories", "writingprompts", "narrative"),
    "dialogue": (
        "dialogue",
        "dialog",
        "conversation",
        "chat",
        "response",
        "instruction",
        "answers",
    ),
    "data-to-text": ("rdf", "data-to-text", "triple", "table-to-text", "webnlg"),
    "summary": ("summar", "article", "news"),
}


def default_domain(ds: Dataset, name: str = "") -> str:
    """The template domain that fits ``ds``: the domain word met first in its description,
    source and name (HANNA's "story prompts" -> story); "summary" when none is met."""
    text = " ".join([ds.description, ds.source, ds.name, name]).lower()
    found = {}
    for domain, words in DOMAIN_WORDS.items():
        hits = [text.find(w) for w in words if w in text]
        if hits:
            found[domain] = min(hits)
    return min(found, key=found.get) if found else "summary"


def read_custom_templates(text: str, fmt: str = "yaml") -> dict:
    """Templates from pasted or uploaded YAML / JSON (``judge.templates.load_templates``).

    Raises
    ------
    judge.templates.TemplateError
        With a message naming the template, key or field at fault.
    """
    from judge.templates import TemplateError, load_templates

    text = str(text)
    if not text.strip():
        raise TemplateError("the custom template is empty; paste YAML or JSON, or upload a file")
    # load_templates reads a one-line string naming an existing file as a path; text typed
    # into the page must never open a file on the server, and a newline rules that out.
    return load_templates(text + "\n", fmt=fmt)


def templates_of_kind(kind: str, custom: dict | None = None) -> dict:
    """Built-in templates of ``kind`` ("comparative" / "absolute"), then custom ones."""
    from judge.templates import builtin_templates

    out = {k: t for k, t in builtin_templates().items() if t.kind == kind}
    for k, t in (custom or {}).items():
        if t.kind == kind:
            out[k] = t
    return out


def first_context(
    ds: Dataset, context_id: str | None = None, *, min_candidates: int = 1
) -> tuple[str, str | None, list]:
    """(context id, context text or None, [(candidate id, text), ...]) of the first context
    with at least ``min_candidates`` candidates (or of ``context_id``)."""
    cands = ds.candidates
    if not len(cands):
        raise DataError(f"{ds.name}: no candidates to judge; load a dataset with candidates")
    ids = cands["context_id"].astype(str)
    if context_id is not None:
        cid = str(context_id)
    else:
        cid = next(iter(_contexts_with(ids, min_candidates)), None)
        if cid is None:
            raise DataError(
                f"{ds.name}: no context has {min_candidates} or more candidates; "
                "a comparison needs two candidates of the same context"
            )
    rows = cands[ids == cid]
    if not len(rows):
        raise DataError(f"{ds.name}: context {cid!r} has no candidates")
    text = None
    if len(ds.contexts):
        hit = ds.contexts.loc[ds.contexts["context_id"].astype(str) == cid, "text"]
        text = str(hit.iloc[0]) if len(hit) else None
    pairs = list(zip(rows["candidate_id"].astype(str), rows["text"].astype(str), strict=True))
    return cid, text, pairs


def _contexts_with(ids: pd.Series, min_candidates: int) -> list[str]:
    """Context ids (in dataset order) that have at least ``min_candidates`` candidates."""
    sizes = ids.value_counts()
    return [c for c in ids.drop_duplicates() if sizes[c] >= min_candidates]


def preview_prompt(
    ds: Dataset, template, attribute: str, domain: str = "summary", context_id: str | None = None
) -> tuple[str, str]:
    """The filled prompt the judge would see for the first comparison (or candidate).

    Pairwise templates get the first two candidates of the first context that has two (the
    runner skips contexts with fewer; the line returned names the skipped ones before it) as
    A and B; absolute ones the first candidate of the first context. Returns (prompt, one
    line saying what was filled in).

    Raises
    ------
    judge.templates.TemplateError
        When the template cannot be filled (unknown attribute, a field the data lacks).
    DataError
        When the dataset has no candidates (or no context with two for a pairwise template,
        or ``context_id`` has fewer than two).
    """
    from judge.templates import check_fields

    pairwise = template.kind == "comparative"
    cid, text, cands = first_context(ds, context_id, min_candidates=2 if pairwise else 1)
    spec = template.for_attribute(attribute, domain)
    if text is None and "context" in spec.fields:
        # as the run's plan refuses it (judge.runs.plan): say so here, before an estimate
        raise DataError(
            f"context {cid!r} has candidates but no text in the contexts table, and the "
            "template shows {context}: add the context texts (for Arena-Hard judgments, "
            "upload question.jsonl with them) or choose a template without {context}"
        )
    values = {"context": text if text is not None else ""}
    if pairwise:
        if len(cands) < 2:
            raise DataError(f"context {cid!r} has {len(cands)} candidate; a comparison needs two")
        check_fields(spec, {"context", "a", "b"})
        values.update(a=cands[0][1], b=cands[1][1])
        what = f"context {cid!r}: A = {cands[0][0]!r}, B = {cands[1][0]!r}"
        if context_id is None:
            what += _skipped_before(ds.candidates["context_id"].astype(str), cid)
    else:
        check_fields(spec, {"context", "candidate"})
        values.update(candidate=cands[0][1])
        what = f"context {cid!r}: candidate {cands[0][0]!r}"
    prompt = spec.render(**values)
    if template.system:
        prompt = f"[system] {template.system}\n\n{prompt}"
    if template.answer_prefix:
        prompt = f"{prompt}\n{template.answer_prefix}"
    return prompt, what


def _skipped_before(ids: pd.Series, cid: str, shown: int = 3) -> str:
    """A note naming the contexts before ``cid`` (each has one candidate, so a pairwise run
    skips them); empty when ``cid`` is the dataset's first context."""
    order = ids.drop_duplicates().tolist()
    before = order[: order.index(cid)]
    if not before:
        return ""
    names = ", ".join(repr(c) for c in before[:shown])
    if len(before) > shown:
        names += f" and {len(before) - shown:,} more"
    verb = "has one candidate and is" if len(before) == 1 else "have one candidate each and are"
    return (
        f" — the first context with at least two candidates; {names} before it {verb} "
        "skipped by a pairwise run"
    )


# ---------------------------------------------------------------------------------------
# Settings, backends and runs
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeSettings:
    """Everything a Judge-page run needs except secrets (the API key is never part of it,
    so these settings can be shown, logged and exported)."""

    backend: str  # key of BACKENDS
    model: str
    base_url: str = ""
    mode: str = "pairwise: label probabilities"  # key of JUDGE_MODES
    attribute: str = "overall"
    domain: str = "summary"
    selection: str = "all"
    budget: int | None = None
    n_contexts: int = 3
    n_samples: int = 3
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 64
    seed: int = 0
    device: str = "auto"

    @property
    def kind(self) -> str:
        return JUDGE_MODES[self.mode][0]

    @property
    def runner_mode(self) -> str:
        return JUDGE_MODES[self.mode][1]

    def decoding(self):
        from judge.backends.base import Decoding

        return Decoding(
            temperature=float(self.temperature),
            top_p=float(self.top_p),
            max_new_tokens=int(self.max_new_tokens),
            seed=int(self.seed),
        )

    def public(self) -> dict:
        """The settings as a plain dict for the report; a base URL loses any user:password."""
        from judge.backends.openai_compat import public_url

        out = dataclasses.asdict(self)
        if out["base_url"]:
            out["base_url"] = public_url(out["base_url"])
        return out


def _run_kwargs(ds: Dataset, settings: JudgeSettings) -> dict:
    """Keyword arguments shared by estimate, plan and run."""
    n_ctx = (
        ds.candidates["context_id"]
        .astype(str)
        .drop_duplicates()
        .head(int(settings.n_contexts))
        .tolist()
    )
    kw = dict(
        attribute=settings.attribute,
        contexts=n_ctx,
        domain=settings.domain,
        decoding=settings.decoding(),
        n_samples=int(settings.n_samples),
        mode=settings.runner_mode,
    )
    if settings.kind == "pairwise":
        kw.update(
            selection=settings.selection,
            budget=None if settings.selection == "all" else int(settings.budget or 1),
            random_state=int(settings.seed),
        )
    return kw


def secret_api_key(name: str = "OPENAI_API_KEY") -> str | None:
    """``st.secrets[name]`` as a string, or None when there is no such secret.

    The page layer reads secrets and passes the key down as ``api_key`` (``judge/`` never
    imports streamlit). A missing ``.streamlit/secrets.toml`` means no key; a malformed one,
    or a value that is not text, is logged (without the value) and ignored, so the page
    still opens and says that no key was found.
    """
    try:
        if name not in st.secrets:
            return None
        value = st.secrets[name]
    except (FileNotFoundError, KeyError, OSError) as err:
        # no secrets file (StreamlitSecretNotFoundError is a FileNotFoundError), or unreadable
        logging.getLogger("judgescope").debug(
            "no Streamlit secret %s: %s", name, type(err).__name__
        )
        return None
    except Exception as err:  # a malformed secrets.toml must not stop the page
        logging.getLogger("judgescope").warning(
            "could not read .streamlit/secrets.toml (%s); ignoring it", type(err).__name__
        )
        return None
    if not isinstance(value, str):
        logging.getLogger("judgescope").warning(
            "secret %s in .streamlit/secrets.toml is a %s, not text; ignoring it",
            name,
            type(value).__name__,
        )
        return None
    return value.strip() or None


def make_backend(settings: JudgeSettings, api_key: str | None = None):
    """The backend object for ``settings``; ``api_key`` goes into the OpenAI client only.

    The page passes the key typed in or read from Streamlit secrets (:func:`secret_api_key`);
    without one the backend falls back to ``OPENAI_API_KEY``.

    Raises
    ------
    judge.BackendError
        A model that cannot be loaded (offline, unknown id), no API key for OpenAI itself.
    """
    if settings.backend == "openai":
        from judge.backends.openai_compat import OpenAIBackend

        return OpenAIBackend(
            settings.model.strip(),
            base_url=settings.base_url.strip() or None,
            api_key=api_key or None,
        )
    if settings.backend == "hf":
        return hf_backend(settings.model.strip(), settings.device)
    raise ValueError(f"backend must be one of {list(BACKENDS)}; got {settings.backend!r}")


@st.cache_resource(show_spinner="Loading the model…", max_entries=2)
def hf_backend(model: str, device: str = "auto"):
    """A transformers judge, loaded once per server (``judge.backends.hf.HFBackend``)."""
    from judge.backends.hf import HFBackend

    if not model:
        raise ValueError("enter a transformers model id (e.g. google/flan-t5-small) or a folder")
    return HFBackend(model, device=device)


def judge_estimate(ds: Dataset, settings: JudgeSettings, template, backend=None, store=None):
    """``judge.runs.estimate.estimate`` for the page's settings.

    For an OpenAI-compatible endpoint no client is made (and no key needed): the model name
    and base URL identify the cached answers. A transformers model must be loaded first
    (``backend``), since its tokenizer and identity are needed.
    """
    from judge.runs.estimate import estimate

    kw = _run_kwargs(ds, settings)
    mode = kw.pop("mode")
    extra = {k: kw.pop(k) for k in ("selection", "budget", "random_state") if k in kw}
    if settings.backend == "openai":
        who = settings.model.strip()
        if not who:
            raise ValueError("enter the model name the endpoint serves")
        return estimate(
            ds,
            settings.attribute,
            template,
            who,
            mode=mode,
            store=store,
            base_url=settings.base_url.strip() or None,
            **{k: v for k, v in kw.items() if k != "attribute"},
            **extra,
        )
    if backend is None:
        return None
    return estimate(
        ds,
        settings.attribute,
        template,
        backend,
        mode=mode,
        store=store,
        **{k: v for k, v in kw.items() if k != "attribute"},
        **extra,
    )


class JudgeJob:
    """A judge run in a background thread, with progress, cancel and its result.

    The thread never touches Streamlit; the page polls :attr:`n_done` / :attr:`n_total`,
    sets :attr:`cancel` and, once :attr:`finished`, reads :attr:`result` or :attr:`error`.
    The API key reaches the backend's client inside the thread and is kept nowhere else.
    """

    def __init__(
        self,
        ds: Dataset,
        settings: JudgeSettings,
        template,
        *,
        api_key=None,
        backend=None,
        store=None,
        source_name: str | None = None,
    ):
        self.source = ds  # the dataset judged (results are merged into a copy of it)
        self.source_name = source_name or ds.name
        self.settings = settings
        self.template = template
        self.cancel = threading.Event()
        self.n_done = 0
        self.n_total = 0
        self.result = None  # the judge.runs.runners.RunResult, once the run has ended well
        self.error: str | None = None
        self.ended: float | None = None
        #: None until the page has taken the result; then the new dataset's name ("" if none)
        self.merged_into: str | None = None
        self._thread = threading.Thread(
            target=self._work,
            args=(ds, api_key, backend, store),
            daemon=True,
            name="judgescope-judge-run",
        )
        self._thread.start()

    @property
    def finished(self) -> bool:
        return self.ended is not None

    def _progress(self, n_done: int, n_total: int) -> None:
        self.n_done, self.n_total = int(n_done), int(n_total)

    def _work(self, ds, api_key, backend, store) -> None:
        from judge.runs.runners import run_absolute, run_pairwise

        try:
            if backend is None:
                backend = make_backend(self.settings, api_key)
            api_key = None  # from here on only the client holds it
            kw = _run_kwargs(ds, self.settings)
            run = run_pairwise if self.settings.kind == "pairwise" else run_absolute
            if self.settings.kind == "absolute":
                kw.pop("selection", None)
            self.result = run(
                ds,
                template=self.template,
                backend=backend,
                store=store,
                progress=self._progress,
                cancel=self.cancel,
                **kw,
            )
        except Exception as err:  # shown on the page; the trace goes to the server log
            _log_error("judge run failed", err)
            self.error = f"{type(err).__name__}: {err}" if not str(err) else str(err)
        finally:
            self.ended = time.time()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the run ends (tests, scripts); True when it did."""
        self._thread.join(timeout)
        return self.finished

    def take_result(self, into: Dataset | None = None) -> tuple[str, Dataset | None, dict]:
        """(new dataset name, merged copy or None, summary) of a finished run.

        The outputs go into a copy of ``into`` when given (the session's judged copy of the
        source, so that runs of several judges add up), else of the judged dataset, named
        :func:`judged_name` of the source: ``"<source> (judged)"``, short and stable
        however many judges run (running one again replaces its outputs). The summary is
        ``RunResult.summary()`` (judge, call counts: n_calls, n_cached, n_called,
        n_by_others, n_failed and failures by reason, n_in_progress; n_rows, cancelled,
        notes, warnings) plus ``table`` and ``dataset``; or only ``error``.
        """
        if not self.finished:
            raise RuntimeError("the judge run has not finished yet")
        if self.error:
            return "", None, {"error": self.error}
        result = self.result
        table = "comparisons" if result.kind == "pairwise" else "ratings"
        name = judged_name(self.source_name)
        merged = None
        if result.n_rows:
            try:
                merged = merge_outputs(
                    into if into is not None else self.source, table, result.table, name
                )
            except DataError:
                if into is None:
                    raise
                # the judged copy no longer matches the source: start it again from the source
                merged = merge_outputs(self.source, table, result.table, name)
        summary = {
            **result.summary(),
            "table": table,
            "dataset": name if merged is not None else "",
        }
        return name, merged, summary


#: What a judged copy of a dataset is called: ``"<source> (judged)"``.
JUDGED = " (judged)"


def judged_name(source: str) -> str:
    """The name of ``source`` with judge outputs added: ``"<source> (judged)"``, once.

    Names of older sessions (``"demo + judge/template + ..."``) lose their judge list.
    """
    base = source.split(" + ")[0].strip() or source
    return base if base.endswith(JUDGED) else base + JUDGED


def _log_error(what: str, err: Exception) -> None:
    logging.getLogger("judgescope").error("%s: %s", what, err, exc_info=err)
