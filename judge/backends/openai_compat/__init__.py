"""Backend for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, TGI, Ollama,
llama.cpp server), through the official ``openai`` client.

Probabilities come from ``logprobs``/``top_logprobs`` of the first answer token when the server
offers them; otherwise the runners sample text. Requests run concurrently in a thread pool
(at most ``max_concurrency`` at a time); rate limits (429), server errors (5xx), timeouts and
dropped connections are retried with exponential backoff and jitter, honouring Retry-After,
and so are 200 replies that are no chat completion (not JSON, ``text/plain``, no choices, a
null message, malformed logprobs). A request that still fails, is refused, or is answered
with nothing comes back as a result with ``error`` set — never as an exception that ends the
run, never as a made-up score.

The API key comes from the argument (the app reads its Streamlit secret in the page layer and
passes it in) or the ``OPENAI_API_KEY`` environment variable. It lives only inside the
``openai`` client object: it is not kept on the backend, not returned by
:meth:`OpenAIBackend.describe` and scrubbed from error texts, so it never reaches the run
store, logs or exported tables.

Modules:

- :mod:`~judge.backends.openai_compat.backend`: :class:`OpenAIBackend` (the check, label
  probabilities, sampled answers);
- :mod:`~judge.backends.openai_compat.client`: one call with retries, and the request pool;
- :mod:`~judge.backends.openai_compat.replies`: reading replies, :class:`Malformed`;
- :mod:`~judge.backends.openai_compat.logprobs`: label probabilities from top logprobs;
- :mod:`~judge.backends.openai_compat.endpoint`: the API key and the endpoint's public URL.

The import path ``judge.backends.openai_compat`` offers every public name.
"""

from judge.backends.openai_compat import endpoint
from judge.backends.openai_compat.backend import PROBE_PROMPT, OpenAIBackend, OpenAILabelResult
from judge.backends.openai_compat.endpoint import *  # noqa: F403 - every name of endpoint.__all__
from judge.backends.openai_compat.logprobs import label_probs_from_top
from judge.backends.openai_compat.replies import Malformed, read_choices

__all__ = [
    "PROBE_PROMPT",
    "Malformed",
    "OpenAIBackend",
    "OpenAILabelResult",
    "label_probs_from_top",
    "read_choices",
    *endpoint.__all__,
]
