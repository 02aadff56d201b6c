"""Chhun, Suchanek & Clavel (TACL 2024): the paper's setting, shared by its figures
(:mod:`data.reproduce.chhun2024`) and its tables (:mod:`data.reproduce.chhun2024_tables`).

HANNA, the LLM ratings as published (means over three tries), the 10 story generators (the
human-written story, HANNA's reference system ``Human``, left out), and the HANNA loader's
judge names.
"""

from __future__ import annotations

from data.schema import Dataset
from data.scope.analysis_view import analysis_view

BENCH = "hanna"
PAGE = "agreement"
EP1 = "eval_prompt_1"
#: The paper's analysis: generators only, LLM ratings as published.
EXCLUDE = ("Human",)
READING = "published"


def judge_name(llm: str, prompt: str = EP1) -> str:
    """The HANNA loader's judge name of an LLM under an Eval-Prompt."""
    return f"{llm}/{prompt}"


def paper_view(ds: Dataset, exclude=EXCLUDE) -> Dataset:
    """HANNA as the paper analyses it (``data.scope.analysis_view``: systems left out, reading)."""
    return analysis_view(ds, exclude=list(exclude), reading=READING)
