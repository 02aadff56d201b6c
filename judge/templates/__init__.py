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

Modules:

- :mod:`~judge.templates.template`: :class:`Template` (rendering, the shared prefix, the key);
- :mod:`~judge.templates.validation`: the rules a template obeys, checked when it is made;
- :mod:`~judge.templates.fields`: field names, the ``{field}`` syntax, :class:`TemplateError`;
- :mod:`~judge.templates.attributes`: attribute values and the checks that data fills a
  template (:func:`attribute_values`, :func:`check_fields`);
- :mod:`~judge.templates.files`: YAML / JSON load and dump, the built-in library.

The import path ``judge.templates`` offers every public name.
"""

from judge.templates.attributes import (
    attribute_values,
    check_fields,
    comparative_of,
    missing_fields,
)
from judge.templates.fields import (
    ATTRIBUTE_FIELDS,
    DATA_FIELDS,
    DOMAINS,
    KINDS,
    KNOWN_FIELDS,
    PER_COMPARISON_FIELDS,
    TemplateError,
)
from judge.templates.files import builtin_templates, dump_templates, load_templates
from judge.templates.template import Template

__all__ = [
    "ATTRIBUTE_FIELDS",
    "DATA_FIELDS",
    "DOMAINS",
    "KINDS",
    "KNOWN_FIELDS",
    "PER_COMPARISON_FIELDS",
    "Template",
    "TemplateError",
    "attribute_values",
    "builtin_templates",
    "check_fields",
    "comparative_of",
    "dump_templates",
    "load_templates",
    "missing_fields",
]
