"""Reading a batch's output and error files (OpenAI Batch API / vLLM ``run_batch`` format).

Each line is ``{"custom_id", "response": {"status_code", "body"}, "error"}``. A line that is
not of that shape is a *problem* (named by file and line, the rest of the file still read);
a request the endpoint failed is a failure stored with its reason (asked again by the next
batch or run); an expired or cancelled request is left pending, not stored.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from judge.backends.base import scrub_secrets
from judge.backends.openai_compat.batch_api import NOT_RUN_CODES, failed_result, read_reply
from judge.store import StoredResult, error_code, result_row


@dataclass
class Parsed:
    """What the lines of the files give: rows to store, and what could not be used."""

    rows: dict[str, StoredResult] = field(default_factory=dict)
    not_run: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    n_lines: int = 0


def _snippet(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _error_text(status, body, error) -> str:
    """The failure text of a request the endpoint did not answer with 200."""
    message = ""
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message", "") if isinstance(inner, dict) else str(inner)
    if isinstance(error, dict):
        message = message or str(error.get("message") or "")
    if isinstance(status, int) and status != 200:
        return f"http-{status}: {message or 'the batch request failed'}"
    code = error.get("code") if isinstance(error, dict) else None
    return f"batch-error: {code or 'error'}: {message or 'the batch request failed'}"


def read_files(
    files: list[tuple[str, str]],
    labels_of: dict[str, tuple | None],
    kind: str,
    *,
    where: str,
    model: str,
) -> Parsed:
    """Read ``files`` ([(name, text)]) against the batch's keys ``labels_of`` (key -> labels).

    The first line seen for a key wins; a later one is a problem. An answer beats a failure
    for the same key whichever file it is in (the error file lists failures only).
    """
    out = Parsed()
    seen: dict[str, str] = {}
    for name, text in files:
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            out.n_lines += 1
            where_line = f"{name} line {n}"
            try:
                obj = json.loads(line)
            except ValueError as exc:
                out.problems.append(f"{where_line}: not JSON ({exc.msg}): {_snippet(line)!r}")
                continue
            cid = obj.get("custom_id") if isinstance(obj, dict) else None
            if not isinstance(cid, str) or not cid:
                out.problems.append(
                    f"{where_line}: no custom_id (not a batch output line): {_snippet(line)!r}"
                )
                continue
            if cid not in labels_of:
                out.problems.append(
                    f"{where_line}: custom_id {cid[:16]}… is not a request of this batch "
                    "(the output of another batch?)"
                )
                continue
            if cid in seen:
                out.problems.append(
                    f"{where_line}: custom_id {cid[:16]}… again (first: {seen[cid]})"
                )
                continue
            seen[cid] = where_line
            row = _row(obj, cid, labels_of[cid], kind, where=where, model=model)
            if row is None:
                out.not_run.add(cid)
            elif isinstance(row, str):
                out.problems.append(f"{where_line}: {row}")
                del seen[cid]
            else:
                out.rows[cid] = row
    return out


def _row(obj: dict, key: str, labels, kind: str, *, where: str, model: str):
    """The row for one line; None when the request was not run; a text for a bad line."""
    response, error = obj.get("response"), obj.get("error")
    if response is None and error is None:
        return "neither response nor error"
    if response is not None and not isinstance(response, dict):
        return f"response is a {type(response).__name__}, not an object"
    if isinstance(error, dict) and error.get("code") in NOT_RUN_CODES:
        return None
    status = response.get("status_code") if response else None
    body = response.get("body") if response else None
    if isinstance(body, str):  # some runners write the body as a JSON string
        try:
            body = json.loads(body)
        except ValueError:
            pass
    if status == 200 and error is None:
        result = read_reply(kind, body, labels, where=where, model=model)
    else:
        result = failed_result(kind, scrub_secrets(_error_text(status, body, error)))
    return result_row(key, kind, result, model)


def failure_reasons(rows) -> dict[str, int]:
    """Failed rows by error code, most common first."""
    counts = Counter(error_code(r.error) or "error" for r in rows if r.status == "failed")
    return dict(counts.most_common())


__all__ = ["Parsed", "failure_reasons", "read_files"]
