"""The :class:`Template`: a judge prompt with named fields, rendered and split into a prefix
shared by the comparisons of a context and the rest, with a stable key for the run store."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from data.parsing import Parsed, parse_likert, parse_verdict
from judge.templates.attributes import attribute_values
from judge.templates.fields import (
    DATA_FIELDS,
    TemplateError,
    fields_of,
    fill_partial,
    hint_for,
    text_segments,
)
from judge.templates.validation import check_template

_MAX_EXPANSION = 4


def _plain(obj: Any) -> Any:
    """A JSON-able deep copy (tuples to lists) for hashing and dumping."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


@dataclass(frozen=True)
class Template:
    """A judge prompt with named fields.

    Parameters
    ----------
    id, version : str
        Together name the template in the run store; change ``version`` when the text changes.
    kind : {"comparative", "absolute"}
        Comparative templates show two candidates ``{a}``, ``{b}`` and read ``labels``;
        absolute ones show one ``{candidate}`` and read a score on ``scale``.
    text : str
        The prompt, with ``{field}`` placeholders (``{{``/``}}`` for literal braces).
    labels : pair of str
        Label words of the first and second candidate (comparative only).
    tie_label : str, optional
        Label word meaning "equally good" (the SummEval A/B/C prompt: "C").
    scale : (lo, hi), optional
        Score scale (absolute only, required there).
    decoder_prefix : str
        Text the decoder of a seq2seq model is primed with (FlanT5: "Summary"). Plain text,
        sent as written (no fields).
    answer_prefix : str
        Text a causal model's prompt ends with ("Answer:", "Score:"). Plain text.
    system : str, optional
        System message for chat models. Plain text.
    description, source : str
        What the template is for, and the paper it comes from.
    defaults : mapping
        Attribute-level field values: ``{"fixed": {field: text}, "by_attribute": {field:
        {attribute: text}}, "by_domain": {field: {domain: text}}}``; ``"*"`` is a catch-all
        key. Values are template text and may contain fields themselves.
    parsing : mapping
        How answers are parsed: comparative ``{"aliases": {...}}`` (see
        :func:`data.parsing.parse_verdict`); absolute ``{"rule": ..., "drop": [...]}`` (see
        :func:`data.parsing.parse_likert`, default rule "strict").
    """

    id: str
    version: str
    kind: str
    text: str
    labels: tuple[str, ...] = ("A", "B")
    tie_label: str | None = None
    scale: tuple[float, float] | None = None
    decoder_prefix: str = ""
    answer_prefix: str = ""
    system: str | None = None
    description: str = ""
    source: str = ""
    defaults: Mapping[str, Any] = field(default_factory=dict, hash=False)
    parsing: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        check_template(self)  # raises TemplateError; normalises the frozen fields

    # ------------------------------------------------------------------ fields and rendering

    @property
    def fields(self) -> tuple[str, ...]:
        """Fields of the text in order of first appearance (``string.Formatter`` parse).

        Fields reached only through an attribute value (the Chiang & Lee relevance block
        carries ``{context}``) appear after :meth:`for_attribute`.
        """
        return fields_of(self.text)

    @property
    def score_labels(self) -> tuple[str, ...]:
        """Score tokens "lo".."hi" of an integer scale (G-Eval expected score); () otherwise."""
        if self.scale is None:
            return ()
        lo, hi = self.scale
        if float(lo).is_integer() and float(hi).is_integer():
            return tuple(str(i) for i in range(int(lo), int(hi) + 1))
        return ()

    def _expanded(self, values: Mapping[str, Any]) -> tuple[tuple[str, str | None], ...]:
        """Segments of the text once the attribute-level values are in.

        Attribute-level values (every field but the data fields) are template text and may
        bring fields of their own, which are expanded in turn; data values stay literal.
        """
        text = self.text
        for _depth in range(_MAX_EXPANSION):
            names = fields_of(text)
            fill = {
                n: str(values[n])
                for n in names
                if n not in DATA_FIELDS and values.get(n) is not None
            }
            if not fill:
                break
            try:
                text = fill_partial(text, fill)
            except TemplateError as exc:
                raise TemplateError(
                    f"template {self.id!r}: a field value is not valid template text: {exc}"
                ) from None
        else:
            raise TemplateError(
                f"template {self.id!r}: field values keep bringing new fields after "
                f"{_MAX_EXPANSION} rounds; does a value refer to its own field?"
            )
        segments = text_segments(text)
        missing = [n for _lit, n in segments if n is not None and values.get(n) is None]
        if missing:
            missing = list(dict.fromkeys(missing))
            given = ", ".join(sorted(k for k, v in values.items() if v is not None)) or "nothing"
            raise TemplateError(
                f"template {self.id!r} needs "
                + ", ".join("{" + f + "}" for f in missing)
                + f"; given: {given}"
                + hint_for(missing)
            )
        return segments

    def render(self, **values: Any) -> str:
        """The prompt with every field filled.

        Data values (``context``, ``a``, ``b``, ``candidate``, ``reference``) are inserted
        literally; other values (``adjective``, ``question``, ...; as given by
        :func:`attribute_values`) are template text and may contain fields themselves.

        Raises
        ------
        TemplateError
            Naming each field that has no value (or a None value).
        """
        return "".join(
            lit + (str(values[name]) if name is not None else "")
            for lit, name in self._expanded(values)
        )

    def split(self, *, share_first: bool = False, **values: Any) -> tuple[str, str]:
        """Split the rendered prompt into a prefix shared within a context and the rest.

        The prefix is the longest leading part that depends only on fields shared by all
        comparisons of one context (everything but ``{a}``, ``{b}``, ``{candidate}``; with
        ``share_first=True`` also ``{a}``, which is shared by every pair with the same first
        candidate). Whitespace at the end of the prefix is moved to the rest so that
        tokenisers see the same word boundaries. ``prefix + rest == render(**values)``.
        """
        segments = self._expanded(values)
        full = "".join(lit + (str(values[n]) if n is not None else "") for lit, n in segments)
        varying = {"b", "candidate"} | (set() if share_first else {"a"})
        parts = []
        for lit, name in segments:
            parts.append(lit)
            if name is None:
                continue
            if name in varying:
                break
            parts.append(str(values[name]))
        prefix = "".join(parts).rstrip()
        if not full.startswith(prefix):  # cannot happen: both come from the same segments
            raise AssertionError(f"template {self.id!r}: prefix is not a prefix of the prompt")
        return prefix, full[len(prefix) :]

    def specialise(self, **values: str) -> Template:
        """A copy with some fields of the text filled in as template text."""
        return dataclasses.replace(self, text=fill_partial(self.text, values))

    def for_attribute(self, attribute: str, domain: str = "summary", **overrides: str) -> Template:
        """The template with its attribute-level fields filled for ``attribute`` / ``domain``.

        What is left are data fields (``{context}``, ``{a}``, ``{b}``, ``{candidate}``,
        ``{reference}``); pass the result to :func:`check_fields` with the data's fields.
        """
        return self.specialise(**attribute_values(self, attribute, domain, **overrides))

    def parse_answer(self, text: Any) -> Parsed:
        """Parse a raw answer with this template's labels / scale and parsing settings."""
        if self.kind == "comparative":
            return parse_verdict(
                text,
                labels=self.labels,
                tie_labels=(self.tie_label,) if self.tie_label else (),
                aliases=self.parsing.get("aliases"),
            )
        return parse_likert(
            text,
            scale=self.scale,
            rule=self.parsing.get("rule", "strict"),
            drop=self.parsing.get("drop", ()),
        )

    # ------------------------------------------------------------------ identity

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping of the set keys (the format :func:`load_templates` reads)."""
        out: dict[str, Any] = {"id": self.id, "version": self.version, "kind": self.kind}
        if self.description:
            out["description"] = self.description
        if self.source:
            out["source"] = self.source
        out["text"] = self.text
        if self.kind == "comparative":
            out["labels"] = list(self.labels)
            if self.tie_label is not None:
                out["tie_label"] = self.tie_label
        else:
            out["scale"] = list(self.scale)
        for name in ("decoder_prefix", "answer_prefix"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.system is not None:
            out["system"] = self.system
        if self.parsing:
            out["parsing"] = _plain(self.parsing)
        if self.defaults:
            out["defaults"] = _plain(self.defaults)
        return out

    def key(self) -> str:
        """Stable hash of everything that changes the prompt or its reading (run-store key).

        Covers id, version, kind, text, labels, tie label, scale, prefixes, system message,
        defaults and parsing settings; not the description or source.
        """
        payload = self.to_dict()
        payload.pop("description", None)
        payload.pop("source", None)
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


__all__ = ["Template"]
