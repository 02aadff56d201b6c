"""Reading chat-completion replies: anything unexpected is a server fault, never an answer.

The ``openai`` client hands back a string for a non-JSON content type and builds objects from
any JSON without checking it, so the shape of a reply is checked here; a reply that is not a
usable chat completion raises :class:`Malformed`, whose text starts with its error code
(``bad-response``, ``no-choices``).
"""

from __future__ import annotations

import math


class Malformed(ValueError):
    """A reply that is not a usable chat completion; the text starts with its error code."""


def field_of(obj, name: str):
    """``obj.name`` for the client's objects, ``obj[name]`` for plain dicts; None if absent."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def read_choices(resp) -> list:
    """The choices of a chat completion, each with a message; raises :class:`Malformed`.

    The client hands back a string for a non-JSON content type and builds objects from any
    JSON without checking it, so the shape is checked here: an object with a non-empty list
    of choices, each with a message object. Choices come back in ``index`` order when every
    choice has one.
    """
    if isinstance(resp, (str, bytes)):
        body = resp if isinstance(resp, str) else resp.decode("utf-8", "replace")
        snippet = " ".join(body.split())[:120]
        raise Malformed(f"bad-response: the reply is not a chat completion but text ({snippet!r})")
    choices = field_of(resp, "choices")
    if choices is None:
        error = field_of(resp, "error")
        if error:
            message = field_of(error, "message") or error
            raise Malformed(f"bad-response: the server answered 200 with an error ({message})")
        raise Malformed(
            f"bad-response: the reply is not a chat completion (a {type(resp).__name__} "
            "without choices)"
        )
    if not isinstance(choices, list):
        raise Malformed(f"bad-response: choices is a {type(choices).__name__}, not a list")
    if not choices:
        raise Malformed("no-choices: the server returned no choices")
    for i, choice in enumerate(choices):
        if field_of(choice, "message") is None:
            raise Malformed(f"bad-response: choice {i} has no message (null)")
    indices = [field_of(choice, "index") for choice in choices]
    if all(isinstance(i, int) for i in indices):  # some servers leave the index out
        choices = [c for _, c in sorted(zip(indices, choices, strict=True), key=lambda t: t[0])]
    return choices


def logprob_entries(choice):
    """A choice's ``logprobs.content`` (one entry a token); None or empty when there are none."""
    logprobs = field_of(choice, "logprobs")
    return field_of(logprobs, "content") if logprobs is not None else None


def token_logprob(entry) -> tuple[str, float]:
    token, lp = field_of(entry, "token"), field_of(entry, "logprob")
    if not isinstance(token, str) or isinstance(lp, bool) or not isinstance(lp, (int, float)):
        raise Malformed(f"bad-response: malformed logprobs entry (token {token!r}, logprob {lp!r})")
    if math.isnan(lp) or lp > 1e-6:
        raise Malformed(
            f"bad-response: logprob {lp!r} for token {token!r} is not a log-probability"
        )
    return token, float(lp)


def usage_counts(resp, n_choices: int) -> dict:
    usage = field_of(resp, "usage")
    prompt, completion = field_of(usage, "prompt_tokens"), field_of(usage, "completion_tokens")
    prompt = prompt if isinstance(prompt, int) and not isinstance(prompt, bool) else None
    if not isinstance(completion, int) or isinstance(completion, bool):
        completion = None
    elif n_choices > 1:
        completion = round(completion / n_choices)
    return {"n_prompt_tokens": prompt, "n_completion_tokens": completion}


__all__ = [
    "Malformed",
    "field_of",
    "logprob_entries",
    "read_choices",
    "token_logprob",
    "usage_counts",
]
