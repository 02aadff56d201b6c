"""The numbers the papers publish, as printed (two decimals unless said otherwise).

Only published numbers live here; every computed number comes from the analysis functions.
The paper texts are in ``../shared/papers`` (see its README for which file is which paper).
"""

from __future__ import annotations

# ---------------------------------------------------------------- Chhun et al. 2024 (HANNA)
#: HANNA's criteria in the paper's order: abbreviation -> the dataset's attribute.
HANNA_CRITERIA = {
    "RE": "relevance",
    "CH": "coherence",
    "EM": "empathy",
    "SU": "surprise",
    "EG": "engagement",
    "CX": "complexity",
}
#: The LLM judges of Figures 4-8 and Table 3, in the paper's order.
HANNA_LLMS = ("Beluga-13B", "Llama-13B", "Mistral-7B", "ChatGPT")
HANNA_EVAL_PROMPTS = ("eval_prompt_1", "eval_prompt_2", "eval_prompt_3", "eval_prompt_4")

#: Figure 4 (overall Kendall, Eval-Prompt 1, mean over the six criteria), Section 4.1.2.
FIG4_OVERALL = {"Beluga-13B": 0.25, "Llama-13B": 0.16, "Mistral-7B": 0.20, "ChatGPT": 0.18}
#: Figure 4's "Human" column (each annotator vs the mean of all three): the text gives no
#: number; read from the figure.
FIG4_HUMAN = 0.48
#: "automatic measures (<= 0.18)": an upper bound on the best non-LLM measure, overall.
FIG4_AUTOMATIC_MAX = 0.18

#: Figure 5 (system-level Kendall, Eval-Prompt 1, mean over the six criteria).
FIG5_SYSTEM = {"Beluga-13B": 0.70}
FIG5_HUMAN = 0.73
FIG5_BARTSCORE = 0.57
#: "non-LLM automatic measures ... with values ranging from 0.13 to 0.57".
FIG5_AUTOMATIC_RANGE = (0.13, 0.57)
#: "ChatGPT shows a somewhat erratic performance (correlations range from 0.07 to 0.73)".
FIG5_CHATGPT_RANGE = (0.07, 0.73)
#: The measures Figures 4-6 display (Section 3.4): "BLEU, ROUGE, chrF, BERTScore, SUPERT,
#: BLANC, BARTScore, BaryScore"; each name is matched to the HANNA columns starting with it.
DISPLAYED_MEASURES = (
    "BLEU",
    "ROUGE",
    "chrF",
    "BERTScore",
    "SUPERT",
    "BLANC",
    "BARTScore",
    "BaryScore",
)

#: Figure 6: Beluga-13B vs ChatGPT, overall, BH-adjusted p "between 0.01 and 0.14".
FIG6_CHATGPT_OVERALL_P = (0.01, 0.14)
#: Figure 6, system level: "p > 0.11 for all tests" (a lower bound on the smallest p).
FIG6_SYSTEM_MIN_P = 0.11

#: Table 1: ICC2k, Eval-Prompt 1, per criterion.
TABLE1_ICC = {
    "Beluga-13B": {"RE": 0.88, "CH": 0.93, "EM": 0.88, "SU": 0.80, "EG": 0.91, "CX": 0.85},
    "Mistral-7B": {"RE": 0.86, "CH": 0.90, "EM": 0.87, "SU": 0.63, "EG": 0.87, "CX": 0.78},
    "Human": {"RE": 0.48, "CH": 0.29, "EM": 0.34, "SU": 0.28, "EG": 0.46, "CX": 0.56},
}

#: Table 3: mean Likert rating per LLM and Eval-Prompt (all criteria and stories rated).
TABLE3 = {
    "Beluga-13B": (3.48, 3.38, 3.06, 3.28),
    "Llama-13B": (3.48, 3.52, 3.21, 2.82),
    "Mistral-7B": (3.47, 3.51, 3.46, 3.28),
    "ChatGPT": (1.52, 1.47, 1.62, 1.60),
}

_T_COLS = ("RE", "CH", "EM", "SU", "EG", "CX", "Average")
#: Tables 6 (Beluga-13B) and 7 (Mistral-7B): mean Eval-Prompt 1 rating per generator and
#: criterion (the "±" intervals are left out). HANNA systems first, then the Llama-written
#: stories the paper added (not released with the ratings file).
TABLE6 = {
    "Human": (3.37, 3.55, 3.42, 3.11, 3.58, 3.48, 3.42),
    "Platypus2-70B": (4.09, 4.31, 3.92, 3.69, 4.19, 3.88, 4.01),
    "Llama-30B": (4.19, 4.38, 4.04, 3.63, 4.31, 3.98, 4.08),
    "Beluga-13B": (4.06, 4.10, 3.75, 3.54, 3.90, 3.69, 3.84),
    "Mistral-7B": (4.12, 4.25, 3.86, 3.56, 4.11, 3.82, 3.95),
    "Llama-7B": (4.07, 4.24, 3.90, 3.58, 4.09, 3.79, 3.95),
    "GPT-2": (2.57, 2.36, 2.72, 2.59, 2.67, 2.89, 2.63),
    "HINT": (1.57, 1.31, 1.59, 1.49, 1.58, 1.43, 1.49),
}
TABLE7 = {
    "Human": (3.48, 3.50, 3.69, 3.24, 3.42, 3.45, 3.46),
    "Platypus2-70B": (4.26, 4.31, 4.05, 3.46, 3.94, 3.55, 3.93),
    "Llama-30B": (4.15, 4.29, 4.02, 3.46, 3.94, 3.65, 3.92),
    "Beluga-13B": (4.07, 4.14, 3.98, 3.50, 3.74, 3.59, 3.84),
    "Mistral-7B": (4.15, 4.22, 4.02, 3.51, 3.94, 3.67, 3.92),
    "Llama-7B": (4.13, 4.14, 3.90, 3.48, 3.78, 3.56, 3.83),
    "GPT-2": (2.40, 2.37, 2.74, 2.85, 2.60, 2.88, 2.64),
    "HINT": (2.12, 2.13, 2.23, 2.28, 2.05, 2.05, 2.15),
}
TABLE_COLUMNS = _T_COLS
#: The generators of Tables 6/7 that are HANNA systems (the others' stories were not released).
HANNA_TABLE_SYSTEMS = ("Human", "GPT-2", "HINT")
