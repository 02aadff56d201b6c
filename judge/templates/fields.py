"""Fields of template texts: the known names, the ``{field}`` syntax and its errors.

Data fields come from the dataset (``{context}``, ``{a}``, ``{b}``, ``{candidate}``,
``{reference}``); attribute fields come from a template's ``defaults`` for the attribute and
domain being judged (see :mod:`judge.templates.attributes`).
"""

from __future__ import annotations

import difflib
import string
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

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


class TemplateError(ValueError):
    """A template that cannot be used as written (bad key, unknown field, missing value)."""


def closest(name: str, options: Iterable[str]) -> str:
    """ " (did you mean 'x'?)" for the nearest option, or ""."""
    options = sorted(options)
    # A shortened name ("tie" for "tie_label") is a likelier slip than a similar spelling.
    starts = [o for o in options if len(name) >= 3 and o.startswith(name) and o != name]
    match = starts[:1] or difflib.get_close_matches(name, options, n=1, cutoff=0.5)
    return f" (did you mean {match[0]!r}?)" if match else ""


@cache
def text_segments(text: str) -> tuple[tuple[str, str | None], ...]:
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


def fields_of(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    seen: dict[str, None] = {}
    for _literal, name in text_segments(text):
        if name is not None:
            seen.setdefault(name, None)
    return tuple(seen)


def escape(literal: str) -> str:
    return literal.replace("{", "{{").replace("}", "}}")


def fill_partial(text: str, values: Mapping[str, str]) -> str:
    """Insert ``values`` as template text; other fields stay placeholders."""
    out = []
    for lit, name in text_segments(text):
        out.append(escape(lit))
        if name is not None:
            out.append(values[name] if name in values else "{" + name + "}")
    return "".join(out)


def default_fields(defaults: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """Every field a template's (checked) ``defaults`` give a value for."""
    return {f for section in defaults.values() for f in section}


def hint_for(missing: Sequence[str]) -> str:
    attr = [f for f in missing if f in ATTRIBUTE_FIELDS]
    data = [f for f in missing if f in DATA_FIELDS]
    hints = []
    if attr:
        hints.append("fill attribute fields with template.for_attribute(attribute, domain)")
    if data:
        hints.append("data fields come from the dataset (context, candidates, reference)")
    return ("; " + "; ".join(hints)) if hints else ""
