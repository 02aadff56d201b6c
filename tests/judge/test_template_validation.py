"""The rules every template obeys, each broken once: the message names the culprit (and the
closest valid name); fields a template defines under its defaults are allowed."""

from __future__ import annotations

import json

import pytest

from judge.templates import TemplateError, load_templates


def _entry(**over):
    base = {"id": "t", "version": "1", "kind": "comparative", "text": "{context}: {a} vs {b}"}
    base.update(over)
    return json.dumps([{k: v for k, v in base.items() if v is not None}])


@pytest.mark.parametrize(
    ("doc", "pattern"),
    [
        (_entry(lables=["A", "B"]), r"unknown key 'lables' \(did you mean 'labels'\?\)"),
        (_entry(tie="C"), r"unknown key 'tie' \(did you mean 'tie_label'\?\)"),
        (
            _entry(text="{contxt}: {a} vs {b}"),
            r"unknown field \{contxt\} \(did you mean 'context'\?\)",
        ),
        (_entry(text="{context}: {a} only"), r"must show both candidates; text lacks \{b\}"),
        (_entry(text="{candidate}"), r"text lacks \{a\}, \{b\}"),
        (_entry(labels=["A", "A"]), "must be distinct"),
        (_entry(labels=["A", ""]), "non-empty strings"),
        (_entry(labels=["A", "B", "C"]), "exactly two labels"),
        (_entry(labels=["A", "B"], tie_label="A"), "must be distinct"),
        (_entry(kind="absolute", text="Rate {candidate}"), "needs a scale"),
        (_entry(kind="absolute", text="Rate {candidate}", scale=[5, 1]), "lo < hi"),
        (
            _entry(kind="absolute", text="Rate {candidate}", scale=[1, 5], labels=["x", "y"]),
            "labels are for comparative",
        ),
        (
            _entry(kind="absolute", text="Rate {a} and {b}", scale=[1, 5]),
            r"must show the rated text as \{candidate\}",
        ),
        (_entry(kind="pairwise"), r"kind must be one of"),
        (_entry(id=None), r"missing required key\(s\) id"),
        (_entry(text="{context}: {a:>5} vs {b}"), "format spec"),
        (_entry(text="{}: {a} vs {b}"), "not a field name"),
        (_entry(text="{context}: {a} vs {b} {"), "literal braces"),
        (_entry(parsing={"rule": "strict"}), r"unknown parsing key 'rule' for a comparative"),
        (
            _entry(kind="absolute", text="{candidate}", scale=[1, 5], parsing={"rule": "median"}),
            "not one of",
        ),
        (_entry(parsing={"aliases": {"#1": "Z"}}), "maps to 'Z'"),
        (
            _entry(defaults={"per_attribute": {}}),
            r"unknown defaults section 'per_attribute' \(did you mean 'by_attribute'\?\)",
        ),
        (_entry(defaults={"by_domain": {"noun": {"poem": "Poem"}}}), "unknown domain 'poem'"),
        (_entry(defaults={"fixed": {"context": "x"}}), "comes from the data"),
        (_entry(id="has space"), "template id"),
        ('{"templates": [], "extra": 1}', "unknown top-level key 'extra'"),
        ("[]", "expected a list of templates"),
        ("templates: [\n  - id: x\n    text: 'unclosed", "cannot parse yaml"),
    ],
)
def test_load_templates_rejects_bad_templates(doc, pattern):
    fmt = "json" if doc.lstrip().startswith(("[", "{")) else "yaml"
    with pytest.raises(TemplateError, match=pattern):
        load_templates(doc, fmt=fmt)


def test_custom_fields_defined_in_defaults_are_allowed():
    doc = _entry(
        text="{context}: {a} vs {b}, judge {aspect}",
        defaults={"by_attribute": {"aspect": {"*": "quality"}}},
    )
    t = load_templates(doc, fmt="json")["t"]
    assert (
        t.for_attribute("anything").render(context="c", a="x", b="y") == "c: x vs y, judge quality"
    )
