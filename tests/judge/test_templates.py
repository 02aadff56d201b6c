"""The Template and the built-in library: the prompts of PROMPTS.md exactly, fields, rendering,
prefix splitting, keys and answer parsing (attribute values, validation and files have their
own test modules)."""

from __future__ import annotations

import pytest

from judge.templates import (
    Template,
    TemplateError,
    attribute_values,
    builtin_templates,
)

B = builtin_templates()
CTX, A, BB, CAND, REF = "THE CONTEXT", "FIRST TEXT", "SECOND TEXT", "THE CANDIDATE", "THE REFERENCE"


def render(template_id, attribute, domain="summary", **values):
    t = B[template_id].for_attribute(attribute, domain)
    return t.render(**values)


def test_builtin_library_ids():
    assert list(B) == [
        "liusie-c1",
        "liusie-c2",
        "liusie-s1",
        "liusie-s2",
        "geval",
        "chiang-lee-story",
        "chiang-lee-story-persona",
        "chiang-lee-story-explain",
        "chiang-lee-story-persona-explain",
        "chiang-lee-adv-fluency",
        "chiang-lee-adv-meaning",
        "hanna-ep1",
        "hanna-ep2",
        "hanna-ep3",
        "hanna-ep4",
        "summeval-abc",
    ]
    assert all(t.source and t.description for t in B.values())
    assert builtin_templates() is not B  # a fresh dict each call; callers may mutate it


# --------------------------------------------------------------------------- PROMPTS.md


@pytest.mark.parametrize(
    ("attribute", "adjective"),
    [
        ("coherence", "more coherent"),
        ("consistency", "more consistent"),
        ("fluency", "more fluent"),
        ("relevance", "more relevant"),
        ("naturalness", "more natural"),
        ("engagingness", "more engaging"),
        ("continuity", "better a continuation"),  # "is more good" reads "is better"
        ("grammar", "more grammatically correct"),
        ("overall", "better"),
    ],
)
def test_liusie_c1_c2_render_the_paper_prompts(attribute, adjective):
    c1 = render("liusie-c1", attribute, context=CTX, a=A, b=BB)
    assert c1 == (
        f"{CTX}\n\nSummary A: {A}\n\nSummary B: {BB}\n\n"
        f"Which Summary is {adjective}, Summary A or Summary B?"
    )
    c2 = render("liusie-c2", attribute, context=CTX, a=A, b=BB)
    assert c2 == (
        f"Passage:\n{CTX}\n\nSummary A: {A}\n\nSummary B: {BB}\n\n"
        f"Which Summary is {adjective} relative to the passage, Summary A or Summary B?"
    )


def test_liusie_noun_is_response_for_dialogue_and_data_to_text():
    for domain in ("dialogue", "data-to-text"):
        t = B["liusie-c1"].for_attribute("naturalness", domain)
        assert t.render(context=CTX, a=A, b=BB) == (
            f"{CTX}\n\nResponse A: {A}\n\nResponse B: {BB}\n\n"
            "Which Response is more natural, Response A or Response B?"
        )
    t = B["liusie-c1"].for_attribute("coherence", "summary")
    assert t.decoder_prefix == "Summary"  # FlanT5 priming (PROMPTS.md)
    assert t.answer_prefix == "Answer:"  # Llama-2-chat
    assert t.labels == ("A", "B") and t.tie_label is None


def test_liusie_scoring_baselines():
    s1 = render("liusie-s1", "coherence", context=CTX, candidate=CAND)
    assert s1 == (
        f"{CTX}\n\nSummary: {CAND}\n\n"
        "Provide a score between 1 and 10 that measures the summary's coherence"
    )
    s1_overall = render("liusie-s1", "overall", context=CTX, candidate=CAND)
    assert s1_overall.endswith("measures the summary's overall quality")
    s2 = render("liusie-s2", "fluency", context=CTX, candidate=CAND)
    assert s2 == (
        f"Passage: {CTX}\n\nSummary: {CAND}\n\n"
        "Score the response between 1 and 10 based on how fluent the summary is"
    )
    s2_dialogue = render("liusie-s2", "engagingness", "dialogue", context=CTX, candidate=CAND)
    assert s2_dialogue.endswith("based on how engaging the response is")
    assert s2_dialogue.splitlines()[2] == f"Response: {CAND}"
    for tid in ("liusie-s1", "liusie-s2"):
        assert B[tid].scale == (1, 10)
        assert B[tid].answer_prefix == "Score:"
        assert B[tid].score_labels == tuple(str(i) for i in range(1, 11))


CHIANG_LEE_HEAD = (
    "Please rate the story fragment\n"
    "The goal of this task is to rate story fragment.\n"
    "Note: Please take the time to fully read and understand the story fragment. We will "
    "reject submissions from workers that are clearly spamming the task.\n"
    "Story fragment:\n"
    f"{CAND}\n"
    "(End of story fragment)\n"
)
CHIANG_LEE_QUESTIONS = {
    "grammaticality": "How grammatically correct is the text of the story fragment?",
    "cohesiveness": "How well do the sentences in the story fragment fit together?",
    "likability": "How enjoyable do you find the story fragment?",
    "relevance": "How relevant is the story fragment to the prompt?",
}


@pytest.mark.parametrize("attribute", list(CHIANG_LEE_QUESTIONS))
def test_chiang_lee_story_questionnaire(attribute):
    block = ""
    if attribute == "relevance":
        block = (
            "Now read the PROMPT based on which the story fragment was written.\n"
            f"PROMPT: {CTX}\n(End of PROMPT)\n"
        )
    expected = (
        CHIANG_LEE_HEAD
        + block
        + CHIANG_LEE_QUESTIONS[attribute]
        + " (on a scale of 1-5, with 1 being the lowest)"
    )
    values = {"candidate": CAND, "context": CTX}
    t = B["chiang-lee-story"].for_attribute(attribute, "story")
    assert t.render(**values) == expected
    # only relevance needs the story's prompt
    assert ("context" in t.fields) == (attribute == "relevance")
    persona = "(You are a human worker hired to rate the story fragment.)\n"
    explain = "\nPlease also explain your decision."
    assert render("chiang-lee-story-persona", attribute, "story", **values) == persona + expected
    assert render("chiang-lee-story-explain", attribute, "story", **values) == expected + explain
    both = render("chiang-lee-story-persona-explain", attribute, "story", **values)
    assert both == persona + expected + explain


def test_chiang_lee_adversarial_templates():
    fluency = render("chiang-lee-adv-fluency", "fluency", candidate="Stocks fall")
    assert fluency == (
        "You are given a news title. Please read the news title and answer the question.\n"
        "News title:\nStocks fall\n(End of news title)\n"
        "Question: How natural and fluent is the text of the news title? "
        "(on a scale of 1-5, with 1 being the lowest)"
    )
    meaning = render(
        "chiang-lee-adv-meaning", "meaning", context="Stocks fall", candidate="Stocks faII"
    )
    assert meaning == (
        "You are given two news titles. Please read the news titles and answer the question.\n"
        "News title 1:\nStocks fall\n(End of news title 1)\n"
        "News title 2:\nStocks faII\n(End of news title 2)\n"
        "Question: Do you agree that the meaning (or semantics) of news title 1 is preserved in "
        "news title 2? (on a scale of 1-5, with 1 being the strongly disagree and 5 being "
        "strongly agree.)"
    )
    t = B["chiang-lee-adv-meaning"]
    # the Chiang & Lee rule after deleting "title 1" / "title 2"
    assert t.parse_answer("I agree that title 1 is preserved in title 2: 4 out of 5").value == 4
    assert t.parse_answer("5/5").value == 5


def test_summeval_abc_prompt():
    text = render("summeval-abc", "coherence", context="ART", a="S1", b="S2")
    assert text == (
        "Choose a more coherent summary from Summary #1 and Summary #2 with respect to the "
        "corresponding Article by choosing an option from A, B, or C. Note that coherence "
        "measures the collective quality of the summary, whether the summary presents "
        "information that flows smoothly and avoids abrupt transitions or disjoint statements."
        "\n\nArticle: ART\n\nSummary #1: S1\n\nSummary #2: S2\n\n"
        "A: Summary #1 is more coherent.\nB: Summary #2 is more coherent.\n"
        "C: Both Summary #1 and Summary #2 are equally coherent.\n\n"
        "Your choice (enter 1 letter from A to C):"
    )
    t = B["summeval-abc"]
    assert (t.labels, t.tie_label) == (("A", "B"), "C")
    assert t.parse_answer("C").value == "tie"
    assert t.parse_answer("B: Summary #2 is more coherent.").value == "B"
    assert t.parse_answer("Summary #1").value == "A"  # via the template's aliases


@pytest.mark.parametrize("ep", [1, 2, 3, 4])
@pytest.mark.parametrize(
    "criterion", ["relevance", "coherence", "empathy", "surprise", "engagement", "complexity"]
)
def test_hanna_eval_prompts(ep, criterion):
    t = B[f"hanna-ep{ep}"].for_attribute(criterion, "story")
    values = {"context": CTX, "candidate": CAND, "reference": REF}
    text = t.render(**values)
    assert f"Story prompt: {CTX}" in text and f"Story: {CAND}" in text
    assert f"from 1 to 5 on {criterion}: " in text
    assert ("explain your rating" in text) == (ep > 1)
    assert ("Guidelines: " in text) == (ep == 3)
    assert (REF in text) == (ep == 4)
    assert ("for reference only" in text.lower()) == (ep == 4)
    assert set(t.fields) == (
        {"context", "candidate", "reference"} if ep == 4 else {"context", "candidate"}
    )
    assert t.scale == (1, 5) and t.parsing["rule"] == "keyed"


def test_hanna_definitions_follow_prompts_md():
    defs = {
        "relevance": "how well the story matches its prompt",
        "coherence": "how much the story makes sense",
        "empathy": "how well the reader understood the characters' emotions",
        "surprise": "how surprising the end of the story was",
        "engagement": "how much the reader engaged with the story",
        "complexity": "how elaborate the story is",
    }
    for crit, definition in defs.items():
        assert attribute_values(B["hanna-ep1"], crit, "story")["definition"] == definition


def test_geval_template():
    t = B["geval"].for_attribute("coherence", "summary")
    text = t.render(context=CTX, candidate=CAND)
    assert "Coherence (1-5) - the collective quality of all sentences" in text
    assert text.endswith("Evaluation Form (scores ONLY):\n\n- Coherence:")
    assert B["geval"].score_labels == ("1", "2", "3", "4", "5")


# --------------------------------------------------------------------------- fields


def test_fields_in_order_of_appearance():
    assert B["liusie-c1"].fields == ("context", "noun", "a", "b", "comparative")
    assert B["liusie-c1"].for_attribute("coherence").fields == ("context", "a", "b")
    assert B["chiang-lee-story"].fields == ("candidate", "prompt_block", "question")
    # the relevance block brings {context} with it
    assert B["chiang-lee-story"].for_attribute("relevance", "story").fields == (
        "candidate",
        "context",
    )
    # prefixes and system messages are sent as written: a field there is an error
    for part in ("system", "decoder_prefix", "answer_prefix"):
        with pytest.raises(
            TemplateError, match=rf"{part} is sent to the model as written.*\{{noun\}}"
        ):
            Template(id="t", version="1", kind="comparative", text="{a} vs {b}", **{part: "{noun}"})
    t = Template(
        id="t", version="1", kind="comparative", text="{a} vs {b}", system='Reply {{"w": 1}}'
    )
    assert t.system == 'Reply {{"w": 1}}'  # braces that are not a field are allowed


def test_render_with_attribute_values_expands_nested_fields():
    # The runner's way: attribute_values() then render(); same result as for_attribute().
    base = B["chiang-lee-story"]
    vals = attribute_values(base, "relevance", "story")
    direct = base.render(**vals, context="P {not a field}", candidate="S")
    assert direct == base.for_attribute("relevance", "story").render(
        context="P {not a field}", candidate="S"
    )
    assert "PROMPT: P {not a field}\n(End of PROMPT)" in direct
    prefix, rest = base.split(**vals, context="P", candidate="S")
    assert prefix + rest == base.render(**vals, context="P", candidate="S")
    c1 = B["liusie-c1"]
    vals = attribute_values(c1, "overall", "dialogue")
    assert c1.render(**vals, context="C", a="x", b="y").endswith(
        "Which Response is better, Response A or Response B?"
    )
    with pytest.raises(TemplateError, match="refer to its own field"):
        Template(id="t", version="1", kind="comparative", text="{a} {b} {question}").render(
            a="x", b="y", question="again {question}"
        )


def test_render_names_the_missing_field():
    t = B["liusie-c1"].for_attribute("coherence")
    with pytest.raises(TemplateError, match=r"needs \{b\}"):
        t.render(context=CTX, a=A)
    with pytest.raises(TemplateError, match=r"\{context\}"):
        t.render(context=None, a=A, b=BB)
    with pytest.raises(TemplateError, match=r"\{adjective\}|\{comparative\}"):
        B["liusie-c1"].render(context=CTX, a=A, b=BB, noun="Summary")
    # extra values are ignored; values go in literally (braces in data are not fields)
    assert t.render(context="{x}", a=A, b=BB, unused=1).startswith("{x}\n\n")


def test_literal_braces_survive_specialisation():
    t = Template(
        id="t",
        version="1",
        kind="comparative",
        text='Answer in JSON {{"winner": ...}}. {a} / {b} on {attribute}',
    )
    s = t.for_attribute("coherence")
    assert s.render(a="x", b="y") == 'Answer in JSON {"winner": ...}. x / y on coherence'


# --------------------------------------------------------------------------- split


def _all_specialised():
    attrs = {
        "liusie-c1": ["coherence", "overall"],
        "liusie-c2": ["relevance"],
        "liusie-s1": ["fluency"],
        "liusie-s2": ["consistency"],
        "geval": ["relevance"],
        "summeval-abc": ["consistency"],
    }
    for tid, t in B.items():
        if tid.startswith("chiang-lee-story"):
            names = ["relevance", "likability"]
        elif tid.startswith("chiang-lee-adv"):
            names = ["meaning"]
        elif tid.startswith("hanna"):
            names = ["empathy"]
        else:
            names = attrs[tid]
        for name in names:
            yield (
                tid,
                name,
                t.for_attribute(name, "story" if "hanna" in tid or "chiang" in tid else "summary"),
            )


@pytest.mark.parametrize(("tid", "attribute", "t"), list(_all_specialised()))
def test_split_prefix_plus_rest_is_the_prompt(tid, attribute, t):
    values = {
        "context": " ctx text ",
        "a": "cand A",
        "b": "cand B",
        "candidate": "cand X",
        "reference": "ref",
    }
    for share_first in (False, True):
        prefix, rest = t.split(share_first=share_first, **values)
        assert prefix + rest == t.render(**values)
        assert prefix == prefix.rstrip()
        assert "cand B" not in prefix and "cand X" not in prefix
        assert ("cand A" in prefix) == (share_first and t.kind == "comparative")
        # the prefix is the same for every comparison of the context
        other = dict(
            values, a="other A" if not share_first else "cand A", b="other B", candidate="other X"
        )
        assert t.split(share_first=share_first, **other)[0] == prefix


def test_split_shares_the_context():
    t = B["liusie-c2"].for_attribute("coherence")
    prefix, rest = t.split(context="CTX", a="AA", b="BB")
    assert (prefix, rest) == (
        "Passage:\nCTX\n\nSummary A:",
        " AA\n\nSummary B: BB\n\nWhich Summary is more coherent relative to the passage, Summary A or Summary B?",
    )
    prefix, _ = t.split(share_first=True, context="CTX", a="AA", b="BB")
    assert prefix == "Passage:\nCTX\n\nSummary A: AA\n\nSummary B:"


# --------------------------------------------------------------------------- keys


def test_key_is_stable_and_covers_what_changes_the_prompt():
    t = Template(id="t", version="1", kind="comparative", text="{context} A: {a} B: {b}")
    # A fixed value: a change here invalidates every cached run, so it must be deliberate.
    assert t.key() == "806f1697f79425d0"
    same = Template(
        id="t", version="1", kind="comparative", text="{context} A: {a} B: {b}", description="x"
    )
    assert same.key() == t.key()
    for change in (
        {"version": "2"},
        {"text": "{context} 1: {a} 2: {b}"},
        {"labels": ("1", "2")},
        {"decoder_prefix": "Summary"},
        {"answer_prefix": "Answer:"},
        {"id": "u"},
        {"tie_label": "C"},
        {"parsing": {"aliases": {"#1": "A"}}},
        {"system": "Be fair."},
    ):
        kwargs = {
            "id": "t",
            "version": "1",
            "kind": "comparative",
            "text": "{context} A: {a} B: {b}",
        }
        kwargs.update(change)
        assert Template(**kwargs).key() != t.key(), change
    keys = {t.key() for t in B.values()}
    assert len(keys) == len(B)
    c1 = B["liusie-c1"]
    assert c1.for_attribute("coherence").key() != c1.for_attribute("fluency").key()
    assert (
        hash(c1) == hash(builtin_templates()["liusie-c1"])
        and c1 == builtin_templates()["liusie-c1"]
    )


def test_parse_answer_uses_the_template_settings():
    s1 = B["liusie-s1"]
    assert s1.parse_answer("Score: 7").value == 7
    assert s1.parse_answer("11").reason.startswith("out-of-scale")
    story = B["chiang-lee-story"]
    # Chiang & Lee rule: the first number after deleting "1-5", "out of 5", "/5"
    assert story.parse_answer("I would rate it a 4 out of 5. It is 3 times better.").value == 4
    c1 = B["liusie-c1"]
    assert c1.parse_answer(" B").value == "B"
    assert c1.parse_answer(float("nan")).reason.startswith("missing")
