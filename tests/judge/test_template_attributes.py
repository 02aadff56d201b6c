"""Attribute values of templates and the checks that the data can fill every field."""

from __future__ import annotations

import pytest

from judge.templates import (
    DOMAINS,
    TemplateError,
    attribute_values,
    builtin_templates,
    check_fields,
    comparative_of,
    missing_fields,
)

B = builtin_templates()


def test_check_fields_before_work():
    t = B["hanna-ep4"].for_attribute("surprise", "story")
    check_fields(t, {"context", "candidate", "reference"})
    with pytest.raises(TemplateError, match=r"needs \{reference\}"):
        check_fields(t, {"context", "candidate"})
    assert missing_fields(t, {"context"}) == ["candidate", "reference"]
    # an unspecialised template also names its attribute fields
    with pytest.raises(TemplateError, match=r"\{question\}.*for_attribute"):
        check_fields(B["chiang-lee-story"], {"candidate", "context"})


def test_attribute_values():
    v = attribute_values(B["liusie-c1"], "Coherence", "summary")
    assert v["adjective"] == "coherent" and v["comparative"] == "more coherent"
    assert v["noun"] == "Summary" and v["noun_lower"] == "summary"
    assert v["attribute"] == "Coherence" and v["criterion"] == "Coherence"
    assert attribute_values(B["liusie-c1"], "overall", "dialogue")["comparative"] == "better"
    with pytest.raises(
        TemplateError, match=r"no 'adjective' for attribute 'groundedness'.*coherence"
    ):
        attribute_values(B["liusie-c1"], "groundedness")
    v = attribute_values(B["liusie-c1"], "groundedness", adjective="grounded in the fact")
    assert v["comparative"] == "more grounded in the fact"
    with pytest.raises(TemplateError, match="domain must be one of"):
        attribute_values(B["liusie-c1"], "coherence", "poetry")
    with pytest.raises(TemplateError, match="no 'question' for attribute 'surprise'"):
        attribute_values(B["chiang-lee-story"], "surprise", "story")
    assert comparative_of("good a continuation") == "better a continuation"
    assert comparative_of("goodly") == "more goodly"
    assert set(DOMAINS) == {"summary", "dialogue", "data-to-text", "story"}
