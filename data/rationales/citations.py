"""How often a rationale cites something that is not in the text it judges.

The heuristic (HANNA §5 found about 40 % of explanations unsupported):

1. **Cited spans** of a rationale are
   - *quoted spans*: text between double quotes (``"..."``, ``“...”``) or single quotes
     that open after a space or bracket and close before a space or punctuation
     (``'...'``; apostrophes inside words are not quotes), of at least two characters;
   - *named-entity-like spans*: runs of capitalised words (``Roger Vanden``,
     ``Manchester City``; a possessive ends one; ``of``/``de``/``van``/``the`` may join them), leaving
     out a single capitalised word that starts a sentence and words of
     :data:`GENERIC` (Summary, Article, Score, the criteria's names, ...).
2. A span is **supported** when, lower-cased with possessive ``'s``, punctuation and runs
   of spaces folded to one space, it occurs in the judged text(s) — the candidate, both candidates of a pair,
   and (``use_context=True``) the context, e.g. the source article of a summary — also
   folded. Otherwise it is **unsupported**.
3. A rationale is unsupported when at least one of its cited spans is; the rate is over the
   rationales that cite something (and, separately, over all rationales).
"""

from __future__ import annotations

import re

import pandas as pd

from data.schema import Dataset

_QUOTED = [
    re.compile(r'"([^"\n]{2,300})"'),
    re.compile(r"“([^”\n]{2,300})”"),
    re.compile(r"(?:(?<=^)|(?<=[\s(\[]))'([^'\n]{2,300})'(?=$|[\s.,;:!?)\]])"),
    re.compile(r"(?:(?<=^)|(?<=[\s(\[]))‘([^’\n]{2,300})’(?=$|[\s.,;:!?)\]])"),
]
_CAP = r"[A-Z][\w’'&.-]*"
_ENTITY = re.compile(rf"{_CAP}(?:\s+(?:(?:of|de|del|da|van|von|the)\s+)?{_CAP})*")
#: Capitalised words that name the task, not the text (never cited spans on their own).
GENERIC = frozenset(
    """a an the i it this that these they there however overall additionally also although
    but and or so while therefore thus because since as in on for to of with its although
    summary summaries article document source story text response responses answer output
    dialogue dialog conversation context fact facts score scores rating final reason
    explanation rationale coherence coherent consistency consistent fluency fluent
    relevance relevant engagingness naturalness groundedness understandability
    overall star stars one two three four five yes no sure here based yet
    assistant user human candidate option first second both neither summary#1 summary#2
    """.split()
)


def _fold(text: str) -> str:
    text = str(text).lower().replace("’", "'")
    text = re.sub(r"\s*'s\b", " ", text)  # possessives: "Bolt's" is supported by "bolt 's"
    text = re.sub(r"[^\w]+", " ", text)
    return " " + re.sub(r"\s+", " ", text).strip() + " "


def _split_possessive(words: list[str]) -> list[list[str]]:
    """``Liverpool's FA Cup`` -> ``[Liverpool's]``, ``[FA, Cup]``: a possessive ends a name."""
    parts, part = [], []
    for w in words:
        part.append(w)
        if w.lower().endswith(("'s", "’s")):
            parts.append(part)
            part = []
    return [*parts, part] if part else parts


def cited_spans(rationale: str) -> list[tuple[str, str]]:
    """The (kind, span) pairs a rationale cites: kind ``quote`` or ``entity`` (see module).

    Parameters
    ----------
    rationale : str

    Returns
    -------
    list of (str, str)
        Quoted spans first, then named-entity-like spans outside the quotes; each distinct
        span once (after folding).
    """
    text = str(rationale)
    out, seen = [], set()
    rest = text
    for pattern in _QUOTED:
        for m in pattern.finditer(text):
            span = m.group(1).strip()
            key = _fold(span)
            if key.strip() and key not in seen:
                seen.add(key)
                out.append(("quote", span))
            rest = rest.replace(m.group(0), " . ")
    for m in _ENTITY.finditer(rest):
        words = [w.strip(".’'-&") for w in m.group(0).split()]
        before = rest[: m.start()].rstrip()
        if (not before or before[-1] in '.!?:\n#-*•("“') and len(words) == 1:
            continue  # one word, capitalised because the sentence starts
        for part in _split_possessive(words):
            while part and part[0].lower() in GENERIC:
                part = part[1:]
            while part and part[-1].lower() in GENERIC:
                part = part[:-1]
            if not part or all(w.lower() in GENERIC or len(w) < 2 for w in part):
                continue
            span = " ".join(part)
            key = _fold(span)
            if key not in seen:
                seen.add(key)
                out.append(("entity", span))
    return out


def check_citations(rationale: str, sources: list[str]) -> list[tuple[str, str, bool]]:
    """(kind, span, supported) for each span of :func:`cited_spans` against ``sources``."""
    folded = " ".join(_fold(s) for s in sources if isinstance(s, str))
    return [(kind, span, _fold(span) in folded) for kind, span in cited_spans(rationale)]


def unsupported_citations(
    frame: pd.DataFrame, ds: Dataset, *, use_context: bool = True
) -> pd.DataFrame:
    """The cited spans of each rationale and which of them the judged text lacks.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of :func:`data.rationales.rationales` (candidate_id, or first_id and
        second_id).
    ds : Dataset
        Where the candidates' (and contexts') texts are read.
    use_context : bool
        Also accept spans found in the context (the article a summary summarises, the
        dialogue a response continues).

    Returns
    -------
    pandas.DataFrame
        ``frame``'s rows with cited (number of spans), unsupported (number not found),
        unsupported_spans (" | "-joined), supported_spans, and unsupported_any (bool; NaN
        when nothing is cited).
    """
    cands = ds.candidates
    text = dict(
        zip(
            zip(cands["context_id"].astype(str), cands["candidate_id"].astype(str), strict=True),
            cands["text"].astype(str),
            strict=True,
        )
    )
    ctx = dict(
        zip(ds.contexts["context_id"].astype(str), ds.contexts["text"].astype(str), strict=True)
    )
    ids = ["candidate_id"] if "candidate_id" in frame else ["first_id", "second_id"]
    cited, bad, bad_spans, good_spans = [], [], [], []
    for row in frame[["context_id", *ids, "rationale"]].itertuples(index=False):
        sources = [text.get((row[0], row[i]), "") for i in range(1, 1 + len(ids))]
        if use_context:
            sources.append(ctx.get(row[0], ""))
        checks = check_citations(row[-1], sources)
        cited.append(len(checks))
        bad.append(sum(not ok for _, _, ok in checks))
        bad_spans.append(" | ".join(s for _, s, ok in checks if not ok))
        good_spans.append(" | ".join(s for _, s, ok in checks if ok))
    out = frame.copy()
    out["cited"] = cited
    out["unsupported"] = bad
    out["unsupported_spans"] = bad_spans
    out["supported_spans"] = good_spans
    out["unsupported_any"] = pd.Series(
        [b > 0 if c else None for c, b in zip(cited, bad, strict=True)], dtype="object"
    )
    return out


def citation_summary(checked: pd.DataFrame) -> dict:
    """Rates from :func:`unsupported_citations`: rationales, citing (share that cite a span),
    unsupported_rate (of the citing ones, share with an unsupported span), unsupported_all
    (of all rationales), spans, unsupported_spans (share of spans)."""
    n = len(checked)
    citing = checked["cited"] > 0
    spans = int(checked["cited"].sum())
    n_bad = int((checked["unsupported"] > 0).sum())
    return {
        "rationales": n,
        "citing": int(citing.sum()),
        "unsupported": n_bad,
        "unsupported_rate": n_bad / int(citing.sum()) if citing.any() else float("nan"),
        "unsupported_all": n_bad / n if n else float("nan"),
        "spans": spans,
        "unsupported_span_rate": int(checked["unsupported"].sum()) / spans
        if spans
        else float("nan"),
    }
