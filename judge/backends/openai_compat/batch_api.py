"""The OpenAI Batch API through the ``openai`` client: request lines, files, batches, replies.

A batch line is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``;
the body is exactly the request a live run sends for one call (the same messages, token
limit, logprobs settings, temperature, top_p and seed), except that each sample of a sampled
answer is its own line (seed + sample, as a live run does when the server ignores ``n``).
The same file runs offline with vLLM's batch runner (``python -m vllm.entrypoints.openai.
run_batch -i batch.jsonl -o results.jsonl --model ...``).

Output lines are read back with the live run's reading (:mod:`.answers`), so an answer, an
answer error or a failure is stored the same way whichever path it came by.
"""

from __future__ import annotations

import json

from judge.backends.base import BackendError, GenerateRequest, GenerateResult, LabelRequest
from judge.backends.openai_compat.answers import OpenAILabelResult, choice_result, label_result
from judge.backends.openai_compat.client import status_message
from judge.backends.openai_compat.replies import Malformed, read_choices, usage_counts

ENDPOINT = "/v1/chat/completions"
#: request error codes of a batch that mean "not run": the request stays pending
NOT_RUN_CODES = ("batch_expired", "batch_cancelled")
#: batch statuses after which nothing more happens remotely
TERMINAL = ("completed", "failed", "expired", "cancelled")


def request_body(backend, req) -> dict:
    """The chat-completions body a live run of ``backend`` sends for ``req``."""
    if isinstance(req, LabelRequest):
        return backend.label_params(req)
    if isinstance(req, GenerateRequest):
        return backend._sampling_params(req, 1)
    raise TypeError(f"not a judge request: {type(req).__name__}")


def request_line(custom_id: str, body: dict) -> str:
    """One JSONL line of a batch input file."""
    line = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
    return json.dumps(line, ensure_ascii=False)


def _completion(body):
    """The body as the client's ChatCompletion object (as a live call gives it)."""
    from openai.types.chat import ChatCompletion

    if not isinstance(body, dict):
        raise Malformed(f"bad-response: the response body is a {type(body).__name__}")
    try:
        return ChatCompletion.model_validate(body)
    except Exception as exc:  # pydantic's ValidationError: not a chat completion
        first = str(exc).splitlines()
        raise Malformed(
            f"bad-response: the response body is not a chat completion ({' '.join(first[:3])})"
        ) from None


def read_reply(kind: str, body, labels=None, *, where: str, model: str):
    """The judge result in a successful reply body (``kind`` "label" or "generate").

    A body that is no usable chat completion is a ``bad-response`` failure (asked again).
    """
    try:
        resp = _completion(body)
        if kind == "label":
            return label_result(resp, labels, where=where, model=model)
        return choice_result(read_choices(resp)[0], usage_counts(resp, 1))
    except Malformed as exc:
        error = str(exc)
    if kind == "label":
        return OpenAILabelResult(error=error)
    return GenerateResult(None, error)


def failed_result(kind: str, error: str):
    return OpenAILabelResult(error=error) if kind == "label" else GenerateResult(None, error)


class BatchService:
    """Files and batches at an endpoint, through the backend's ``openai`` client (its key)."""

    def __init__(self, backend):
        self.backend = backend
        self._client = backend._client
        self._openai = backend._openai
        self.where = backend.base_url

    def _fail(self, what: str, exc) -> BackendError:
        openai = self._openai
        scrub = self.backend._scrub_key
        if isinstance(exc, openai.APIStatusError):
            text = f"HTTP {exc.status_code}: {scrub(status_message(exc))}"
            if exc.status_code == 404:
                text += " (does this endpoint offer the Batch API?)"
        elif isinstance(exc, openai.APIConnectionError):
            text = f"cannot reach the endpoint ({scrub(str(exc.__cause__ or exc))})"
        else:
            text = scrub(f"{type(exc).__name__}: {exc}")
        return BackendError(f"{what} at {self.where} failed: {text}")

    def _do(self, what: str, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except Exception as exc:
            raise self._fail(what, exc) from None

    def upload(self, jsonl: str, name: str = "batch.jsonl") -> str:
        """Upload a batch input file; its file id."""
        data = jsonl.encode("utf-8")
        f = self._do(
            "uploading the batch file",
            self._client.files.create,
            file=(name, data, "application/jsonl"),
            purpose="batch",
        )
        return f.id

    def create(self, input_file_id: str, metadata: dict) -> object:
        return self._do(
            "creating the batch",
            self._client.batches.create,
            input_file_id=input_file_id,
            endpoint=ENDPOINT,
            completion_window="24h",
            metadata=metadata,
        )

    def retrieve(self, remote_id: str) -> object:
        return self._do("reading the batch", self._client.batches.retrieve, remote_id)

    def cancel(self, remote_id: str) -> object:
        return self._do("cancelling the batch", self._client.batches.cancel, remote_id)

    def find(self, metadata_key: str, value: str):
        """The batch whose metadata has ``metadata_key`` = ``value`` (newest 100), or None."""
        page = self._do("listing batches", self._client.batches.list, limit=100)
        for b in getattr(page, "data", None) or []:
            if (getattr(b, "metadata", None) or {}).get(metadata_key) == value:
                return b
        return None

    def content(self, file_id: str) -> str:
        """The text of an output or error file."""
        resp = self._do("downloading a batch file", self._client.files.content, file_id)
        return resp.text


def batch_status(remote) -> dict:
    """Status, request counts and file ids of a remote batch object, as plain values."""
    counts = getattr(remote, "request_counts", None)
    errors = getattr(remote, "errors", None)
    messages = [
        f"{getattr(e, 'code', '') or ''}: {getattr(e, 'message', '') or ''}".strip(": ")
        + (f" (line {e.line})" if getattr(e, "line", None) is not None else "")
        for e in (getattr(errors, "data", None) or [])
    ]
    return {
        "remote_id": remote.id,
        "status": remote.status,
        "total": getattr(counts, "total", 0) or 0,
        "completed": getattr(counts, "completed", 0) or 0,
        "failed": getattr(counts, "failed", 0) or 0,
        "output_file_id": getattr(remote, "output_file_id", None),
        "error_file_id": getattr(remote, "error_file_id", None),
        "message": "; ".join(messages),
    }


__all__ = [
    "ENDPOINT",
    "NOT_RUN_CODES",
    "TERMINAL",
    "BatchService",
    "batch_status",
    "failed_result",
    "read_reply",
    "request_body",
    "request_line",
]
