"""The simulator's known biases (``data.synthetic.simulate``): texts with known features, cycles.

Real-looking candidate texts:
Each text is built from a small built-in word list so that its whitespace tokens number
exactly the candidate's drawn word count (markdown markers included), and some texts carry a
markdown header line, list items or bold spans: the length and style features of
``data.bias.features.text_features`` are then known in advance.

Intransitive contexts: :func:`reverse_first_third` flips the judge's preference between the
candidates ranked 1st and 3rd by latent quality.
"""

from __future__ import annotations

import numpy as np

#: Word counts of simulated texts are drawn uniformly from this range (inclusive).
WORD_RANGE = (20, 200)
#: Probability that a text opens with a "# Heading" line, has a bulleted list, has bold words.
P_HEADER, P_LIST, P_BOLD = 0.3, 0.3, 0.3

WORDS = (
    "the model summary answer covers main points clearly and gives useful detail about "
    "every key event while the reader learns what happened why it matters who was involved "
    "where it took place how results compare over time with data from several sources that "
    "support each claim in plain language for a wide audience"
).split()


def draw_words(rng: np.random.Generator, shape) -> np.ndarray:
    """Word counts per candidate, uniform on :data:`WORD_RANGE`, as float64."""
    lo, hi = WORD_RANGE
    return rng.integers(lo, hi + 1, size=shape).astype(np.float64)


def make_texts(rng: np.random.Generator, words: np.ndarray) -> list[str]:
    """One text per entry of ``words`` (flattened), with exactly that many whitespace tokens.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the words and of the markdown choices.
    words : ndarray
        Word counts (>= 20).

    Returns
    -------
    list of str
        Sentences of words from :data:`WORDS`; with probability :data:`P_HEADER` a first
        line ``# W W``, with :data:`P_LIST` two to four ``- w w w`` list lines, with
        :data:`P_BOLD` one to three ``**w**`` spans. Markers count as tokens, so
        ``len(text.split())`` equals the word count.
    """
    counts = np.asarray(words, dtype=np.int64).ravel()
    n = len(counts)
    vocab = np.array(WORDS, dtype=object)
    picks = rng.integers(0, len(vocab), size=(n, int(counts.max(initial=1))))
    header = rng.random(n) < P_HEADER
    n_items = np.where(rng.random(n) < P_LIST, rng.integers(2, 5, size=n), 0)
    n_bold = np.where(rng.random(n) < P_BOLD, rng.integers(1, 4, size=n), 0)
    out = []
    for k in range(n):
        toks = list(vocab[picks[k, : counts[k]]])
        lines = []
        if header[k]:
            lines.append("# " + " ".join(t.capitalize() for t in toks[:2]))
            toks = toks[3:]  # "#" + two words = three tokens
        items = []
        for _ in range(n_items[k]):
            items.append("- " + " ".join(toks[:3]))
            toks = toks[4:]
        for b in range(n_bold[k]):
            at = 2 + 5 * b
            if at < len(toks):
                toks[at] = f"**{toks[at]}**"
        body, start = [], 0
        while start < len(toks):  # sentences of about ten words
            sentence = toks[start : start + 10]
            sentence[0] = sentence[0].capitalize()
            body.append(" ".join(sentence) + ".")
            start += 10
        if body:
            lines.append(" ".join(body))
        lines.extend(items)
        out.append("\n".join(lines))
    return out


def reverse_first_third(diff, q, cycles, first_idx, second_idx):
    """``diff`` with the sign flipped, in the first ``cycles`` contexts, for the two ordered
    pairs of the candidates ranked 1st and 3rd by latent quality (per attribute)."""
    rank = np.argsort(-q[:, :cycles], axis=2, kind="stable")
    top, third = rank[..., 0][..., None], rank[..., 2][..., None]
    pair = ((first_idx == top) & (second_idx == third)) | (
        (first_idx == third) & (second_idx == top)
    )
    out = diff.copy()
    out[:, :cycles] = np.where(pair, -diff[:, :cycles], diff[:, :cycles])
    return out


def bias_note(length_bias, decay, cycles, ctx_names, texts) -> str:
    """The true biases, for the dataset description (empty with the defaults)."""
    parts = []
    if length_bias:
        parts.append(f"length bias {length_bias:g} (logit per unit normalised word difference)")
    if decay:
        parts.append(f"position bias decays as exp(-{decay:g} x quality gap)")
    if cycles:
        shown = ", ".join(ctx_names[: min(cycles, 5)]) + (", ..." if cycles > 5 else "")
        parts.append(f"{cycles} intransitive context(s) ({shown}: 1st and 3rd reversed)")
    if texts:
        parts.append("texts with 20-200 words and some markdown")
    return ("; true biases: " + "; ".join(parts)) if parts else ""
