"""Rationales: the free-text explanations judges give beside their verdicts and scores.

* :func:`rationales` (``extract``): one row per answer with an explanation (the bare label
  or score stripped, empty ones counted in ``attrs["counts"]``), with the candidate(s),
  score or verdict, system and agreement with the humans;
* :func:`keyword_table` (``keywords``): TF-IDF keywords per criterion, score, verdict,
  system or cluster;
* :func:`rationale_map` (``mapping``): TF-IDF -> TruncatedSVD -> t-SNE, KMeans clusters
  labelled by their keywords;
* :func:`unsupported_citations`, :func:`citation_summary` (``citations``): quoted spans and
  named-entity-like spans absent from the judged text (the heuristic is in that module).
"""

from __future__ import annotations

from data.rationales.citations import (
    check_citations,
    citation_summary,
    cited_spans,
    unsupported_citations,
)
from data.rationales.extract import explanation, rationales
from data.rationales.keywords import keyword_table, wide
from data.rationales.mapping import RationaleMap, rationale_map

__all__ = [
    "RationaleMap",
    "check_citations",
    "citation_summary",
    "cited_spans",
    "explanation",
    "keyword_table",
    "rationale_map",
    "rationales",
    "unsupported_citations",
    "wide",
]
