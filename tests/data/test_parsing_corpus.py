"""parse_verdict on the answer shapes of the published judge formats.

The expected reading of each answer is written from the format's own documentation and code
(read upstream, not copied):

- Arena-Hard (lmarena/arena-hard-auto: utils/judge_utils.py's judge prompt ends "you must
  output only one of the following choices as your final verdict with a label: [[A>>B]],
  [[A>B]], [[A=B]], [[B>A]], [[B>>A]]", example "My final verdict is tie: [[A=B]]";
  gen_judgment.py's get_score upper-cases the judgment, takes the *last* match of
  ``\\[\\[([AB<>=]+)\\]\\]``, else of the single-bracket pattern; show_result.py also scores
  the mirror forms A<B, A<<B, B<A, B<<A, B=A). A judgment without a verdict has no score.
- MT-Bench (lm-sys/FastChat fastchat/llm_judge, pair-v2 prompts: 'output your final verdict
  by strictly following this format: "[[A]]" if assistant A is better, "[[B]]" if assistant
  B is better, and "[[C]]" for a tie'; common.py also reads "[[rating_a,rating_b]]" score
  pairs with TIE_DELTA = 0.1). FastChat's own code checks "[[A]]" in the text before "[[B]]"
  and "[[C]]"; the prompt says the verdict is the final one, which is what we read.
- AlpacaEval (tatsu-lab/alpaca_eval: the clf prompts answer with the model identifier "m"
  (output_1) or "M" (output_2), the CoT clf prompt ends its answer with it ("We will use the
  last character of your output"); ranking_parser reads "[{'model': 'model_1', 'rank': 1},
  ...]" and gives the rank of model_1, NaN when it is not 1 or 2; the fn judges return
  {"ordered_models": [...]}; lmsys_parser reads "7 1" on the first line; the logprob judges
  store a float preference 2 - P(m), between 1 and 2, read by the vocabulary).
- PandaLM (WeOpenML/PandaLM: the model writes its result "1", "2" or "Tie" on the first line,
  then "### Reason:" and "### Reference:").
- JudgeLM (and the lmsys/Vicuna pairwise prompt it follows): "The first line contains only
  two values, indicating the scores for Assistant 1 and 2"; JudgeLM compares the scores:
  higher wins, equal is a tie. Our mapping: a plain verdict (no grade), as JudgeLM uses only
  the comparison.
- LLMBar (princeton-nlp/LLMBar: the Vanilla prompts answer only "Output (a)" or "Output (b)";
  the CoT prompt says 'always end your response with either "Therefore, Output (a) is
  better." or "Therefore, Output (b) is better." verbatim').

Real answers: PandaLM's released verdicts (pandalm_testset) and LLMBar's released judge
completions (llmbar result.json files), read whenever they are in the data folder.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from data.parsing import (
    parse_verdict,
    read_verdict_value,
    reason_code,
)
from tests.data._benchmark_files import DATA

# (answer, expected value, expected grade); None value: unparsed
ARENA_HARD = [
    ("My final verdict is tie: [[A=B]]", "tie", 0),
    ("I would consider this a tie. My final verdict is: [[A=B]]", "tie", 0),
    ("Therefore, my final verdict is [[A=B]].", "tie", 0),
    ("[[A>B]]", "A", 1),
    ("[[B>A]]", "B", -1),
    ("[[A>>B]]", "A", 2),
    ("[[B>>A]]", "B", -2),
    ("My final verdict is: Assistant B is significantly better: [[B>>A]]", "B", -2),
    ("My final verdict is Assistant A is slightly better: [[A>B]].", "A", 1),
    ("**My final verdict is: [[A>>B]]**", "A", 2),
    ("my final verdict is [[a>b]]", "A", 1),  # the judgment is upper-cased before matching
    ("My final verdict is: [[ B > A ]]", "B", -1),
    ("[[A<B]]", "B", -1),  # the mirror forms show_result.py scores
    ("[[B<<A]]", "A", 2),
    ("[[B=A]]", "tie", 0),
    ("My final verdict is: [B>A]", "B", -1),  # the single-bracket fallback
    (
        "My own answer to the prompt would be:\n\n```python\nimport numpy as np\n"
        "x = np.arange(6).reshape(3, 2)\nprint(x[[0, 2]])\n```\n\nEvaluating Assistant A's "
        "answer: it is correct but verbose. Assistant B's answer misses the reshape.\n\n"
        "My final verdict is: Assistant A is slightly better: [[A>B]]",
        "A",
        1,
    ),
    (
        # the judge lists the choices, then gives its own: the last one decides
        "The options are: 1. [[A>>B]] 2. [[A>B]] 3. [[A=B]] 4. [[B>A]] 5. [[B>>A]].\n"
        "Assistant B handles the edge case that Assistant A misses.\n\n"
        "My final verdict is: [[B>A]]",
        "B",
        -1,
    ),
    (
        'As the example output says, "My final verdict is tie: [[A=B]]" would mean a tie; '
        "here Assistant A is clearly better, so my final verdict is [[A>>B]].",
        "A",
        2,
    ),
    (
        "Both assistants give the same correct formula, but Assistant A explains it. "
        "A is better in clarity, B in brevity; overall they are relatively the same.\n\n"
        "My final verdict is tie: [[A=B]]",
        "tie",
        0,
    ),
]
# judgments with no verdict label: the format gives them no score (require_bracketed); read
# as free text they say what their words say
ARENA_HARD_NO_LABEL = [
    ("Assistant A is better than Assistant B in every respect.", "A"),
    ("My own answer to the prompt would be: print(x[[0, 1]])", None),  # an index, no verdict
    ("My own answer to the prompt would be:\n\nx[[0, 1]]", None),  # likewise
]

MT_BENCH = [
    ("Assistant A's answer is more detailed and accurate.\n\n[[A]]", "A"),
    ("Assistant B follows the user's instruction to use a table.\n\nFinal verdict: [[B]]", "B"),
    ("Both assistants provide equally helpful and relevant answers. [[C]]", "tie"),
    ("It's a tie: [[C]].", "tie"),
    ("[[A]]", "A"),
    ("[[B]]", "B"),
    ("[[C]]", "tie"),
    ("**[[B]]**", "B"),
    (
        # FastChat's code would read A here ("[[A]]" appears); the prompt's final verdict is B
        'I must output "[[A]]" if assistant A is better, "[[B]]" if B is better. Assistant B '
        "is more accurate.\n\n[[B]]",
        "B",
    ),
    ("Assistant A's score: 8. Assistant B's score: 6.\n\n[[8, 6]]", "A"),  # rating pair
    ("[[7.5, 7.5]]", "tie"),
    ("[[8.05, 8]]", "tie"),  # within FastChat's TIE_DELTA
    ("[[6, 9]]", "B"),
]

ALPACAEVAL = [
    # clf / logprob judges: the model identifier alone
    ("m", {"labels": ("m", "M")}, "A"),
    ("M", {"labels": ("m", "M")}, "B"),
    # the CoT clf prompt: explanation, then the identifier as the last character
    (
        "### Concise explanation\nBoth outputs answer the question, but M's output is "
        "accurate where m invents a date.\n\n### Which is best, m or M?\nM",
        {"labels": ("m", "M")},
        "B",
    ),
    (
        "### Concise explanation\nThe output of m is complete and follows the format.\n\n"
        "### Which is best, m or M?\nm",
        {"labels": ("m", "M")},
        "A",
    ),
    # ranking_parser's answers (alpaca_eval_gpt4, claude_ranking)
    ("[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]", {}, "A"),
    ("[{'model': 'model_1', 'rank': 2}, {'model': 'model_2', 'rank': 1}]", {}, "B"),
    ("[{'model': 'model_1', 'rank': 3}, {'model': 'model_2', 'rank': 1}]", {}, None),
    (
        '```json\n[{"model": "model_2", "rank": 1}, {"model": "model_1", "rank": 2}]\n```',
        {},
        "B",
    ),
    # function-calling judges (alpaca_eval_gpt4_fn, ..._cot_..._fn)
    (
        '{"ordered_models": [{"model": "model_1", "rank": 1}, {"model": "model_2", "rank": 2}]}',
        {},
        "A",
    ),
    (
        '{"concise_explanation": "model_2 is correct.", "ordered_models": '
        '[{"model": "model_2", "rank": 1}, {"model": "model_1", "rank": 2}]}',
        {},
        "B",
    ),
    ('{"best_output": "Output (b)"}', {"labels": ("Output (a)", "Output (b)")}, "B"),
    # regex_parser prompts (chatgpt, text_davinci_003): "Output (a)" / "Output (b)"
    ("Output (a)", {"labels": ("Output (a)", "Output (b)")}, "A"),
    ("Output (b)\n", {"labels": ("Output (a)", "Output (b)")}, "B"),
    # lmsys_parser (its own doctests)
    ("1 7\n ...", {}, "B"),
    ("7 1\n more text", {}, "A"),
    ("1 1\n ...", {}, "tie"),
]

# AlpacaEval's stored preferences (annotations' "preference"): read by the vocabulary
ALPACAEVAL_PREFERENCES = [
    (1, 1.0),
    (2, 0.0),
    (1.5, 0.5),
    (0, 0.5),
    (1.25, 0.75),
    (1.9, 0.1),
    (1.000001, 0.999999),
]

PANDALM = [
    ("1\n\n### Reason: Response 1 is better because it is concise.\n\n### Reference: x", "A"),
    ("2\n\n### Reason: Response 2 is better because Response 1 is wrong.\n\n### Reference: y", "B"),
    (
        "Tie\n\n### Reason: Both responses are incorrect as they do not give the sound.\n\n"
        "### Reference: The sound is 'hǎo'.",
        "tie",
    ),
    ("2", "B"),
    ("Tie", "tie"),
    ("garbage", None),
]

JUDGELM = [
    ("8 6\nAssistant 1 provided a more detailed answer than Assistant 2.", "A"),
    ("6 9\nAssistant 2's answer is accurate, Assistant 1's is not.", "B"),
    ("7 7\nBoth assistants provided relevant and accurate answers.", "tie"),
    ("10 9\nBoth are good; Assistant 1 is slightly more complete.", "A"),
    ("8.5 9\nAssistant 2 is more precise.", "B"),
    ("8, 6\nAssistant 1 is more helpful.", "A"),  # a comma, as lmsys_parser allows
    ("Assistant 1: 8\nAssistant 2: 6", None),  # not the format
]

LLMBAR = [
    ("Output (a)", "A"),
    ("Output (b)", "B"),
    ("", None),
    (
        "Output (a) is relevant and precise. Output (b) adds an unrequested list.\n\n"
        "Therefore, Output (a) is better.",
        "A",
    ),
    (
        "Output (a) is more concise, but Output (b) is the only one that answers the question."
        "\n\nTherefore, Output (b) is better.",
        "B",
    ),
    # the real answers below break the format in the ways judges do; the reading follows
    # the format's rule (the final "Therefore, ..." claim), else the one option said to be
    # better in a sentence of its own
    (
        "Output (a) is better. Although Output (b) is more flexible as it allows for "
        "personalization, it fails to precisely execute the instruction. On the other hand, "
        "Output (a) provides a clear and concise introduction.",
        "A",
    ),
    (
        "Output (b) is better.\n\nOutput (a) is too short and does not summarize the content. "
        "Output (b) is more detailed and summarizes the content better.",
        "B",
    ),
    (
        "Output (a) is better because it provides more information about the student's skills. "
        "Output (b) is more like a letter of congratulations.",
        "A",
    ),
    (
        "Although Output (b) is more detailed and comprehensive, it may be too long for some "
        "users. Therefore, considering the instruction and the potential use case, Output (a) "
        "is better.",
        "A",
    ),
    (
        "Output (b) is better. Output (a) is not a synonym of 'deceptive'. Therefore, Output "
        "(a) is better.",
        "A",
    ),
    (
        "In this case, both Output (a) and Output (b) provide the same response, which is "
        '"OK." Therefore, both outputs are equally good.',
        "tie",
    ),
    (
        "# Instruction:\nAct as a product designer.\n\n# Output (a):\nAs a product designer, "
        "I would focus on",  # an echo of the prompt, cut off: no choice
        None,
    ),
    ("I cannot provide a response to this question as it promotes harm.", None),
]

LLMBAR_LABELS = {"labels": ("Output (a)", "Output (b)")}
PANDALM_LABELS = {"labels": ("1", "2"), "tie_labels": ("Tie",)}
MT_BENCH_LABELS = {"tie_labels": ("C",)}


@pytest.mark.parametrize(("answer", "value", "grade"), ARENA_HARD)
@pytest.mark.parametrize("strict", [False, True])
def test_arena_hard(answer, value, grade, strict):
    parsed = parse_verdict(answer, require_bracketed=strict)
    assert (parsed.value, parsed.grade) == (value, grade), parsed
    assert parsed.ok == (value is not None)


@pytest.mark.parametrize(("answer", "free_text"), ARENA_HARD_NO_LABEL)
def test_arena_hard_without_a_label(answer, free_text):
    assert reason_code(parse_verdict(answer, require_bracketed=True).reason) == "no-label"
    assert parse_verdict(answer).value == free_text


def test_mt_bench_without_a_label():
    answer = "Assistant A is more helpful, but I need more information."
    strict = parse_verdict(answer, require_bracketed=True, **MT_BENCH_LABELS)
    assert strict.value is None and reason_code(strict.reason) == "no-label"


@pytest.mark.parametrize(
    "form", ["A>>B", "A>B", "A=B", "B>A", "B>>A", "A<<B", "A<B", "B=A", "B<A", "B<<A"]
)
def test_arena_hard_grades_are_the_vocabulary_grades(form):
    # one convention: the parser's grade of [[X]] is the vocabulary's grade of the value X
    assert parse_verdict(f"My final verdict is: [[{form}]]").grade == read_verdict_value(form).grade
    assert parse_verdict(f"[[{form}]]").value == read_verdict_value(form).verdict


@pytest.mark.parametrize(("answer", "value"), MT_BENCH)
def test_mt_bench(answer, value):
    parsed = parse_verdict(answer, **MT_BENCH_LABELS)
    assert parsed.value == value, parsed
    assert parsed.grade is None  # plain verdicts
    assert parse_verdict(answer, require_bracketed=True, **MT_BENCH_LABELS).value == value


def test_mt_bench_c_is_a_tie_only_when_offered():
    assert reason_code(parse_verdict("[[C]]").reason) == "no-label"
    assert parse_verdict("[[C]]", tie_labels=("C",)).value == "tie"


@pytest.mark.parametrize(("answer", "kwargs", "value"), ALPACAEVAL)
def test_alpacaeval(answer, kwargs, value):
    assert parse_verdict(answer, **kwargs).value == value


@pytest.mark.parametrize(("preference", "p_first"), ALPACAEVAL_PREFERENCES)
def test_alpacaeval_preferences(preference, p_first):
    reading = read_verdict_value(preference)
    assert reading.known
    stated = reading.p_first
    if stated is None:  # 1, 2, 0, 1.5: plain codes, certain
        stated = {"A": 1.0, "B": 0.0, "tie": 0.5}[reading.verdict]
    assert stated == pytest.approx(p_first)


@pytest.mark.parametrize(("answer", "value"), PANDALM)
def test_pandalm(answer, value):
    assert parse_verdict(answer, **PANDALM_LABELS).value == value


@pytest.mark.parametrize(("answer", "value"), JUDGELM)
def test_judgelm(answer, value):
    parsed = parse_verdict(answer)
    assert parsed.value == value and parsed.grade is None


@pytest.mark.parametrize(("answer", "value"), LLMBAR)
def test_llmbar(answer, value):
    assert parse_verdict(answer, **LLMBAR_LABELS).value == value


def test_the_corpus_is_the_size_the_report_says():
    sizes = {
        "arena-hard": len(ARENA_HARD) + len(ARENA_HARD_NO_LABEL),
        "mt-bench": len(MT_BENCH) + 1,
        "alpacaeval": len(ALPACAEVAL) + len(ALPACAEVAL_PREFERENCES),
        "pandalm": len(PANDALM),
        "judgelm": len(JUDGELM),
        "llmbar": len(LLMBAR),
    }
    assert sizes == {
        "arena-hard": 20 + 3,
        "mt-bench": 13 + 1,
        "alpacaeval": 23,
        "pandalm": 6,
        "judgelm": 7,
        "llmbar": 13,
    }


def test_the_old_silent_misreads_are_gone():
    # issue 22: these were read as A, and bare graded verdicts were "ambiguous"
    assert parse_verdict("I would consider this a tie. My final verdict is: [[A=B]]").value == "tie"
    assert parse_verdict("Therefore, my final verdict is [[A=B]].").value == "tie"
    assert parse_verdict("[[A>B]]").ok and parse_verdict("[[B>A]]").ok
    # LLMBar's CoT answers starting "Output (a) is better." were read as B: the word
    # "Output" went as an answer prefix, leaving "(a)"
    answer = "Output (a) is better. Output (b) is wrong."
    assert parse_verdict(answer, **LLMBAR_LABELS).value == "A"


def test_parsed_verdict_compares_and_unpacks_as_before():
    parsed = parse_verdict("[[A>>B]]")
    value, reason = parsed
    assert (value, reason, parsed.grade) == ("A", None, 2)
    assert parsed == ("A", None)
    assert "grade=2" in repr(parsed)
    import pickle

    assert pickle.loads(pickle.dumps(parsed)).grade == 2


# --------------------------------------------------------------------------- real answers

PANDALM_DIR = DATA / "pandalm_testset" / "data"
LLMBAR_DIR = DATA / "llmbar" / "Dataset"


@pytest.mark.skipif(not PANDALM_DIR.is_dir(), reason="pandalm_testset not in the data folder")
def test_pandalm_released_verdicts():
    # each released verdict written back as PandaLM's output: result, reason, reference
    seen = Counter()
    for name, key in (
        ("pandalm-7b-testset-v1.json", "pandalm"),
        ("gpt-3.5-turbo-testset-v1.json", "gpt"),
    ):
        for row in json.loads((PANDALM_DIR / name).read_text()):
            result = str(row[f"{key}_result"])
            shown = {"0": "Tie"}.get(result, result)
            answer = (
                f"{shown}\n\n### Reason: {row[f'{key}_reason']}\n\n"
                f"### Reference: {row[f'{key}_reference']}"
            )
            expected = {"1": "A", "2": "B", "Tie": "tie"}.get(shown)
            parsed = parse_verdict(answer, **PANDALM_LABELS)
            assert parsed.value == expected, (row["idx"], answer[:200])
            seen[(key, expected)] += 1
    assert seen == {
        ("pandalm", "A"): 433,
        ("pandalm", "B"): 459,
        ("pandalm", "tie"): 107,
        ("gpt", "A"): 460,
        ("gpt", "B"): 476,
        ("gpt", "tie"): 38,
        ("gpt", None): 25,
    }


def _llmbar_answers(strategy: str, under: str = ""):
    """(completion, the authors' winner in the presented order) of every LLMBar judge."""
    for path in sorted(LLMBAR_DIR.glob(f"{under}**/evaluators/*/{strategy}/result.json")):
        for item in json.loads(path.read_text()):
            result = item["results"][-1]
            for swap in (False, True):
                game = result[f"swap = {swap}"]
                winner = game["winner"]  # in the original indexing: swapped back here
                if swap and winner is not None:
                    winner = {"1": "2", "2": "1"}[winner]
                yield game["completion"][0], {"1": "A", "2": "B"}.get(winner)


@pytest.mark.skipif(not LLMBAR_DIR.is_dir(), reason="llmbar not in the data folder")
def test_llmbar_vanilla_released_answers():
    # the Vanilla prompts allow only "Output (a)" / "Output (b)": the reading is the answer's
    # first words, and the authors' own parse agrees on every answer
    counts = Counter()
    for answer, authors in _llmbar_answers("Vanilla*"):
        text = answer.strip()
        expected = (
            "A" if text.startswith("Output (a)") else "B" if text.startswith("Output (b)") else None
        )
        parsed = parse_verdict(answer, **LLMBAR_LABELS)
        assert parsed.value == expected == authors, answer[:200]
        counts[expected] += 1
    assert counts == {"A": 5316 + 3117, "B": 3339 + 1901, None: 98 + 13}


@pytest.mark.skipif(not LLMBAR_DIR.is_dir(), reason="llmbar not in the data folder")
def test_llmbar_cot_released_answers():
    # the CoT prompt's rule: the answer ends with "Therefore, Output (x) is better." verbatim;
    # every answer that does is read as that, whatever it said before
    counts = Counter()
    for answer, _authors in _llmbar_answers("CoT", "LLMBar/Natural/"):
        text = answer.rstrip()
        if text.endswith("Therefore, Output (a) is better."):
            expected = "A"
        elif text.endswith("Therefore, Output (b) is better."):
            expected = "B"
        else:
            continue
        assert parse_verdict(answer, **LLMBAR_LABELS).value == expected, answer[-300:]
        counts[expected] += 1
    assert counts == {"A": 534, "B": 316}  # of 1200 answers; the rest break the format
