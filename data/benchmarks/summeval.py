"""SummEval (Fabbri et al. 2021) and the published LLM-judge outputs on it (Shen et al. 2023).

Two benchmarks share the judge outputs:

- ``summeval``: 100 CNN/DM documents x 16 systems x 4 attributes, mean of the 3 expert
  ratings (BARTScore's ``data.pkl``).
- ``summeval_annotators``: the 12 abstractive systems with every rating: 3 experts and
  5 crowd workers per summary and attribute (``summeval_llm_eval/model_output_annotations``).

Judge outputs (``summeval_llm_eval``): ChatGPT (gpt-3.5-turbo-0301) pairwise A/B/C verdicts in
both presentation orders, and absolute 1-5 scores by ChatGPT (5 prompt methods), GPT-4 and
Llama-2-chat 7B/13B/70B (reason-then-score).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from data.benchmarks import _common as c
from data.benchmarks._sources import files_under
from data.parsing import NUMBERED_ALIASES, Parsed, parse_choice_letter, parse_likert, parse_verdict
from data.schema import DataError, Dataset

PKL = "summeval_bartscore/SUM/SummEval/data.pkl"
PPAIRS = "summeval_ppairs/data/summeval.jsonl"
ANNOTATIONS = "summeval_llm_eval/model_output_annotations/"
PAIRWISE = "summeval_llm_eval/comp_res/"
ABSOLUTE = "summeval_llm_eval/eval_model_generations/"

ATTRIBUTES = ("coherence", "consistency", "fluency", "relevance")
SCALE = (1.0, 5.0)
EXPERT_MEAN = "expert_mean"
N_EXPERTS, N_CROWD = 3, 5

# The SummEval pairwise prompt offers "A: Summary #1 is more ...", "B: ... #2", "C: equally".
PAIRWISE_METHOD = "ab-choice"
# Prompt methods of the absolute judges (summeval_llm_eval/PROVENANCE.md): reason-then-score
# (rts, altrts), "N stars" (stareval), multiple choice A-E = 1-5 (mcq, altmcq).
ABSOLUTE_METHODS = ("rts", "altrts", "mcq", "altmcq", "stareval")
# Older runs kept beside the current ones, and an empty file; not judge outputs to import.
SKIPPED_SUFFIXES = ("_old.txt", "fluency_cap.txt")


def judge_files() -> tuple[str, ...]:
    """The published judge outputs both SummEval benchmarks read.

    Returns
    -------
    tuple of str
        Relpaths of the known files under ``comp_res/`` (pairwise), then those under
        ``eval_model_generations/`` (absolute) except old runs and the empty file
        (``SKIPPED_SUFFIXES``); each group sorted.
    """
    return files_under(PAIRWISE) + files_under(ABSOLUTE, exclude_suffixes=SKIPPED_SUFFIXES)


def files_summeval() -> tuple[str, ...]:
    """The relpaths :func:`load_summeval` reads: BARTScore's ``data.pkl``, PPairS'
    ``summeval.jsonl``, the annotation files and :func:`judge_files`.
    """
    return (PKL, PPAIRS) + files_under(ANNOTATIONS) + judge_files()


def files_annotators() -> tuple[str, ...]:
    """The relpaths :func:`load_summeval_annotators` reads: the annotation files and
    :func:`judge_files`.
    """
    return files_under(ANNOTATIONS) + judge_files()


def _parse_absolute(method: str, text: str) -> Parsed:
    if method in ("mcq", "altmcq"):
        return parse_choice_letter(text, letters="ABCDE")
    if method == "stareval":
        # "Four stars. ..." : the rating comes first.
        return parse_likert(text, scale=SCALE, rule="chiang_lee")
    # Reason-then-score: the number after the last score keyword ("Final score: 4", "I would
    # score it a 4 out of 5"), else the last number on the scale. The first number is often
    # from the article ("6-1 victory"); the last alone misreads Llama-2, which often explains
    # after its score. Without a keyword one Llama-2 answer still reads 2.6 ("$2.6 million").
    return parse_likert(text, scale=SCALE, rule="keyed")


# ----------------------------------------------------------------------------- judge outputs

_PAIR_NAME = re.compile(r"^(?P<a>M\d+)-(?P<b>M\d+)_(?P<dim>[a-z]+)(?P<toggle>_toggle)?\.result$")
_ABS_NAME = re.compile(r"^(?P<dim>[a-z]+)_(?P<method>[a-z]+)\.txt$")
_ABS_DIR = re.compile(r"^eval_(?P<system>M\d+)_generations$")


def import_pairwise(files: dict[str, Path]) -> pd.DataFrame:
    """ChatGPT A/B/C verdicts: one comparisons row per (file, document).

    Without ``_toggle`` Summary #1 (shown first) is ``model_1`` = the first system in the file
    name; with ``_toggle`` the order is swapped. "A" = the first-shown summary wins
    (p_first 1), "B" = the second (0), "C" = tie (0.5).

    Parameters
    ----------
    files : dict of str to Path
        relpath -> local path; only the files under ``comp_res/`` are read.

    Returns
    -------
    pandas.DataFrame
        Canonical comparisons: context_id the document id, attribute from the file name,
        judge ``"<model folder>/ab-choice"``, the answer as raw text, sample 0. Answers are
        read with :func:`~data.parsing.parse_verdict` (A/B, tie label C, numbered aliases);
        an unparsed one has NaN p_first and no verdict.

    Raises
    ------
    DataError
        A file name other than ``<MA>-<MB>_<dim>[_toggle].result``; a malformed JSON line.
    """
    cols = defaultdict(list)
    for rel, path in files.items():
        if not rel.startswith(PAIRWISE):
            continue
        p = PurePosixPath(rel)
        m = _PAIR_NAME.match(p.name)
        if m is None:
            raise DataError(
                f"{path}: unexpected file name, expected '<MA>-<MB>_<dim>[_toggle].result'"
            )
        first, second = (m["b"], m["a"]) if m["toggle"] else (m["a"], m["b"])
        judge = f"{p.parent.name}/{PAIRWISE_METHOD}"
        for row in c.read_jsonl(path):
            cols["context_id"].append(row["id"])
            cols["attribute"].append(m["dim"])
            cols["judge"].append(judge)
            cols["first_id"].append(first)
            cols["second_id"].append(second)
            cols["raw"].append(row["resp"])
    verdicts, _reasons = c.parse_all(
        lambda t: parse_verdict(t, labels=("A", "B"), tie_labels=("C",), aliases=NUMBERED_ALIASES),
        cols["raw"],
    )
    return c.comparisons(cols, verdicts)


def import_absolute(files: dict[str, Path]) -> pd.DataFrame:
    """Absolute 1-5 scores: one ratings row per (judge, method, system, attribute, document).

    Re-runs appended to a file are deduplicated by document id, keeping the last answer.
    ``judge`` is ``"<model>/<method>"``, ``prompt_id`` the method.

    Parameters
    ----------
    files : dict of str to Path
        relpath -> local path; only the files under ``eval_model_generations/`` not ending
        in ``SKIPPED_SUFFIXES`` are read.

    Returns
    -------
    pandas.DataFrame
        Canonical ratings: context_id the document id, candidate_id the system of the
        ``eval_<M>_generations`` folder, attribute from the file name, the answer as raw
        text, sample 0. Scores: letters A-E as 1-5 (mcq, altmcq), the first number
        (stareval), else the number after the last score keyword or the last number on
        1-5 (rts, altrts); NaN when the answer did not parse.

    Raises
    ------
    DataError
        A path other than ``<judge>/eval_<M>_generations/<dim>_<method>.txt`` with a known
        method; a malformed JSON line.
    """
    cols = defaultdict(list)
    for rel, path in files.items():
        if not rel.startswith(ABSOLUTE) or rel.endswith(SKIPPED_SUFFIXES):
            continue
        p = PurePosixPath(rel)
        m, d = _ABS_NAME.match(p.name), _ABS_DIR.match(p.parent.name)
        if m is None or d is None or m["method"] not in ABSOLUTE_METHODS:
            raise DataError(
                f"{path}: unexpected file, expected '<judge>/eval_<M>_generations/<dim>_<method>.txt' "
                f"with method in {ABSOLUTE_METHODS}"
            )
        model = p.parent.parent.name
        last: dict[str, str] = {}
        for row in c.read_jsonl(path):
            last[row["id"]] = row["resp"]  # a later re-run replaces the earlier answer
        for doc, resp in last.items():
            cols["context_id"].append(doc)
            cols["candidate_id"].append(d["system"])
            cols["attribute"].append(m["dim"])
            cols["judge"].append(f"{model}/{m['method']}")
            cols["prompt_id"].append(m["method"])
            cols["raw"].append(resp)
    # The parser depends on the method, so the memo of distinct answers is keyed by both.
    scores = []
    memo: dict[tuple[str, str], object] = {}
    for method, text in zip(cols["prompt_id"], cols["raw"], strict=True):
        key = (method, text)
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = _parse_absolute(method, text)
        scores.append(np.nan if hit.value is None else float(hit.value))
    n = len(scores)
    return c.table("ratings", {**cols, "score": scores, "sample": np.zeros(n, dtype=np.int64)})


# ----------------------------------------------------------------------------- texts


def _norm(text: str) -> str:
    # Tokenisation, case, PTB bracket tokens and punctuation differ between the copies.
    return re.sub(r"[^0-9a-z]+", "", re.sub(r"-[lr][rsc]b-", " ", text.lower()))


def _annotation_rows(files: dict[str, Path]) -> list[dict]:
    rows = []
    for rel, path in files.items():
        if rel.startswith(ANNOTATIONS):
            rows.extend(c.read_jsonl(path))
    return rows


def _match_extractive(pkl: dict, ann: list[dict], ppairs: list[dict]) -> tuple[dict, int]:
    """Original (SummEval ``decoded``) texts of the systems missing from the annotation files.

    PPairS keeps all 16 summaries per article without system ids. Per document, the rows equal
    to a known system's ``decoded`` text are set aside; each remaining system takes the row
    whose normalised text equals its BARTScore text, preferring equal expert means and then the
    closest spelling.

    Returns
    -------
    (texts, n_unmatched)
        ``texts[(doc, system)]``; systems left unmatched are absent (and counted).
    """
    doc_of_article = {_norm(r["text"]): r["id"] for r in ann}
    decoded = {(r["id"], r["model_id"]): r["decoded"] for r in ann}
    by_doc: dict[str, list[dict]] = defaultdict(list)
    for r in ppairs:
        doc = doc_of_article.get(_norm(r["article"]))
        if doc is not None:
            by_doc[doc].append(r)
    texts: dict[tuple[str, str], str] = {}
    n_unmatched = 0
    for doc, entry in pkl.items():
        rows = list(by_doc.get(doc, []))
        for system in entry["sys_summs"]:
            known = decoded.get((doc, system))
            if known is None:
                continue
            for i, r in enumerate(rows):
                if r["summary"] == known:
                    del rows[i]
                    break
        todo = [s for s in entry["sys_summs"] if (doc, s) not in decoded]
        options = []
        for system in todo:
            summ = entry["sys_summs"][system]
            key = _norm(summ["sys_summ"])
            for i, r in enumerate(rows):
                if _norm(r["summary"]) != key:
                    continue
                same_scores = all(abs(r[a] - summ["scores"][a]) < 1e-6 for a in ATTRIBUTES)
                # Shared tokens: cheap, and enough to tell "22 - year - old" from "22-year-old".
                closeness = sum(
                    (
                        Counter(r["summary"].split()) & Counter(summ["sys_summ"].lower().split())
                    ).values()
                )
                options.append((same_scores, closeness, system, i))
        taken_rows: set[int] = set()
        for _same, _close, system, i in sorted(options, reverse=True):
            if (doc, system) in texts or i in taken_rows:
                continue
            texts[(doc, system)] = rows[i]["summary"]
            taken_rows.add(i)
        n_unmatched += sum((doc, s) not in texts for s in todo)
    return texts, n_unmatched


# ----------------------------------------------------------------------------- loaders


def _with_judges(ds: Dataset, files: dict[str, Path]) -> Dataset:
    judge = {rel: files[rel] for rel in judge_files()}
    stamp = tuple(
        (rel, str(p), st.st_mtime_ns, st.st_size) for rel, p in judge.items() for st in (p.stat(),)
    )
    comparisons, ratings = _judge_tables(stamp)
    # Both SummEval benchmarks share these tables; copies keep one caller's edits from the other.
    ds.comparisons = comparisons.copy(deep=False)
    ds.ratings = ratings.copy(deep=False)
    return ds


@lru_cache(maxsize=2)
def _judge_tables(stamp: tuple[tuple[str, str, int, int], ...]):
    """Judge outputs parsed once per set of files (path, mtime and size in the key)."""
    files = {rel: Path(path) for rel, path, _mtime, _size in stamp}
    return import_pairwise(files), import_absolute(files)


JUDGE_NOTE = (
    " Judge outputs (Shen et al. 2023): ChatGPT (gpt-3.5-turbo-0301) pairwise A/B/C verdicts "
    "on 11 adjacent system pairs x 4 attributes in both presentation orders (8,800; judge "
    "'gpt-3.5-turbo-0301/ab-choice'); absolute 1-5 scores by ChatGPT with 5 prompt methods "
    "(rts, altrts, mcq, altmcq, stareval), GPT-4 (gpt-4-0314) and Llama-2-chat 7B/13B/70B "
    "(rts) on the 12 abstractive systems (judge '<model>/<method>'). Re-runs are deduplicated "
    "keeping the last answer. Reason-then-score answers are read as the number after the last "
    "score keyword, else the last number on the 1-5 scale; 'N stars' as the first number; "
    "letters A-E as 1-5. Unparsed answers stay NaN with the raw text kept."
)


def load_summeval(files: dict[str, Path]) -> Dataset:
    """100 documents x 16 systems x 4 attributes (expert means) plus the judge outputs.

    ``files`` maps each relpath of :func:`files_summeval` to its local path.

    Returns
    -------
    Dataset
        Not yet validated. Contexts: the documents of ``data.pkl`` (text: the untokenised
        article from the annotation files, else BARTScore's copy); candidates: the 16
        systems per document (candidate_id = system; text: SummEval's ``decoded``, else the
        PPairS text matched to it, else BARTScore's copy); human scores of annotator
        ``"expert_mean"``; scales 1-5; comparisons and ratings from the judge files
        (:func:`import_pairwise`, :func:`import_absolute`).

    Raises
    ------
    DataError
        ``data.pkl`` refers to a class or is unreadable; a malformed JSON line; a judge file
        with an unexpected name.
    """
    pkl = c.load_plain_pickle(files[PKL])
    ann = _annotation_rows(files)
    ppairs = c.read_jsonl(files[PPAIRS])
    article = {r["id"]: r["text"] for r in ann}
    decoded = {(r["id"], r["model_id"]): r["decoded"] for r in ann}
    extractive, n_unmatched = _match_extractive(pkl, ann, ppairs)

    ctx = defaultdict(list)
    cand = defaultdict(list)
    hs = defaultdict(list)
    for doc, entry in pkl.items():
        ctx["context_id"].append(doc)
        ctx["text"].append(article.get(doc, entry["src"]))
        for system, summ in entry["sys_summs"].items():
            text = decoded.get((doc, system)) or extractive.get((doc, system)) or summ["sys_summ"]
            cand["context_id"].append(doc)
            cand["candidate_id"].append(system)
            cand["system"].append(system)
            cand["text"].append(text)
            for attr in ATTRIBUTES:
                hs["context_id"].append(doc)
                hs["candidate_id"].append(system)
                hs["attribute"].append(attr)
                hs["annotator"].append(EXPERT_MEAN)
                hs["score"].append(float(summ["scores"][attr]))
    n_fallback_ctx = sum(doc not in article for doc in pkl)
    return _rated(
        files,
        "summeval",
        ctx,
        cand,
        hs,
        description=(
            "SummEval: 100 CNN/DailyMail articles x 16 summarisation systems (M0..M23), each "
            "summary rated 1-5 on coherence, consistency, fluency and relevance; human score = "
            "mean of the 3 expert ratings (annotator 'expert_mean'). Article text is the "
            "untokenised CNN/DM article; summaries are the systems' original outputs "
            "(SummEval 'decoded', as the annotators saw them: mostly lower-cased and "
            f"PTB-tokenised), matched for the 4 extractive systems through PPairS; "
            f"{n_unmatched} summaries and {n_fallback_ctx} articles fell back to BARTScore's "
            "tokenised copy." + JUDGE_NOTE
        ),
        source=(
            "neulab/BARTScore@248f511 SUM/SummEval/data.pkl (Apache-2.0); "
            "DAMO-NLP-SG/LLM_summeval@bd7dde1 (no licence stated); maiush/PPairS@cc4ba40 "
            "data/summeval.jsonl (MIT). Annotations: Yale-LILY/SummEval (MIT)."
        ),
    )


def _rated(files, name: str, ctx, cand, hs, *, description: str, source: str) -> Dataset:
    """A SummEval Dataset from its contexts, candidates and human scores (column lists), on
    the 1-5 scale of every attribute, with the judge outputs of ``files``."""
    ds = Dataset(
        name=name,
        contexts=c.table("contexts", ctx),
        candidates=c.table("candidates", cand),
        human_scores=c.table("human_scores", hs),
        scales={a: SCALE for a in ATTRIBUTES},
        description=description,
        source=source,
    )
    return _with_judges(ds, files)


def load_summeval_annotators(files: dict[str, Path]) -> Dataset:
    """100 documents x 12 systems with 3 expert and 5 crowd ratings, plus the judge outputs.

    ``files`` maps each relpath of :func:`files_annotators` to its local path.

    Returns
    -------
    Dataset
        Not yet validated. Contexts: the documents in order of first appearance (text: the
        article); one candidate per annotation row (candidate_id = system = ``model_id``;
        text: ``decoded``); human scores of ``expert_1..3`` and ``crowd_1..5``; scales 1-5;
        comparisons and ratings from the judge files.

    Raises
    ------
    DataError
        A summary without exactly 3 expert and 5 crowd ratings; a malformed JSON line; a
        judge file with an unexpected name.
    """
    ann = _annotation_rows(files)
    ctx: dict[str, str] = {}
    cand = defaultdict(list)
    hs = defaultdict(list)
    for r in ann:
        doc, system = r["id"], r["model_id"]
        ctx.setdefault(doc, r["text"])
        cand["context_id"].append(doc)
        cand["candidate_id"].append(system)
        cand["system"].append(system)
        cand["text"].append(r["decoded"])
        groups = (
            ("expert", r["expert_annotations"], N_EXPERTS),
            ("crowd", r["turker_annotations"], N_CROWD),
        )
        for group, ratings, n_expected in groups:
            if len(ratings) != n_expected:
                raise DataError(
                    f"summeval_llm_eval annotations, document {doc} system {system}: expected "
                    f"{n_expected} {group} ratings, found {len(ratings)}"
                )
            for k, rating in enumerate(ratings, start=1):
                for attr in ATTRIBUTES:
                    hs["context_id"].append(doc)
                    hs["candidate_id"].append(system)
                    hs["attribute"].append(attr)
                    hs["annotator"].append(f"{group}_{k}")
                    hs["score"].append(float(rating[attr]))
    return _rated(
        files,
        "summeval_annotators",
        {"context_id": list(ctx), "text": list(ctx.values())},
        cand,
        hs,
        description=(
            "SummEval, per-annotator part: 100 CNN/DailyMail articles x the 12 abstractive "
            "systems, each summary rated 1-5 on coherence, consistency, fluency and relevance "
            "by 3 experts (annotators 'expert_1..3') and 5 crowd workers ('crowd_1..5'; the "
            "numbering is the position in the file, not a person across items). Summaries are "
            "the systems' original outputs (SummEval 'decoded')." + JUDGE_NOTE
        ),
        source=(
            "DAMO-NLP-SG/LLM_summeval@bd7dde1 model_output_annotations, comp_res, "
            "eval_model_generations (no licence stated). Annotations: Yale-LILY/SummEval (MIT)."
        ),
    )
