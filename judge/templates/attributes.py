"""Attribute-level field values and the checks that the data can fill a template.

:func:`attribute_values` fills a template's attribute fields (``{adjective}``,
``{comparative}``, ``{noun}``, ``{question}``, ``{definition}``, ...) for the attribute and
domain judged, from its ``defaults``; :func:`check_fields` says, before any model call, which
fields the data cannot fill.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from judge.templates.fields import (
    ATTRIBUTE_FIELDS,
    DATA_FIELDS,
    DOMAINS,
    TemplateError,
    closest,
    default_fields,
    fields_of,
    hint_for,
)


class TemplateLike(Protocol):
    """What these functions read of a template: its identity, the fields it uses and its
    defaults. A :class:`judge.templates.template.Template` has them (it calls
    :func:`attribute_values` for :meth:`~judge.templates.template.Template.for_attribute`, so
    this module does not import it)."""

    @property
    def id(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def fields(self) -> tuple[str, ...]: ...

    @property
    def defaults(self) -> Mapping[str, Any]: ...


def comparative_of(adjective: str) -> str:
    """ "more coherent"; "better" for "good" and "better a continuation" for "good a
    continuation" (Liusie et al. replace "is more good" by "is better")."""
    adjective = adjective.strip()
    if adjective == "good" or adjective.startswith("good "):
        return "better" + adjective[4:]
    return "more " + adjective


def attribute_values(
    template: TemplateLike, attribute: str, domain: str = "summary", **overrides: str
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
            f"domain must be one of {DOMAINS}, got {domain!r}{closest(str(domain), DOMAINS)}"
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
    needed |= {f for name in list(needed) for f in fields_of(out.get(name, ""))}
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
                f"{closest(key, unknown[fname])}. Pick one of those or pass {fname}=... explicitly"
            )
        if fname in ATTRIBUTE_FIELDS or fname in default_fields(template.defaults):
            raise TemplateError(
                f"template {template.id!r} uses {{{fname}}} but its defaults give no value for it; "
                f"pass {fname}=... explicitly"
            )
    return out


def missing_fields(template: TemplateLike, available: Iterable[str]) -> list[str]:
    """Fields of ``template`` (text, system and prefixes) that ``available`` does not cover."""
    have = set(available)
    return [f for f in template.fields if f not in have]


def check_fields(template: TemplateLike, available: Iterable[str]) -> None:
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
            f"cannot fill; available: {', '.join(sorted(have)) or 'nothing'}{hint_for(missing)}"
            + "".join(closest(f, have) for f in missing if f not in DATA_FIELDS)
        )


__all__ = ["attribute_values", "check_fields", "comparative_of", "missing_fields"]
