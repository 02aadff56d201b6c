"""Per-token log-probabilities of texts under a transformers causal judge.

The public entry point of the probes (self-preference, contamination): perplexity and Min-K%
Prob follow from what :func:`token_logprobs` returns (``ranking.min_k_prob``,
``ranking.perplexity``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from judge.backends.base import BackendError, Progress

__all__ = ["token_logprobs"]


def token_logprobs(
    backend,
    texts: Sequence[str],
    prefixes: Sequence[str] | None = None,
    *,
    batch_size: int | None = None,
    progress: Progress | None = None,
) -> list[np.ndarray]:
    """Log-probability of each token of each text under a causal transformers backend.

    Parameters
    ----------
    backend : judge.backends.hf.HFBackend
        A causal (Llama-style) model. Seq2seq models and API backends raise ``BackendError``.
    texts : sequence of str
        The texts to score, tokenised on their own (no special tokens, no chat template).
    prefixes : sequence of str, optional
        One per text: what the text follows (e.g. the source article). The prefix's own tokens
        are not scored. Texts with the same prefix share its key/value cache (computed once)
        when the backend's ``share_prefix`` is on; the results equal unshared ones up to float
        rounding. Without a prefix a text follows the model's prefix token (BOS, else EOS).
    batch_size : int, optional
        Largest number of sequences per forward pass (default: the backend's, which then keeps
        any out-of-memory reduction).
    progress : callable, optional
        Called with the number of texts finished after each batch.

    Returns
    -------
    list of numpy.ndarray
        ``out[i]`` has one float64 natural-log probability per token of ``texts[i]``, in order;
        an empty text gives an empty array. When the tokenizer has neither BOS nor EOS and no
        prefix is given, a text's first token has nothing before it and is NaN.

    Raises
    ------
    BackendError
        Not a causal transformers backend; a text longer than the backend's ``max_length``
        (checked before any forward pass); a text that runs out of memory even alone.
    ValueError
        ``prefixes`` of another length than ``texts``, or a text / prefix that is not a string.
    """
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise ValueError(f"texts[{i}] is {type(t).__name__}, not a string")
    if prefixes is not None:
        prefixes = list(prefixes)
        if len(prefixes) != len(texts):
            raise ValueError(f"{len(prefixes)} prefixes for {len(texts)} texts; give one per text")
        for i, p in enumerate(prefixes):
            if not isinstance(p, str):
                raise ValueError(f"prefixes[{i}] is {type(p).__name__}, not a string")
    if getattr(backend, "kind", None) != "causal" or not hasattr(backend, "_forward"):
        what = getattr(backend, "kind", None) or type(backend).__name__
        raise BackendError(
            f"token log-probabilities need a transformers causal model (Llama-style); "
            f"{getattr(backend, 'name', backend)!r} is {what}"
        )
    if not texts:
        return []
    from judge.backends.hf.logprobs import text_logprobs

    size = backend.batch_size if batch_size is None else int(batch_size)
    if size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    out, size = text_logprobs(backend, texts, prefixes, size, progress)
    if batch_size is None:
        backend.batch_size = size
    return out
