"""What every parser shares: the result type, failure reasons, missing answers, refusals.

A parser returns a :class:`Parsed` ``(value, reason)``; ``reason`` is None on success and
otherwise ``"<code>: <detail>"`` (:func:`fail`), so that failures can be counted by their
code (:func:`reason_code`). A missing answer (None / NaN) and a refusal (:data:`REFUSAL`) are
failures of their own.
"""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple


class Parsed(NamedTuple):
    """A parsed answer: ``value`` (None when unparsed) and ``reason`` (None on success).

    Attributes
    ----------
    value : object
        The verdict (``"A"``, ``"B"``, ``"tie"``), score (float) or choice index (int); None
        when the answer did not parse.
    reason : str or None
        None on success, else ``"<code>: <detail>"`` (see :func:`reason_code`).
    ok : bool
        True when ``reason`` is None.
    """

    value: Any
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """True when the answer parsed (``reason`` is None)."""
        return self.reason is None


def reason_code(reason: str | None) -> str | None:
    """The short code of a failure reason (``"no-number: ..."`` -> ``"no-number"``).

    Parameters
    ----------
    reason : str or None
        A :attr:`Parsed.reason`.

    Returns
    -------
    str or None
        The text before the first ``":"``, stripped (the whole reason when there is no
        colon); None for None.
    """
    if reason is None:
        return None
    return reason.split(":", 1)[0].strip()


def fail(code: str, detail: str, text: str | None = None) -> Parsed:
    """A failed parse: value None and the reason ``"<code>: <detail>"``.

    Parameters
    ----------
    code : str
        The short failure code (``no-number``, ``refusal``, ...).
    detail : str
        What went wrong.
    text : str, optional
        The answer; when given, its first 60 characters (white space collapsed) are quoted
        after the detail.

    Returns
    -------
    Parsed
        ``Parsed(None, "<code>: <detail>[ in '<text>']")``.
    """
    if text is not None:
        shown = " ".join(text.split())
        if len(shown) > 60:
            shown = shown[:57] + "..."
        detail = f"{detail} in {shown!r}"
    return Parsed(None, f"{code}: {detail}")


def as_text(text: Any) -> str | None:
    """The answer as a string; None for a missing answer.

    Parameters
    ----------
    text : object
        The answer as stored: text, bytes (decoded as UTF-8, undecodable bytes replaced),
        None or NaN (missing), or anything else (turned into text).

    Returns
    -------
    str or None
        None for None and NaN.
    """
    if text is None:
        return None
    if isinstance(text, float) and math.isnan(text):
        return None
    if isinstance(text, bytes):
        return text.decode("utf-8", errors="replace")
    return str(text)


#: A judge declining to answer ("I'm sorry, I cannot determine ...", "As an AI ...").
REFUSAL = re.compile(
    r"\b(?:i\s*(?:'|’)?\s*m\s+sorry|i\s+am\s+sorry|i\s+apologi[sz]e|as\s+an\s+ai\b"
    r"|i\s+(?:cannot|can\s*(?:'|’)?\s*t|can\s+not|am\s+unable\s+to|(?:'|’)m\s+unable\s+to"
    r"|won\s*(?:'|’)?\s*t|will\s+not|am\s+not\s+able\s+to)\s+"
    r"(?:provide|determine|choose|decide|compare|evaluate|rate|score|make|answer|assist"
    r"|help|judge|assess|give|select|pick|do)"
    r"|(?:unable|impossible|not\s+possible)\s+to\s+(?:determine|choose|decide|compare"
    r"|evaluate|rate|score|judge|assess|say)"
    r"|cannot\s+be\s+(?:determined|decided|evaluated|rated|compared))",
    re.IGNORECASE,
)
