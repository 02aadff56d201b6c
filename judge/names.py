"""The ``judge`` column: one readable name per judge, written by the runners and read back.

:func:`judge_name` writes it, :func:`parse_judge_name` reads it:

- pairwise, label probabilities: ``<model>/<template id>``;
- pairwise, sampled verdicts: ``<model>/<template id>/t<temperature>-p<top_p>``;
- absolute, sampled scores: ``<model>/t<temperature>-p<top_p>`` (the template is in the
  ratings' ``prompt_id`` column, so that prompts can be compared for one judge);
- absolute, G-Eval expected score: ``<model>/expected``.

Model names may hold ``/`` themselves (``meta-llama/Llama-2-7b-chat-hf``); template ids
never do. Temperature and top_p are written with ``:g`` (six significant digits, e.g.
``t0.7-p0.9``, ``t1e-05-p1``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from judge.backends.base import Decoding

#: the last part of the name of a sampled run, e.g. ``t0.7-p0.9`` or ``t1e-05-p1``
_NUMBER = r"[0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?|inf|nan"
_DECODING_TAG = re.compile(rf"^t(?P<t>{_NUMBER})-p(?P<p>{_NUMBER})$")
EXPECTED = "expected"


class JudgeName(NamedTuple):
    """What a ``judge`` name says (see :func:`parse_judge_name`)."""

    model: str
    #: template id (pairwise) or prompt id (ratings) when the name carries it, else None
    template: str | None
    #: "samples" (a decoding tag), "expected" (G-Eval), or None: label probabilities for a
    #: pairwise name, not said for other names
    mode: str | None
    temperature: float | None
    top_p: float | None


def decoding_tag(decoding: Decoding) -> str:
    """Short readable form of sampling settings, e.g. ``t0.7-p0.9``."""
    return f"t{decoding.temperature:g}-p{decoding.top_p:g}"


def judge_name(
    model_id: str, template_id: str | None, mode: str, decoding: Decoding | None = None
) -> str:
    """The ``judge`` column value (see the module docstring)."""
    parts = [str(model_id)]
    if template_id:
        parts.append(str(template_id))
    if mode == "samples":
        parts.append(decoding_tag(decoding or Decoding()))
    elif mode == EXPECTED:
        parts.append(EXPECTED)
    return "/".join(parts)


def parse_judge_name(name: str, template: str | None = None, kind: str | None = None) -> JudgeName:
    """Read a ``judge`` name back into model, template, mode, temperature and top_p.

    Parameters
    ----------
    name : str
        A ``judge`` value: one :func:`judge_name` wrote, or an imported one such as
        ``gpt-3.5-turbo-0301/altmcq``.
    template : str, optional
        The template id (comparisons) or ``prompt_id`` (ratings) of the rows named so. A
        part of the name other than the first that equals it is the template, not part of
        the model (imported ratings often name their prompt so).
    kind : {"pairwise", "absolute"}, optional
        Which table the name comes from. A pairwise name always carries its template after
        the model (``m/t1-p1`` with template ``t1-p1`` is then label probabilities, not a
        sampled run of ``m``); a ratings name ends in its decoding tag or "expected" when it
        has one. Without ``kind`` a name is read like a ratings one.

    Returns
    -------
    JudgeName
        ``parse_judge_name(judge_name(m, t, mode, d), t, kind)`` gives back ``m``, ``t``
        (None for ratings), the mode ("samples", "expected", or None for label
        probabilities) and, for samples, the temperature and top_p (to the six significant
        digits the name keeps).
    """
    if kind not in (None, "pairwise", "absolute"):
        raise ValueError(f"kind must be 'pairwise', 'absolute' or None; got {kind!r}")
    parts = str(name).split("/")
    hint = None if template is None else str(template)
    readings = [_reading(parts, popped, hint, kind) for popped in (True, False)]
    readings = [r for r in readings if r is not None]
    if kind == "pairwise" and hint is not None:
        # the template is always there: take the reading that finds the one given
        return next((r for r in readings if r.template == hint), readings[0])
    return readings[0]


def _reading(parts: list[str], popped: bool, hint: str | None, kind: str | None):
    """One way to read ``parts``: with the last part as a decoding tag or "expected"
    (``popped``) or as part of the name; None when that way is impossible."""
    mode = temperature = top_p = None
    rest = list(parts)
    if popped:
        tag = _DECODING_TAG.match(parts[-1]) if len(parts) > 1 else None
        if tag is not None:
            mode, temperature, top_p = "samples", float(tag["t"]), float(tag["p"])
        elif len(parts) > 1 and parts[-1] == EXPECTED and kind != "pairwise":
            mode = EXPECTED
        else:
            return None
        rest.pop()
    found = None
    if kind == "pairwise":
        if len(rest) < 2:
            return None
        found = rest.pop()
    elif hint is not None and hint in rest[1:]:
        found = hint
        rest.pop(len(rest) - 1 - rest[::-1].index(hint))  # the last one: the model comes first
    return JudgeName("/".join(rest), found, mode, temperature, top_p)


__all__ = ["EXPECTED", "JudgeName", "decoding_tag", "judge_name", "parse_judge_name"]
