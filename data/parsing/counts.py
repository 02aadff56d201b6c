"""Samples and score-token probabilities aggregated; parse failures counted and reported."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from data.parsing.answers import Parsed, reason_code


def sample_verdicts_to_p(verdicts: Iterable[Any]) -> tuple[float, int]:
    """p_first from K sampled verdicts: the share of "A", a tie counting half.

    Parameters
    ----------
    verdicts : iterable of {"A", "B", "tie", None} or Parsed
        Unparsed samples (None, NaN, or a Parsed with value None) are left out of both the
        numerator and ``n_valid``.

    Returns
    -------
    (p_first, n_valid)
        ``p_first`` is NaN when no sample is valid.

    Raises
    ------
    ValueError
        A verdict other than "A", "B", "tie" or unparsed.
    """
    n_a = n_tie = n_valid = 0
    for v in verdicts:
        if isinstance(v, Parsed):
            v = v.value
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        if v == "A":
            n_a += 1
        elif v == "tie":
            n_tie += 1
        elif v != "B":
            raise ValueError(f"verdicts must be 'A', 'B', 'tie' or None, got {v!r}")
        n_valid += 1
    if n_valid == 0:
        return math.nan, 0
    return (n_a + 0.5 * n_tie) / n_valid, n_valid


def expected_score(score_probs: Mapping[float, float]) -> float:
    """G-Eval expected score: sum over s of s * P(s), P renormalised over the score tokens.

    Parameters
    ----------
    score_probs : mapping score -> probability
        Probabilities (not log-probabilities) of the score tokens, e.g. ``{1: .1, 2: .2, ...}``;
        they need not sum to one (the rest of the vocabulary is dropped).

    Returns
    -------
    float
        NaN when every probability is zero (the model put no mass on a score token).

    Raises
    ------
    ValueError
        An empty mapping; a probability that is negative or not finite; a score that is
        not finite.
    """
    if not score_probs:
        raise ValueError("expected_score needs at least one score probability")
    total = weighted = 0.0
    for s, p in score_probs.items():
        s, p = float(s), float(p)
        if not math.isfinite(p) or p < 0:
            raise ValueError(f"probability of score {s:g} must be finite and >= 0, got {p!r}")
        if not math.isfinite(s):
            raise ValueError(f"scores must be finite numbers, got {s!r}")
        total += p
        weighted += s * p
    if total == 0.0:
        return math.nan
    return weighted / total


def summarise_failures(parsed: Iterable[Parsed]) -> dict[str, int]:
    """Count failures by reason code, most frequent first (successes are not counted).

    Parameters
    ----------
    parsed : iterable of Parsed
        Parser results.

    Returns
    -------
    dict of str to int
        Reason code (:func:`reason_code`) -> number of answers, most frequent first (equal
        counts in order of first appearance).
    """
    counts = Counter(reason_code(p.reason) for p in parsed if p.reason is not None)
    return dict(counts.most_common())


@dataclass(frozen=True)
class ParseReport:
    """How many answers parsed, and why the others did not, with a few examples each.

    Attributes
    ----------
    n_total : int
        Number of answers.
    n_parsed : int
        Number that parsed.
    failures : dict of str to int
        Reason code -> count, most frequent first (:func:`summarise_failures`).
    examples : dict of str to list of str
        Reason code -> a few failed answers (their raw text, or the reasons when no raw
        text was given to :meth:`from_parsed`).
    n_failed : int
        ``n_total - n_parsed``.
    parse_rate : float
        ``n_parsed / n_total``; NaN when there are no answers.
    """

    n_total: int
    n_parsed: int
    failures: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    @property
    def n_failed(self) -> int:
        """Number of answers that did not parse."""
        return self.n_total - self.n_parsed

    @property
    def parse_rate(self) -> float:
        """Share of answers that parsed; NaN when there are none."""
        return self.n_parsed / self.n_total if self.n_total else math.nan

    @classmethod
    def from_parsed(
        cls, parsed: Sequence[Parsed], raw: Sequence[Any] | None = None, n_examples: int = 3
    ) -> ParseReport:
        """Build a report; ``raw`` (same length) supplies the example answers per failure.

        Parameters
        ----------
        parsed : sequence of Parsed
            Parser results.
        raw : sequence, optional
            The raw answers, in the order of ``parsed``; without it the examples are the
            failure reasons.
        n_examples : int
            Most examples kept per reason code, the first ones met.

        Returns
        -------
        ParseReport

        Raises
        ------
        ValueError
            ``raw`` and ``parsed`` differ in length.
        """
        parsed = list(parsed)
        if raw is not None and len(raw) != len(parsed):
            raise ValueError(f"raw has {len(raw)} answers but parsed has {len(parsed)}")
        examples: dict[str, list[str]] = {}
        for i, p in enumerate(parsed):
            code = reason_code(p.reason)
            if code is None:
                continue
            bucket = examples.setdefault(code, [])
            if len(bucket) < n_examples:
                bucket.append(str(raw[i]) if raw is not None else p.reason)
        n_parsed = sum(p.reason is None for p in parsed)
        return cls(len(parsed), n_parsed, summarise_failures(parsed), examples)

    def summary(self) -> str:
        """One line: "812/820 parsed; no-number 6, out-of-scale 2".

        Returns
        -------
        str
            The counts, then the failures by code when there are any.
        """
        head = f"{self.n_parsed}/{self.n_total} parsed"
        if not self.failures:
            return head
        return head + "; " + ", ".join(f"{k} {v}" for k, v in self.failures.items())
