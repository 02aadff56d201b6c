"""The rules every template obeys, checked once when it is made (``Template.__post_init__``).

A template that breaks one raises :class:`~judge.templates.fields.TemplateError` naming the
template, the key or field at fault and, where there is one, the closest valid name. The
template is frozen: :func:`check_template` normalises it in place (versions to text, label
lists to tuples, scales to numbers, defaults and parsing to checked dicts).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from data.parsing import LIKERT_RULES
from judge.templates.fields import (
    DATA_FIELDS,
    DOMAINS,
    KINDS,
    KNOWN_FIELDS,
    TemplateError,
    closest,
    default_fields,
    fields_of,
)

_DEFAULT_SECTIONS = ("fixed", "by_attribute", "by_domain")
_PARSING_KEYS = {"comparative": ("aliases",), "absolute": ("rule", "drop")}
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*$")
_PLACEHOLDER = re.compile(r"(?<!\{)\{[A-Za-z_]\w*\}(?!\})")


def check_template(t) -> None:
    """Check every rule of template ``t`` and normalise it in place (it is frozen)."""
    where = _check_identity(t)
    set_ = object.__setattr__
    set_(t, "defaults", _check_defaults(t, where))
    set_(t, "parsing", _check_parsing_shape(t, where))
    _check_placeholders(t, where)
    text_fields = set(fields_of(t.text))
    if t.kind == "comparative":
        _check_comparative(t, where, text_fields)
    else:
        _check_absolute(t, where, text_fields)
    _check_parsing_values(t, where)


def _check_identity(t) -> str:
    """Id, version, kind and the plain-text parts; returns how messages name the template."""
    set_ = object.__setattr__
    if not isinstance(t.id, str) or not _ID_RE.match(t.id):
        raise TemplateError(
            f"template id {t.id!r} must be a non-empty name of letters, digits, '.', '_', '-'"
        )
    where = f"template {t.id!r}"
    if isinstance(t.version, (int, float)) and not isinstance(t.version, bool):
        set_(t, "version", str(t.version))
    if not isinstance(t.version, str) or not t.version.strip():
        raise TemplateError(f"{where}: version must be a non-empty string, got {t.version!r}")
    if t.kind not in KINDS:
        raise TemplateError(
            f"{where}: kind must be one of {KINDS}, got {t.kind!r}{closest(str(t.kind), KINDS)}"
        )
    for name in ("text", "decoder_prefix", "answer_prefix", "description", "source"):
        if not isinstance(getattr(t, name), str):
            raise TemplateError(f"{where}: {name} must be a string, got {getattr(t, name)!r}")
    if not t.text.strip():
        raise TemplateError(f"{where}: text is empty")
    if t.system is not None and not isinstance(t.system, str):
        raise TemplateError(f"{where}: system must be a string or absent, got {t.system!r}")
    return where


def _check_placeholders(t, where: str) -> None:
    """Fields only in the text and the defaults, and only known or defined ones."""
    # Backends send the prefixes and the system message as written, so a placeholder
    # there would reach the model unfilled.
    for part in ("decoder_prefix", "answer_prefix", "system"):
        found = _PLACEHOLDER.search(getattr(t, part) or "")
        if found:
            raise TemplateError(
                f"{where}: {part} is sent to the model as written; it cannot use the field "
                f"{found.group(0)} (only the text has fields)"
            )
    # Every placeholder must be a known field or one the defaults define.
    allowed = KNOWN_FIELDS | default_fields(t.defaults)
    try:
        names = fields_of(t.text)
    except TemplateError as exc:
        raise TemplateError(f"{where}: text: {exc}") from None
    for name in names:
        if name not in allowed:
            raise TemplateError(
                f"{where}: text uses unknown field {{{name}}}{closest(name, allowed)}; "
                f"known fields: {', '.join(sorted(KNOWN_FIELDS))}, or define it under defaults"
            )
    for section in t.defaults.values():
        for fname, values in section.items():
            texts = values.values() if isinstance(values, Mapping) else [values]
            for text in texts:
                for name in fields_of(text):
                    if name not in allowed:
                        raise TemplateError(
                            f"{where}: defaults for {fname!r} use unknown field {{{name}}}{closest(name, allowed)}"
                        )


def _check_comparative(t, where: str, text_fields: set[str]) -> None:
    """Two distinct labels (and a tie label), both candidates shown, no scale."""
    set_ = object.__setattr__
    labels = tuple(t.labels) if isinstance(t.labels, (list, tuple)) else t.labels
    set_(t, "labels", labels)
    if not isinstance(labels, tuple) or len(labels) != 2:
        raise TemplateError(
            f"{where}: a comparative template needs exactly two labels, got {t.labels!r}"
        )
    words = list(labels) + ([t.tie_label] if t.tie_label is not None else [])
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
    if t.scale is not None:
        raise TemplateError(
            f"{where}: scale is for absolute templates; comparative ones use labels"
        )


def _check_absolute(t, where: str, text_fields: set[str]) -> None:
    """A numeric scale lo < hi, one candidate shown, no labels."""
    set_ = object.__setattr__
    # Labels mean nothing for a rating; the default pair is dropped, anything else is a mistake.
    if tuple(t.labels) == ("A", "B") or not t.labels:
        set_(t, "labels", ())
    else:
        raise TemplateError(
            f"{where}: labels are for comparative templates; an absolute one uses scale"
        )
    if t.tie_label is not None:
        raise TemplateError(f"{where}: tie_label is for comparative templates")
    if t.scale is None:
        raise TemplateError(f"{where}: an absolute template needs a scale, e.g. scale: [1, 5]")
    try:
        lo, hi = t.scale
        if isinstance(lo, bool) or isinstance(hi, bool):
            raise TypeError
        lo, hi = (v if isinstance(v, int) else float(v) for v in (lo, hi))
    except (TypeError, ValueError):
        raise TemplateError(
            f"{where}: scale must be two numbers [lo, hi], got {t.scale!r}"
        ) from None
    if not lo < hi:
        raise TemplateError(f"{where}: scale must have lo < hi, got {t.scale!r}")
    set_(t, "scale", (lo, hi))
    if "candidate" not in text_fields:
        raise TemplateError(
            f"{where}: an absolute template must show the rated text as {{candidate}}"
        )
    if text_fields & {"a", "b"}:
        raise TemplateError(
            f"{where}: an absolute template rates one {{candidate}}; {{a}}/{{b}} are for comparative ones"
        )


def _check_defaults(t, where: str) -> dict[str, dict[str, Any]]:
    d = t.defaults
    if d is None:
        return {}
    if not isinstance(d, Mapping):
        raise TemplateError(f"{where}: defaults must be a mapping with keys {_DEFAULT_SECTIONS}")
    out: dict[str, dict[str, Any]] = {}
    for section, content in d.items():
        if section not in _DEFAULT_SECTIONS:
            raise TemplateError(
                f"{where}: unknown defaults section {section!r}{closest(str(section), _DEFAULT_SECTIONS)}; "
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
                        f"{closest(key, DOMAINS)}; domains: {', '.join(DOMAINS)}"
                    )
                inner[key if key == "*" else key.strip().lower()] = text
            out[section][fname] = inner
    return out


def _check_parsing_shape(t, where: str) -> dict[str, Any]:
    p = t.parsing
    if p is None:
        return {}
    if not isinstance(p, Mapping):
        raise TemplateError(f"{where}: parsing must be a mapping")
    valid = _PARSING_KEYS.get(t.kind, ())
    for key in p:
        if key not in valid:
            raise TemplateError(
                f"{where}: unknown parsing key {key!r} for a {t.kind} template"
                f"{closest(str(key), valid)}; valid: {', '.join(valid)}"
            )
    out = dict(p)
    if "aliases" in out:
        if not isinstance(out["aliases"], Mapping):
            raise TemplateError(f"{where}: parsing.aliases must map answer words to A, B or tie")
        out["aliases"] = {str(k): str(v) for k, v in out["aliases"].items()}
    if "drop" in out:
        drop = out["drop"]
        if isinstance(drop, str) or not all(isinstance(s, str) and s for s in drop):
            raise TemplateError(
                f"{where}: parsing.drop must be a list of non-empty strings, got {drop!r}"
            )
        out["drop"] = tuple(drop)
    return out


def _check_parsing_values(t, where: str) -> None:
    rule = t.parsing.get("rule")
    if rule is not None and rule not in LIKERT_RULES:
        raise TemplateError(
            f"{where}: parsing.rule {rule!r} is not one of {LIKERT_RULES}{closest(str(rule), LIKERT_RULES)}"
        )
    targets = {"A", "B", "tie", *t.labels} | ({t.tie_label} if t.tie_label else set())
    for alias, target in t.parsing.get("aliases", {}).items():
        if target not in targets:
            raise TemplateError(
                f"{where}: parsing alias {alias!r} maps to {target!r}; map it to A, B, tie or a label"
            )


__all__ = ["check_template"]
