"""A small local server speaking the OpenAI chat-completions API, for tests (no network).

``FakeOpenAI`` listens on 127.0.0.1 at a random port and serves ``POST /v1/chat/completions``,
``GET /v1/models`` and ``GET /v1/models/{id}`` with scripted, deterministic behaviour (and the
Batch API, ``/v1/files`` and ``/v1/batches``: tests/judge/fake_batches.py):

- label answers with ``logprobs``/``top_logprobs`` derived from the prompt (``label_logprobs``),
  so a test can compute the expected probability itself;
- sampled text answers derived from (prompt, seed, choice index) (``sampled_answer``);
- scripted failures for the next calls (``fail_next``): 429 with Retry-After, 500s, slow replies
  that trip the client's timeout;
- refusals: a prompt containing ``REFUSE`` gets ``message.refusal``; ``FILTER`` gets
  ``finish_reason="content_filter"``; ``EMPTY`` gets an empty answer;
- ``stall_after``: answer that many completions, then hold every further request until
  ``release()`` (used to kill a client mid-run at a known point);
- faults (``fault`` for every prompt containing a marker, ``fault_next`` for the next calls):
  the kinds in ``FAULT_KINDS`` — 200 replies that are not JSON, ``text/plain``, invalid UTF-8,
  a JSON array, an error object, ``"choices": null`` or ``[]``, ``"message": null``, malformed
  logprobs, a truncated body, a hang-up, HTTP errors and slow replies;
- ``style="vllm"``: replies shaped as vLLM's OpenAI server writes them (the extra fields
  ``stop_reason``, ``token_ids``, ``prompt_logprobs``, ``kv_transfer_params``...; top logprobs
  led by the answer token, clamped at -9999.0) and vLLM's ``logprob_token_ids`` honoured:
  the log-probabilities of exactly those tokens (``VLLM_TOKEN_IDS``) plus the answer token;
- it counts every call it got (``n_chat_calls``, ``prompts``, ``calls_by_prompt``) and the
  answers it sent (``n_answered``, ``answered_prompts``, ``answers_by_prompt``), without the
  backend's probes where the name says so.

Run ``python tests/judge/fake_openai.py`` to serve it by hand (prints the base URL).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

try:
    from tests.judge import fake_batches
except ImportError:  # run as a script: python tests/judge/fake_openai.py
    import fake_batches

PROBE_MARK = "judgescope-probe"  # prompts of OpenAIBackend.check() contain this

#: reply faults the server can inject (see ``FakeOpenAI.fault``); "status" and "slow" take
#: ``status=`` / ``seconds=`` as well, "not-json" and "text-plain" a ``body=``
FAULT_KINDS = (
    "not-json",  # 200, application/json, an HTML page
    "text-plain",  # 200, text/plain, a sentence
    "bad-utf8",  # 200, application/json, bytes that are not UTF-8
    "json-array",  # 200, a JSON array instead of an object
    "error-200",  # 200, {"error": {...}} and no choices (some proxies)
    "null-choices",  # 200, "choices": null
    "empty-choices",  # 200, "choices": []
    "null-message",  # 200, "message": null
    "bad-logprobs",  # 200, first-token logprobs with null token and logprob (when asked for)
    "truncated",  # 200, the body stops half way and the connection closes
    "hang-up",  # the connection closes without any reply
    "status",  # an HTTP error status (default 500)
    "slow",  # the right answer after ``seconds``
)

#: fault kind -> the error code its request ends with (label requests, then generate requests)
FAULT_CODES = {
    "not-json": ("bad-response", "bad-response"),
    "text-plain": ("bad-response", "bad-response"),
    "bad-utf8": ("bad-response", "bad-response"),
    "json-array": ("bad-response", "bad-response"),
    "error-200": ("bad-response", "bad-response"),
    "null-choices": ("bad-response", "bad-response"),
    "empty-choices": ("no-choices", "no-choices"),
    "null-message": ("bad-response", "bad-response"),
    "bad-logprobs": ("bad-response", None),  # sampled answers do not read logprobs
    "truncated": ("connection", "connection"),
    "hang-up": ("connection", "connection"),
    "status": ("http-500", "http-500"),
    "slow": ("timeout", "timeout"),
}


def _unit(*parts) -> float:
    """A number in [0, 1) fixed by ``parts`` (stable across processes, unlike hash())."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def label_logprobs(prompt: str) -> dict[str, float]:
    """The first-token log-probabilities the fake model gives after ``prompt``.

    "A" appears twice (" A" and "A") so clients must merge tokens whose stripped text matches.
    The digits "1".."5" carry a score distribution for G-Eval style requests.
    """
    u = _unit("label", prompt)
    p_a = 0.05 + 0.9 * u  # total mass of " A" + "A"
    p_b = (1.0 - p_a) * 0.8
    out = {
        " A": math.log(p_a * 0.7),
        "A": math.log(p_a * 0.3),
        " B": math.log(p_b),
        "Summary": math.log((1.0 - p_a) * 0.1),
        " tie": math.log((1.0 - p_a) * 0.05),
    }
    # scores: a peaked distribution around a prompt-dependent centre
    centre = 1 + 4 * _unit("score", prompt)
    weights = {s: math.exp(-((s - centre) ** 2)) for s in range(1, 6)}
    total = sum(weights.values())
    for s, w in weights.items():
        out[str(s)] = math.log(0.04 * (1.0 - p_a) * w / total)
    return out


#: token ids of the fake vLLM model's vocabulary (the tokens of :func:`label_logprobs` and "B")
VLLM_TOKEN_IDS = {
    "A": 32,
    "B": 33,
    " A": 362,
    " B": 426,
    "Summary": 19791,
    " tie": 18623,
    **{str(s): 15 + s for s in range(1, 6)},
}


def vllm_token_logprobs(prompt: str) -> dict[str, float]:
    """:func:`label_logprobs` plus "B" (no space), which is never among the top tokens, so
    only ``logprob_token_ids`` can bring it back."""
    out = label_logprobs(prompt)
    out["B"] = math.log(1e-6)
    return out


def expected_p_first(prompt: str) -> float:
    """P(A) / (P(A) + P(B)) implied by :func:`label_logprobs` (the value a client must find)."""
    lp = label_logprobs(prompt)
    p_a = math.exp(lp[" A"]) + math.exp(lp["A"])
    p_b = math.exp(lp[" B"])
    return p_a / (p_a + p_b)


def expected_score(prompt: str, scale=(1, 5)) -> float:
    """Expected score over the score tokens implied by :func:`label_logprobs`."""
    lp = label_logprobs(prompt)
    probs = {s: math.exp(lp[str(s)]) for s in range(scale[0], scale[1] + 1)}
    total = sum(probs.values())
    return sum(s * p for s, p in probs.items()) / total


def sampled_answer(prompt: str, seed, index: int) -> str:
    """The text the fake model samples: a verdict for pairwise prompts, a score otherwise."""
    u = _unit("sample", prompt, seed, index)
    if "scale of 1" in prompt or "score" in prompt.lower():
        return ["1", "2", "3 out of 5", "Score: 4", "5", "4.5"][int(u * 6)]
    return ["A", "B", "Summary A", "Summary B is more coherent.", "tie", "I cannot decide."][
        int(u * 6)
    ]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    server: _Server

    def log_message(self, format, *args):  # keep test output clean
        return

    # -- helpers -------------------------------------------------------------------------
    def _send(self, status: int, payload: dict, headers: dict | None = None) -> bool:
        body = json.dumps(payload).encode()
        return self._send_raw(status, body, "application/json", headers=headers)

    def _send_raw(
        self, status: int, body: bytes, content_type: str, length=None, headers=None
    ) -> bool:
        """Send ``body``; False when the client gave up (timeout test) or was killed."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body) if length is None else length))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # nothing to answer to
            return False
        return True

    def _fault(self, fake: FakeOpenAI, body: dict, prompt: str, action: dict) -> bool:
        """Send the reply of a fault; False when the fault only delays the right answer."""
        kind = action["kind"]
        if kind == "slow":
            if fake._stopped.wait(action.get("seconds", 1.0)):
                self.close_connection = True  # the server stopped meanwhile: no answer
                return True
            return False
        if kind == "status":
            headers = {}
            if action.get("retry_after") is not None:
                headers["Retry-After"] = str(action["retry_after"])
            if action.get("retry_after_ms") is not None:
                headers["retry-after-ms"] = str(action["retry_after_ms"])
            self._error(
                action.get("status", 500),
                action.get("message", "scripted failure"),
                headers=headers,
            )
            return True
        if kind == "hang-up":
            self.close_connection = True
            return True
        good = fake._completion(body, prompt)
        raw = None
        content_type = "application/json"
        if kind == "not-json":
            raw = action.get("body", "<html><body><h1>502 Bad Gateway</h1></body></html>")
            raw = raw.encode()
        elif kind == "text-plain":
            raw = action.get("body", "upstream overloaded, try again later").encode()
            content_type = "text/plain"
        elif kind == "bad-utf8":
            raw = b'{"id": "x", "choices": ["' + bytes([0xFF, 0xFE, 0xFD]) + b'"]}'
        elif kind == "json-array":
            raw = b"[]"
        elif kind == "error-200":
            payload = {"error": {"message": "upstream model crashed", "type": "server_error"}}
            raw = json.dumps(payload).encode()
        elif kind == "null-choices":
            good["choices"] = None
        elif kind == "empty-choices":
            good["choices"] = []
        elif kind == "null-message":
            for choice in good["choices"]:
                choice["message"] = None
        elif kind == "bad-logprobs":
            for choice in good["choices"]:
                choice["logprobs"] = {
                    "content": [{"token": None, "logprob": None, "top_logprobs": None}]
                }
        elif kind == "truncated":
            whole = json.dumps(good).encode()
            self._send_raw(200, whole[: len(whole) // 2], content_type, length=len(whole))
            self.close_connection = True
            return True
        else:
            raise ValueError(f"unknown fault kind {kind!r}; see FAULT_KINDS")
        if raw is None:
            raw = json.dumps(good).encode()
        self._send_raw(200, raw, content_type)
        return True

    def _error(self, status: int, message: str, code: str | None = None, headers=None) -> None:
        self._send(
            status,
            {"error": {"message": message, "type": "invalid_request_error", "code": code}},
            headers,
        )

    def _authorised(self) -> bool:
        fake = self.server.fake
        if fake.api_key is None:
            return True
        if self.headers.get("Authorization") == f"Bearer {fake.api_key}":
            return True
        self._error(401, "Incorrect API key provided.", "invalid_api_key")
        return False

    # -- routes --------------------------------------------------------------------------
    def do_GET(self):
        fake = self.server.fake
        fake._heard(self)
        if not self._authorised():
            return
        if fake_batches.handle_get(self, fake, self.path.rstrip("/")):
            return
        if not fake.serve_models:
            self._error(404, "Not Found")
            return
        if self.path.rstrip("/") == "/v1/models":
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in fake.models
            ]
            self._send(200, {"object": "list", "data": data})
            return
        if self.path.startswith("/v1/models/"):
            model = self.path[len("/v1/models/") :]
            if model in fake.models:
                self._send(200, {"id": model, "object": "model", "created": 0, "owned_by": "fake"})
            else:
                self._error(404, f"The model `{model}` does not exist", "model_not_found")
            return
        self._error(404, "Not Found")

    def do_POST(self):
        fake = self.server.fake
        fake._heard(self)
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        if self.path.startswith(("/v1/files", "/v1/batches")):
            if self._authorised() and not fake_batches.handle_post(
                self, fake, self.path.rstrip("/"), raw
            ):
                self._error(404, "Not Found")
            return
        body = json.loads(raw or b"{}")
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, "Not Found")
            return
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        fake._record(body, prompt)
        with fake._lock:
            fake._in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake._in_flight)
        try:
            self._chat(fake, body, prompt)
        finally:
            with fake._lock:
                fake._in_flight -= 1

    def _chat(self, fake: FakeOpenAI, body: dict, prompt: str) -> None:
        if not self._authorised():
            return
        if body.get("model") not in fake.models:
            self._error(404, f"The model `{body.get('model')}` does not exist", "model_not_found")
            return
        if fake.stall_after is not None and PROBE_MARK not in prompt:
            with fake._lock:
                # count admissions (not answers) so concurrent requests cannot overshoot
                stall = fake._n_admitted >= fake.stall_after
                if stall:
                    fake.n_stalled += 1
                else:
                    fake._n_admitted += 1
            if stall:
                fake._release.wait()
                if fake._stopping or fake._abandon:
                    self.close_connection = True  # hang up without an answer
                    return
        action = fake._next_action(prompt)
        if action is not None and action["kind"] == "bad-logprobs" and not body.get("logprobs"):
            action = None  # nothing asked for logprobs: the answer is fine
        if action is not None and self._fault(fake, body, prompt, action):
            with fake._lock:
                fake.n_faults += 1
            return
        if body.get("logprobs") and fake.reject_logprobs:
            self._error(400, "logprobs are not supported by this server", "unsupported_parameter")
            return
        if fake.delay and PROBE_MARK not in prompt:
            time.sleep(fake.delay)
        if fake.style == "vllm" and body.get("logprob_token_ids"):
            unknown = [t for t in body["logprob_token_ids"] if t not in VLLM_TOKEN_IDS.values()]
            if unknown:
                self._error(400, f"logprob_token_ids {unknown} are outside the vocabulary")
                return
        completion = fake._completion(body, prompt)
        if fake.style == "vllm":
            completion = _as_vllm(completion, body, prompt)
        sent = self._send(200, completion)
        with fake._lock:
            fake.n_answered += 1
            if sent and PROBE_MARK not in prompt:
                fake.answered_prompts.append(prompt)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeOpenAI

    def handle_error(self, request, client_address):  # clients hang up on purpose in tests
        return


class FakeOpenAI:
    """Scripted chat-completions server. Use as a context manager or via the fixture.

    Parameters
    ----------
    models : models the server knows; requests for others get 404 ``model_not_found``.
    api_key : when set, requests must carry ``Authorization: Bearer <api_key>`` (else 401).
    offer_logprobs : False answers without ``logprobs`` even when asked (as some servers do).
    reject_logprobs : True answers 400 to any request asking for logprobs.
    support_n : False returns one choice whatever ``n`` says.
    stall_after : answer that many work requests, then hold the others until ``release()``.
    delay : seconds to wait before every answer (slow replies).
    style : "openai", or "vllm" for replies shaped as vLLM's server writes them.
    """

    def __init__(
        self,
        models=("fake-model",),
        *,
        api_key: str | None = None,
        offer_logprobs: bool = True,
        reject_logprobs: bool = False,
        support_n: bool = True,
        serve_models: bool = True,
        stall_after: int | None = None,
        delay: float = 0.0,
        style: str = "openai",
    ):
        if style not in ("openai", "vllm"):
            raise ValueError(f"style must be 'openai' or 'vllm', got {style!r}")
        self.style = style
        self.models = list(models)
        self.api_key = api_key
        self.offer_logprobs = offer_logprobs
        self.reject_logprobs = reject_logprobs
        self.support_n = support_n
        self.serve_models = serve_models
        self.stall_after = stall_after
        self.delay = float(delay)
        self.n_faults = 0
        self._rules: list[dict] = []
        self.bodies: list[dict] = []
        #: every request that reached the server: (method, path, Authorization header)
        self.requests: list[tuple[str, str, str | None]] = []
        self.prompts: list[str] = []
        self.n_answered = 0
        self._n_admitted = 0
        self.n_stalled = 0
        self.max_in_flight = 0
        self._in_flight = 0
        self._script: deque[dict] = deque()
        self._lock = threading.Lock()
        self.answered_prompts: list[str] = []
        self._release = threading.Event()
        self._stopped = threading.Event()
        self._stopping = False
        self._abandon = False
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        # the Batch API (tests/judge/fake_batches.py): files, batches and their scripting
        self.files: dict[str, dict] = {}
        self.batches: dict[str, dict] = {}
        self.n_batch_answered = 0
        self.batch_delay = 0.0
        self.batch_fail_marker: str | None = None
        self.batch_expire_after: int | None = None
        self.batch_hold: threading.Event | None = None
        self.batch_hold_after = 0
        self.hold_batch_create: threading.Event | None = None

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping = True
        self._stopped.set()
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def release(self) -> None:
        """Let stalled requests through and stop stalling."""
        self.stall_after = None
        self._release.set()

    def abandon_stalled(self) -> None:
        """Hang up on stalled requests without answering, and stop stalling."""
        self._abandon = True
        self.stall_after = None
        self._release.set()

    # -- scripting -----------------------------------------------------------------------
    def fail_next(
        self,
        status: int,
        times: int = 1,
        *,
        retry_after=None,
        retry_after_ms=None,
        message: str = "scripted failure",
    ) -> None:
        """Answer the next ``times`` chat calls with HTTP ``status`` (and Retry-After headers)."""
        for _ in range(times):
            self._script.append(
                {
                    "kind": "status",
                    "status": status,
                    "retry_after": retry_after,
                    "retry_after_ms": retry_after_ms,
                    "message": message,
                }
            )

    def slow_next(self, seconds: float, times: int = 1) -> None:
        """Delay the next ``times`` chat calls by ``seconds`` before answering."""
        for _ in range(times):
            self._script.append({"kind": "slow", "seconds": seconds})

    def fault_next(self, kind: str, times: int = 1, **options) -> None:
        """Answer the next ``times`` chat calls (probes excepted) with fault ``kind``."""
        _check_kind(kind)
        for _ in range(times):
            self._script.append({"kind": kind, **options})

    def fault(self, marker: str, kind: str, times: int | None = None, **options) -> None:
        """Answer every chat call whose prompt contains ``marker`` with fault ``kind``.

        ``times`` limits how many calls get it (None: all, the prompt always fails). Probes
        are spared unless ``marker`` is :data:`PROBE_MARK`. Rules are tried in the order given,
        before ``fault_next``'s script.
        """
        _check_kind(kind)
        with self._lock:
            self._rules.append(
                {"marker": marker, "left": times, "action": {"kind": kind, **options}}
            )

    def clear_faults(self) -> None:
        """Forget every fault rule and scripted reply."""
        with self._lock:
            self._rules.clear()
            self._script.clear()

    # -- counts --------------------------------------------------------------------------
    @property
    def n_chat_calls(self) -> int:
        """Chat-completion requests received (including ones answered with an error)."""
        return len(self.bodies)

    @property
    def work_prompts(self) -> list[str]:
        """Prompts received, leaving out the backend's one-token probes."""
        with self._lock:
            return [p for p in self.prompts if PROBE_MARK not in p]

    def _heard(self, handler) -> None:
        with self._lock:
            self.requests.append(
                (handler.command, handler.path, handler.headers.get("Authorization"))
            )

    def _record(self, body: dict, prompt: str) -> None:
        with self._lock:
            self.bodies.append(body)
            self.prompts.append(prompt)

    @property
    def calls_by_prompt(self) -> Counter:
        """Work requests received per prompt (faulty answers included, probes left out)."""
        return Counter(self.work_prompts)

    @property
    def answers_by_prompt(self) -> Counter:
        """Proper answers delivered per prompt (probes left out): what a client paid for."""
        with self._lock:
            return Counter(self.answered_prompts)

    def _next_action(self, prompt: str) -> dict | None:
        probe = PROBE_MARK in prompt
        with self._lock:
            for rule in self._rules:
                if rule["marker"] not in prompt or (probe and rule["marker"] != PROBE_MARK):
                    continue
                if rule["left"] is not None:
                    if rule["left"] <= 0:
                        continue
                    rule["left"] -= 1
                return rule["action"]
            if self._script and not probe:
                return self._script.popleft()
        return None

    # -- answers -------------------------------------------------------------------------
    def _completion(self, body: dict, prompt: str) -> dict:
        n = int(body.get("n") or 1) if self.support_n else 1
        seed = body.get("seed")
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 16
        want_logprobs = bool(body.get("logprobs")) and self.offer_logprobs
        top_k = int(body.get("top_logprobs") or 0)
        choices = []
        for i in range(n):
            message = {"role": "assistant", "content": None, "refusal": None}
            finish = "stop"
            logprobs = None
            if "REFUSE" in prompt:
                message["refusal"] = "I'm sorry, I can't help with that."
            elif "FILTER" in prompt:
                message["content"] = ""
                finish = "content_filter"
            elif "EMPTY" in prompt:
                message["content"] = ""
            elif want_logprobs:
                lps = sorted(label_logprobs(prompt).items(), key=lambda kv: -kv[1])
                chosen, chosen_lp = lps[0]
                message["content"] = chosen
                finish = "length" if max_tokens <= 1 else "stop"
                top = [
                    {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in lps[:top_k]
                ]
                logprobs = {
                    "content": [
                        {
                            "token": chosen,
                            "logprob": chosen_lp,
                            "bytes": list(chosen.encode()),
                            "top_logprobs": top,
                        }
                    ],
                    "refusal": None,
                }
            else:
                message["content"] = sampled_answer(prompt, seed, i)
            choices.append(
                {"index": i, "message": message, "finish_reason": finish, "logprobs": logprobs}
            )
        n_prompt = max(1, len(prompt) // 4)
        n_completion = sum(max(1, len(c["message"]["content"] or "") // 4) for c in choices)
        return {
            "id": f"chatcmpl-{len(self.bodies)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": choices,
            "usage": {
                "prompt_tokens": n_prompt,
                "completion_tokens": n_completion,
                "total_tokens": n_prompt + n_completion,
            },
        }


def _vllm_entry(token: str, lp: float) -> dict:
    # vLLM clamps -inf to -9999.0 and sends the UTF-8 bytes of the decoded token
    return {"token": token, "logprob": max(lp, -9999.0), "bytes": list(token.encode())}


def _as_vllm(completion: dict, body: dict, prompt: str) -> dict:
    """``completion`` in the shape of vLLM's ChatCompletionResponse (non-streaming).

    Fields as in vllm/entrypoints/openai/chat_completion/protocol.py; top logprobs as its
    serving code builds them: the answer token first, then the top ``top_logprobs`` by rank,
    or, with ``logprob_token_ids``, exactly those tokens (after the answer token).
    """
    out = dict(completion)
    choices = []
    for choice in completion["choices"]:
        choice = dict(choice)
        message = {
            **choice["message"],
            "annotations": None,
            "audio": None,
            "function_call": None,
            "tool_calls": [],
            "reasoning": None,
        }
        if choice["logprobs"] is not None:
            lps = vllm_token_logprobs(prompt)
            answer = max(lps, key=lps.get)
            message["content"] = answer
            ranked = sorted(lps, key=lambda t: -lps[t])
            by_id = {i: t for t, i in VLLM_TOKEN_IDS.items()}
            wanted = body.get("logprob_token_ids")
            if wanted:
                listed = [answer] + [by_id[i] for i in wanted if by_id[i] != answer]
            else:
                k = int(body.get("top_logprobs") or 0)
                listed = ([answer] + [t for t in ranked if t != answer])[:k]
            top = [_vllm_entry(t, lps[t]) for t in listed]
            choice["logprobs"] = {
                "content": [{**_vllm_entry(answer, lps[answer]), "top_logprobs": top}]
            }
        choice["message"] = message
        choice.update(stop_reason=None, token_ids=None)
        choices.append(choice)
    out["choices"] = choices
    out["usage"] = {**completion["usage"], "prompt_tokens_details": None}
    out.update(
        service_tier=None,
        system_fingerprint=None,
        prompt_logprobs=None,
        prompt_token_ids=None,
        kv_transfer_params=None,
    )
    return out


def _check_kind(kind: str) -> None:
    if kind not in FAULT_KINDS:
        raise ValueError(f"unknown fault kind {kind!r}; one of {', '.join(FAULT_KINDS)}")


@pytest.fixture(name="fake_openai")
def fake_openai_fixture():
    """A started :class:`FakeOpenAI` (default settings), stopped after the test.

    Import ``fake_openai_fixture`` into a test module to use the ``fake_openai`` fixture
    (the different name keeps test arguments from shadowing the import).
    """
    with FakeOpenAI() as fake:
        yield fake


if __name__ == "__main__":  # serve by hand: python tests/judge/fake_openai.py
    with FakeOpenAI() as fake:
        print(fake.base_url, flush=True)
        threading.Event().wait()
