"""Templates from YAML / JSON files and strings, and back: user templates, duplicate ids, the
built-in library round trip."""

from __future__ import annotations

import json

import pytest

from judge.templates import TemplateError, builtin_templates, dump_templates, load_templates

B = builtin_templates()

GOOD_YAML = """
templates:
  - id: my-pairwise
    version: 2
    kind: comparative
    text: |-
      Context: {context}
      Output (a): {a}
      Output (b): {b}
      Which output is {tone}? Answer (a) or (b).
    labels: [a, b]
    defaults:
      fixed: {tone: better}
  - id: my-rating
    version: "1"
    kind: absolute
    text: "Rate {candidate} from 0 to 1 for {attribute}."
    scale: [0, 1]
    parsing: {rule: last}
"""


def test_load_user_templates_yaml_json_and_file(tmp_path):
    ts = load_templates(GOOD_YAML)
    assert list(ts) == ["my-pairwise", "my-rating"]
    t = ts["my-pairwise"]
    assert t.version == "2" and t.labels == ("a", "b")
    assert (
        t.for_attribute("x")
        .render(context="c", a="1", b="2")
        .endswith("Which output is better? Answer (a) or (b).")
    )
    assert t.parse_answer("Output (b)").value == "B"
    r = ts["my-rating"]
    assert r.scale == (0, 1) and r.labels == ()
    assert r.parse_answer("0.5 or maybe 1").value == 1.0  # rule "last"
    as_json = json.dumps({"templates": [x.to_dict() for x in ts.values()]})
    assert load_templates(as_json, fmt="json") == ts
    path = tmp_path / "mine.yaml"
    path.write_text(GOOD_YAML, encoding="utf-8")
    assert load_templates(path) == ts
    jpath = tmp_path / "mine.json"
    jpath.write_text(as_json, encoding="utf-8")
    assert load_templates(str(jpath)) == ts
    # a single mapping is one template
    one = load_templates("id: x\nversion: '1'\nkind: comparative\ntext: '{a} {b}'\n")
    assert list(one) == ["x"]


def test_duplicate_ids_rejected():
    doc = json.dumps(
        [{"id": "t", "version": "1", "kind": "comparative", "text": "{context}: {a} vs {b}"}] * 2
    )
    with pytest.raises(TemplateError, match="duplicate template id 't'"):
        load_templates(doc, fmt="json")


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_builtins_round_trip_through_dump(fmt):
    text = dump_templates(B, fmt=fmt)
    again = load_templates(text, fmt=fmt)
    assert again == B
    assert [t.key() for t in again.values()] == [t.key() for t in B.values()]
    if fmt == "yaml":
        assert "text: |-\n" in text  # prompts stay readable as literal blocks


def test_dump_rejects_non_templates():
    with pytest.raises(TemplateError, match="expects Template"):
        dump_templates([{"id": "x"}])
