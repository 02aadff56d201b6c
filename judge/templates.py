"""Judge prompt templates: named fields, label words or a score scale, a stable key.

A :class:`Template` is the text a judge sees, with ``{field}`` placeholders. Data fields come
from the dataset (``{context}``, ``{a}``, ``{b}``, ``{candidate}``, ``{reference}``);
attribute fields come from the template's ``defaults`` for the attribute and domain being
judged (``{adjective}``, ``{comparative}``, ``{noun}``, ``{question}``, ``{definition}``, ...),
see :func:`attribute_values` and :meth:`Template.for_attribute`.

The built-in library (:func:`builtin_templates`, file ``judge/templates/builtin.yaml``)
reproduces the prompts of ../shared/PROMPTS.md; users load their own with
:func:`load_templates` (YAML or JSON, validated: unknown keys and unknown fields are errors
that name the culprit) and save them with :func:`dump_templates`.

Typical use by a runner::

    t = builtin_templates()["liusie-c1"].for_attribute("coherence", domain="summary")
    check_fields(t, {"context", "a", "b"})          # before any model call
    prefix, rest = t.split(context=c, a=x, b=y)    # prefix reusable across pairs
    parsed = t.parse_answer(raw_text)               # data.parsing rules for this template
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from data.parsing import LIKERT_RULES, Parsed, parse_likert, parse_verdict

__all__ = [
    "ATTRIBUTE_FIELDS",
    "DATA_FIELDS",
    "DOMAINS",
    "KINDS",
    "PER_COMPARISON_FIELDS",
    "Template",
    "TemplateError",
    "attribute_values",
    "builtin_templates",
    "comparative_of",
    "check_fields",
    "dump_templates",
    "load_templates",
    "missing_fields",
]

KINDS = ("comparative", "absolute")
DOMAINS = ("summary", "dialogue", "data-to-text", "story")

# Filled from the dataset for every prompt.
DATA_FIELDS = ("context", "a", "b", "candidate", "reference")
# Change from one comparison (or rated item) to the next within a context; everything else
# in a prompt is shared by all comparisons of one context and can be cached as a prefix.
PER_COMPARISON_FIELDS = ("a", "b", "candidate")
# Filled per attribute / domain by attribute_values(); the derived ones are computed there.
ATTRIBUTE_FIELDS = (
    "attribute",
    "adjective",
    "comparative",  # derived: "more <adjective>", or "better" for "good" (Liusie et al.)
    "noun",
    "noun_lower",  # derived from noun
    "criterion",  # derived: the attribute name, capitalised, unless defaults give one
    "criterion_lower",  # derived from criterion
    "question",
    "definition",
    "guidelines",
    "prompt_block",
)
KNOWN_FIELDS = frozenset(DATA_FIELDS + ATTRIBUTE_FIELDS)

_DEFAULT_SECTIONS = ("fixed", "by_attribute", "by_domain")
_PARSING_KEYS = {"comparative": ("aliases",), "absolute": ("rule", "drop")}
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*$")
_PLACEHOLDER = re.compile(r"(?<!\{)\{[A-Za-z_]\w*\}(?!\})")
_MAX_EXPANSION = 4
_BUILTIN_PATH = Path(__file__).resolve().parent / "templates" / "builtin.yaml"


class TemplateError(ValueError):
    """A template that cannot be used as written (bad key, unknown field, missing value)."""


def _closest(name: str, options: Iterable[str]) -> str:
    """ " (did you mean 'x'?)" for the nearest option, or ""."""
    options = sorted(options)
    # A shortened name ("tie" for "tie_label") is a likelier slip than a similar spelling.
    starts = [o for o in options if len(name) >= 3 and o.startswith(name) and o != name]
    match = starts[:1] or difflib.get_close_matches(name, options, n=1, cutoff=0.5)
    return f" (did you mean {match[0]!r}?)" if match else ""


@cache
def _segments(text: str) -> tuple[tuple[str, str | None], ...]:
    """(literal, field name or None) pairs of a template string; checks the syntax."""
    out = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise TemplateError(
            f"cannot read the placeholders in {text[:60]!r}...: {exc}; write literal braces as {{{{ and }}}}"
        ) from None
    for literal, name, spec, conversion in parsed:
        if name is not None:
            if name == "" or not name.isidentifier():
                raise TemplateError(
                    f"placeholder {{{name}}} is not a field name; use named fields such as {{context}}"
                )
            if spec or conversion:
                raise TemplateError(
                    f"placeholder {{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}"
                    " uses a conversion or format spec; write plain {field}"
                )
        out.append((literal, name))
    return tuple(out)


def _fields_of(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    seen: dict[str, None] = {}
    for _literal, name in _segments(text):
        if name is not None:
            seen.setdefault(name, None)
    return tuple(seen)


def _escape(literal: str) -> str:
    return literal.replace("{", "{{").replace("}", "}}")


def _fill_partial(text: str, values: Mapping[str, str]) -> str:
    """Insert ``values`` as template text; other fields stay placeholders."""
    out = []
    for lit, name in _segments(text):
        out.append(_escape(lit))
        if name is not None:
            out.append(values[name] if name in values else "{" + name + "}")
    return "".join(out)


def _plain(obj: Any) -> Any:
    """A JSON-able deep copy (tuples to lists) for hashing and dumping."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def comparative_of(adjective: str) -> str:
    """ "more coherent"; "better" for "good" and "better a continuation" for "good a
    continuation" (Liusie et al. replace "is more good" by "is better")."""
    adjective = adjective.strip()
    if adjective == "good" or adjective.startswith("good "):
        return "better" + adjective[4:]
    return "more " + adjective


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
        set_ = object.__setattr__  # frozen: normalise once here
        if not isinstance(self.id, str) or not _ID_RE.match(self.id):
            raise TemplateError(
                f"template id {self.id!r} must be a non-empty name of letters, digits, '.', '_', '-'"
            )
        where = f"template {self.id!r}"
        if isinstance(self.version, (int, float)) and not isinstance(self.version, bool):
            set_(self, "version", str(self.version))
        if not isinstance(self.version, str) or not self.version.strip():
            raise TemplateError(
                f"{where}: version must be a non-empty string, got {self.version!r}"
            )
        if self.kind not in KINDS:
            raise TemplateError(
                f"{where}: kind must be one of {KINDS}, got {self.kind!r}{_closest(str(self.kind), KINDS)}"
            )
        for name in ("text", "decoder_prefix", "answer_prefix", "description", "source"):
            if not isinstance(getattr(self, name), str):
                raise TemplateError(
                    f"{where}: {name} must be a string, got {getattr(self, name)!r}"
                )
        if not self.text.strip():
            raise TemplateError(f"{where}: text is empty")
        if self.system is not None and not isinstance(self.system, str):
            raise TemplateError(f"{where}: system must be a string or absent, got {self.system!r}")
        set_(self, "defaults", self._check_defaults(where))
        set_(self, "parsing", self._check_parsing_shape(where))

        # Backends send the prefixes and the system message as written, so a placeholder
        # there would reach the model unfilled.
        for part in ("decoder_prefix", "answer_prefix", "system"):
            found = _PLACEHOLDER.search(getattr(self, part) or "")
            if found:
                raise TemplateError(
                    f"{where}: {part} is sent to the model as written; it cannot use the field "
                    f"{found.group(0)} (only the text has fields)"
                )
        # Every placeholder must be a known field or one the defaults define.
        allowed = KNOWN_FIELDS | self._default_fields()
        try:
            names = _fields_of(self.text)
        except TemplateError as exc:
            raise TemplateError(f"{where}: text: {exc}") from None
        for name in names:
            if name not in allowed:
                raise TemplateError(
                    f"{where}: text uses unknown field {{{name}}}{_closest(name, allowed)}; "
                    f"known fields: {', '.join(sorted(KNOWN_FIELDS))}, or define it under defaults"
                )
        for section in self.defaults.values():
            for fname, values in section.items():
                texts = values.values() if isinstance(values, Mapping) else [values]
                for t in texts:
                    for name in _fields_of(t):
                        if name not in allowed:
                            raise TemplateError(
                                f"{where}: defaults for {fname!r} use unknown field {{{name}}}{_closest(name, allowed)}"
                            )

        text_fields = set(_fields_of(self.text))
        if self.kind == "comparative":
            labels = tuple(self.labels) if isinstance(self.labels, (list, tuple)) else self.labels
            set_(self, "labels", labels)
            if not isinstance(labels, tuple) or len(labels) != 2:
                raise TemplateError(
                    f"{where}: a comparative template needs exactly two labels, got {self.labels!r}"
                )
            words = list(labels) + ([self.tie_label] if self.tie_label is not None else [])
            for w in words:
                if not isinstance(w, str) or not w.strip():
                    raise TemplateError(f"{where}: labels must be non-empty strings, got {w!r}")
            if len(set(words)) != len(words):
                raise TemplateError(f"{where}: labels and tie_label must be distinct, got {words}")
            missing = [f for f in ("a", "b") if f not in text_fields]
            if missing:
                raise TemplateError(
                    f"{where}: a comparative template must show both candidates; text lacks "
                    + ", ".join("{" + f + "}" for f in missing)
                )
            if "candidate" in text_fields:
                raise TemplateError(
                    f"{where}: a comparative template shows {{a}} and {{b}}, not {{candidate}}"
                )
            if self.scale is not None:
                raise TemplateError(
                    f"{where}: scale is for absolute templates; comparative ones use labels"
                )
        else:
            # Labels mean nothing for a rating; the default pair is dropped, anything else is a mistake.
            if tuple(self.labels) == ("A", "B") or not self.labels:
                set_(self, "labels", ())
            else:
                raise TemplateError(
                    f"{where}: labels are for comparative templates; an absolute one uses scale"
                )
            if self.tie_label is not None:
                raise TemplateError(f"{where}: tie_label is for comparative templates")
            if self.scale is None:
                raise TemplateError(
                    f"{where}: an absolute template needs a scale, e.g. scale: [1, 5]"
                )
            try:
                lo, hi = self.scale
                if isinstance(lo, bool) or isinstance(hi, bool):
                    raise TypeError
                lo, hi = (v if isinstance(v, int) else float(v) for v in (lo, hi))
            except (TypeError, ValueError):
                raise TemplateError(
                    f"{where}: scale must be two numbers [lo, hi], got {self.scale!r}"
                ) from None
            if not lo < hi:
                raise TemplateError(f"{where}: scale must have lo < hi, got {self.scale!r}")
            set_(self, "scale", (lo, hi))
            if "candidate" not in text_fields:
                raise TemplateError(
                    f"{where}: an absolute template must show the rated text as {{candidate}}"
                )
            if text_fields & {"a", "b"}:
                raise TemplateError(
                    f"{where}: an absolute template rates one {{candidate}}; {{a}}/{{b}} are for comparative ones"
                )
        self._check_parsing_values(where)

    # ------------------------------------------------------------------ validation helpers

    def _check_defaults(self, where: str) -> dict[str, dict[str, Any]]:
        d = self.defaults
        if d is None:
            return {}
        if not isinstance(d, Mapping):
            raise TemplateError(
                f"{where}: defaults must be a mapping with keys {_DEFAULT_SECTIONS}"
            )
        out: dict[str, dict[str, Any]] = {}
        for section, content in d.items():
            if section not in _DEFAULT_SECTIONS:
                raise TemplateError(
                    f"{where}: unknown defaults section {section!r}{_closest(str(section), _DEFAULT_SECTIONS)}; "
                    f"use {', '.join(_DEFAULT_SECTIONS)}"
                )
            if not isinstance(content, Mapping):
                raise TemplateError(f"{where}: defaults.{section} must map field names to values")
            out[section] = {}
            for fname, value in content.items():
                if not isinstance(fname, str) or not fname.isidentifier():
                    raise TemplateError(
                        f"{where}: defaults.{section} key {fname!r} is not a field name"
                    )
                if fname in DATA_FIELDS:
                    raise TemplateError(
                        f"{where}: {{{fname}}} comes from the data; it cannot have a default"
                    )
                if section == "fixed":
                    if not isinstance(value, str):
                        raise TemplateError(
                            f"{where}: defaults.fixed.{fname} must be text, got {value!r}"
                        )
                    out[section][fname] = value
                    continue
                if not isinstance(value, Mapping):
                    raise TemplateError(
                        f"{where}: defaults.{section}.{fname} must map "
                        f"{'attributes' if section == 'by_attribute' else 'domains'} to text"
                    )
                inner = {}
                for key, text in value.items():
                    if not isinstance(text, str):
                        raise TemplateError(
                            f"{where}: defaults.{section}.{fname}.{key} must be text, got {text!r}"
                        )
                    key = str(key)
                    if section == "by_domain" and key not in DOMAINS and key != "*":
                        raise TemplateError(
                            f"{where}: defaults.by_domain.{fname} has unknown domain {key!r}"
                            f"{_closest(key, DOMAINS)}; domains: {', '.join(DOMAINS)}"
                        )
                    inner[key if key == "*" else key.strip().lower()] = text
                out[section][fname] = inner
        return out

    def _default_fields(self) -> set[str]:
        return {f for section in self.defaults.values() for f in section}

    def _check_parsing_shape(self, where: str) -> dict[str, Any]:
        p = self.parsing
        if p is None:
            return {}
        if not isinstance(p, Mapping):
            raise TemplateError(f"{where}: parsing must be a mapping")
        valid = _PARSING_KEYS.get(self.kind, ())
        for key in p:
            if key not in valid:
                raise TemplateError(
                    f"{where}: unknown parsing key {key!r} for a {self.kind} template"
                    f"{_closest(str(key), valid)}; valid: {', '.join(valid)}"
                )
        out = dict(p)
        if "aliases" in out:
            if not isinstance(out["aliases"], Mapping):
                raise TemplateError(
                    f"{where}: parsing.aliases must map answer words to A, B or tie"
                )
            out["aliases"] = {str(k): str(v) for k, v in out["aliases"].items()}
        if "drop" in out:
            drop = out["drop"]
            if isinstance(drop, str) or not all(isinstance(s, str) and s for s in drop):
                raise TemplateError(
                    f"{where}: parsing.drop must be a list of non-empty strings, got {drop!r}"
                )
            out["drop"] = tuple(drop)
        return out

    def _check_parsing_values(self, where: str) -> None:
        rule = self.parsing.get("rule")
        if rule is not None and rule not in LIKERT_RULES:
            raise TemplateError(
                f"{where}: parsing.rule {rule!r} is not one of {LIKERT_RULES}{_closest(str(rule), LIKERT_RULES)}"
            )
        targets = {"A", "B", "tie", *self.labels} | ({self.tie_label} if self.tie_label else set())
        for alias, target in self.parsing.get("aliases", {}).items():
            if target not in targets:
                raise TemplateError(
                    f"{where}: parsing alias {alias!r} maps to {target!r}; map it to A, B, tie or a label"
                )

    # ------------------------------------------------------------------ fields and rendering

    @property
    def fields(self) -> tuple[str, ...]:
        """Fields of the text in order of first appearance (``string.Formatter`` parse).

        Fields reached only through an attribute value (the Chiang & Lee relevance block
        carries ``{context}``) appear after :meth:`for_attribute`.
        """
        return _fields_of(self.text)

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
            names = _fields_of(text)
            fill = {
                n: str(values[n])
                for n in names
                if n not in DATA_FIELDS and values.get(n) is not None
            }
            if not fill:
                break
            try:
                text = _fill_partial(text, fill)
            except TemplateError as exc:
                raise TemplateError(
                    f"template {self.id!r}: a field value is not valid template text: {exc}"
                ) from None
        else:
            raise TemplateError(
                f"template {self.id!r}: field values keep bringing new fields after "
                f"{_MAX_EXPANSION} rounds; does a value refer to its own field?"
            )
        segments = _segments(text)
        missing = [n for _lit, n in segments if n is not None and values.get(n) is None]
        if missing:
            missing = list(dict.fromkeys(missing))
            given = ", ".join(sorted(k for k, v in values.items() if v is not None)) or "nothing"
            raise TemplateError(
                f"template {self.id!r} needs "
                + ", ".join("{" + f + "}" for f in missing)
                + f"; given: {given}"
                + _hint_for(missing)
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
        return dataclasses.replace(self, text=_fill_partial(self.text, values))

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


# ---------------------------------------------------------------------- attribute values


def _hint_for(missing: Sequence[str]) -> str:
    attr = [f for f in missing if f in ATTRIBUTE_FIELDS]
    data = [f for f in missing if f in DATA_FIELDS]
    hints = []
    if attr:
        hints.append("fill attribute fields with template.for_attribute(attribute, domain)")
    if data:
        hints.append("data fields come from the dataset (context, candidates, reference)")
    return ("; " + "; ".join(hints)) if hints else ""


def attribute_values(
    template: Template, attribute: str, domain: str = "summary", **overrides: str
) -> dict[str, str]:
    """The attribute-level field values of ``template`` for ``attribute`` and ``domain``.

    Parameters
    ----------
    template : Template
    attribute : str
        Attribute being judged ("coherence", "relevance", ...); matched case-insensitively
        against the template's ``defaults.by_attribute`` maps ("*" is a catch-all).
    domain : {"summary", "dialogue", "data-to-text", "story"}
        Chooses the ``defaults.by_domain`` values ("Summary" vs "Response").
    **overrides : str
        Values that win over the defaults (template text).

    Returns
    -------
    dict
        ``attribute`` and every default that applies, plus the derived ``comparative``
        ("more coherent", "better"), ``noun_lower``, ``criterion`` ("Coherence") and
        ``criterion_lower``.

    Raises
    ------
    TemplateError
        When the template uses a field that has no value for this attribute / domain (naming
        the attributes it knows), or for an unknown domain.
    """
    if domain not in DOMAINS:
        raise TemplateError(
            f"domain must be one of {DOMAINS}, got {domain!r}{_closest(str(domain), DOMAINS)}"
        )
    if not isinstance(attribute, str) or not attribute.strip():
        raise TemplateError(f"attribute must be a non-empty string, got {attribute!r}")
    key = attribute.strip().lower()
    d = template.defaults
    out: dict[str, str] = {"attribute": attribute.strip()}
    out.update(d.get("fixed", {}))
    unknown: dict[str, list[str]] = {}
    for fname, by_domain in d.get("by_domain", {}).items():
        value = by_domain.get(domain, by_domain.get("*"))
        if value is not None:
            out[fname] = value
        else:
            unknown[fname] = sorted(by_domain)
    for fname, by_attr in d.get("by_attribute", {}).items():
        value = by_attr.get(key, by_attr.get("*"))
        if value is not None:
            out[fname] = value
        elif fname not in out:
            unknown[fname] = sorted(by_attr)
    out.update(overrides)
    if "adjective" in out and "comparative" not in overrides:
        out["comparative"] = comparative_of(out["adjective"])
    if "noun" in out and "noun_lower" not in overrides:
        out["noun_lower"] = out["noun"].lower()
    out.setdefault("criterion", key.replace("_", " ").capitalize())
    if "criterion_lower" not in overrides:
        out["criterion_lower"] = out["criterion"].lower()

    # Fields the template needs (directly, or through derived ones) that are still unfilled.
    needed = set(template.fields)
    needed |= {f for name in list(needed) for f in _fields_of(out.get(name, ""))}
    if "comparative" in needed and "comparative" not in out:
        needed.add("adjective")
    if "noun_lower" in needed and "noun_lower" not in out:
        needed.add("noun")
    for fname in sorted(needed):
        if fname in out or fname in DATA_FIELDS:
            continue
        if fname in unknown:
            where = "domain" if fname in d.get("by_domain", {}) else "attribute"
            raise TemplateError(
                f"template {template.id!r} has no {fname!r} for {where} "
                f"{(domain if where == 'domain' else attribute)!r}; it knows: {', '.join(unknown[fname])}"
                f"{_closest(key, unknown[fname])}. Pick one of those or pass {fname}=... explicitly"
            )
        if fname in ATTRIBUTE_FIELDS or fname in template._default_fields():
            raise TemplateError(
                f"template {template.id!r} uses {{{fname}}} but its defaults give no value for it; "
                f"pass {fname}=... explicitly"
            )
    return out


def missing_fields(template: Template, available: Iterable[str]) -> list[str]:
    """Fields of ``template`` (text, system and prefixes) that ``available`` does not cover."""
    have = set(available)
    return [f for f in template.fields if f not in have]


def check_fields(template: Template, available: Iterable[str]) -> None:
    """Fail before any work is spent when the data cannot fill every field of ``template``.

    Parameters
    ----------
    template : Template
        Usually ``template.for_attribute(attribute, domain)``, so that only data fields remain.
    available : set of str
        Fields the data (and any values the caller passes) can fill.

    Raises
    ------
    TemplateError
        Naming each field that cannot be filled.
    """
    have = set(available)
    missing = missing_fields(template, have)
    if missing:
        names = ", ".join("{" + f + "}" for f in missing)
        raise TemplateError(
            f"template {template.id!r} (version {template.version}) needs {names}, which the data "
            f"cannot fill; available: {', '.join(sorted(have)) or 'nothing'}{_hint_for(missing)}"
            + "".join(_closest(f, have) for f in missing if f not in DATA_FIELDS)
        )


# ---------------------------------------------------------------------- loading and saving

_TEMPLATE_KEYS = tuple(f.name for f in dataclasses.fields(Template))
_REQUIRED_KEYS = ("id", "version", "kind", "text")


def _looks_like_path(obj: Any) -> bool:
    if isinstance(obj, os.PathLike):
        return True
    if not isinstance(obj, str) or "\n" in obj or obj.lstrip().startswith(("{", "[")):
        return False
    try:
        return Path(obj).is_file()
    except OSError:  # e.g. a one-line YAML document longer than a file name may be
        return False


def load_templates(path_or_text: str | os.PathLike, fmt: str | None = None) -> dict[str, Template]:
    """Read templates from a YAML or JSON file or string, validating every entry.

    Parameters
    ----------
    path_or_text : path or str
        A file path, or the YAML / JSON text itself.
    fmt : {"yaml", "json"}, optional
        Defaults to the file suffix (.json -> json), else yaml.

    The document is a list of template mappings, a mapping with a ``templates`` list (other
    top-level keys must start with "_", e.g. to hold YAML anchors), or one template mapping.
    Keys are those of :class:`Template`.

    Returns
    -------
    dict id -> Template, in file order.

    Raises
    ------
    TemplateError
        For unreadable text, an unknown key (naming it and the closest valid one), a missing
        required key, an unknown field in a text, a duplicate id, or any rule of
        :class:`Template` (comparative: {a} and {b}, two distinct labels; absolute: a scale).
    """
    origin = "text"
    if _looks_like_path(path_or_text):
        path = Path(path_or_text)
        origin = str(path)
        if fmt is None:
            fmt = "json" if path.suffix.lower() == ".json" else "yaml"
        try:
            content = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise TemplateError(f"cannot read templates from {path}: {exc}") from None
    else:
        content = str(path_or_text)
        fmt = fmt or "yaml"
    if fmt not in ("yaml", "json"):
        raise TemplateError(f"fmt must be 'yaml' or 'json', got {fmt!r}")
    try:
        if fmt == "json":
            doc = json.loads(content)
        else:
            import yaml  # only needed here

            doc = yaml.safe_load(content)
    except Exception as exc:  # yaml.YAMLError / json.JSONDecodeError: report, do not guess
        raise TemplateError(f"cannot parse {fmt} templates from {origin}: {exc}") from None

    if isinstance(doc, Mapping) and "templates" in doc:
        extra = [k for k in doc if k != "templates" and not str(k).startswith("_")]
        if extra:
            raise TemplateError(
                f"{origin}: unknown top-level key {extra[0]!r}; put templates under 'templates' "
                "(keys starting with '_' may hold YAML anchors)"
            )
        entries = doc["templates"]
    elif isinstance(doc, Mapping):
        entries = [doc]
    else:
        entries = doc
    if not isinstance(entries, list) or not entries:
        raise TemplateError(f"{origin}: expected a list of templates, got {type(entries).__name__}")

    out: dict[str, Template] = {}
    for i, entry in enumerate(entries):
        label = f"{origin}: template #{i + 1}"
        if not isinstance(entry, Mapping):
            raise TemplateError(f"{label} must be a mapping of keys, got {type(entry).__name__}")
        if "id" in entry:
            label += f" ({entry['id']!r})"
        for k in entry:
            if k not in _TEMPLATE_KEYS:
                raise TemplateError(
                    f"{label}: unknown key {k!r}{_closest(str(k), _TEMPLATE_KEYS)}; "
                    f"valid keys: {', '.join(_TEMPLATE_KEYS)}"
                )
        missing = [k for k in _REQUIRED_KEYS if k not in entry]
        if missing:
            raise TemplateError(f"{label}: missing required key(s) {', '.join(missing)}")
        kwargs = dict(entry)
        for k in ("labels", "scale"):
            if isinstance(kwargs.get(k), list):
                kwargs[k] = tuple(kwargs[k])
        try:
            template = Template(**kwargs)
        except TemplateError as exc:
            raise TemplateError(f"{label}: {exc}") from None
        if template.id in out:
            raise TemplateError(f"{label}: duplicate template id {template.id!r}")
        out[template.id] = template
    return out


def dump_templates(
    templates: Mapping[str, Template] | Iterable[Template], fmt: str = "yaml"
) -> str:
    """Serialise templates in the format :func:`load_templates` reads (round-trips exactly)."""
    items = list(templates.values()) if isinstance(templates, Mapping) else list(templates)
    for t in items:
        if not isinstance(t, Template):
            raise TemplateError(f"dump_templates expects Template objects, got {type(t).__name__}")
    doc = {"templates": [t.to_dict() for t in items]}
    if fmt == "json":
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if fmt != "yaml":
        raise TemplateError(f"fmt must be 'yaml' or 'json', got {fmt!r}")
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        # Multi-line prompts read best as literal blocks; PyYAML falls back to quoting when a
        # block cannot represent the string exactly (e.g. trailing spaces).
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


@cache
def _builtin() -> tuple[Template, ...]:
    return tuple(load_templates(_BUILTIN_PATH).values())


def builtin_templates() -> dict[str, Template]:
    """The built-in library (PROMPTS.md), id -> Template; a fresh dict on every call."""
    return {t.id: t for t in _builtin()}
