"""Transformers backend: seq2seq (FlanT5-style) and causal (Llama-style) judges on CPU or GPU.

Label probabilities come from one forward pass per prompt: the next-token distribution after
the prompt (causal) or after the primed decoder (seq2seq), read at the label words' tokens.
Prompts are batched longest first, padded, and answered in input order; a batch that runs out
of memory is halved and retried. Causal requests sharing a beginning (``LabelRequest.prefix``)
run on a prefix tree of key/value caches, exactly equal to running them one by one.

Modules:

- :mod:`~judge.backends.hf.backend`: :class:`HFBackend` (construction, prompt rendering and
  label tokens, label probabilities);
- :mod:`~judge.backends.hf.loading`: device, dtype, config / weights / tokenizer, and the
  messages when a model cannot be loaded;
- :mod:`~judge.backends.hf.prefix_cache`: the causal forward pass and the prefix-KV cache
  (``MIN_SHARED_TOKENS``, the prefix tree);
- :mod:`~judge.backends.hf.prepared`: a label request tokenised, with its label token ids
  (what the two modules above share);
- :mod:`~judge.backends.hf.generation`: seeded sampling of free-text answers.
- :mod:`~judge.backends.hf.logprobs`: per-token log-probabilities of given texts (after an
  optional prefix whose key/value cache is shared), behind ``judge.token_logprobs``.

torch and transformers are imported only when a backend is constructed.
"""

from judge.backends.hf.backend import HFBackend
from judge.backends.hf.prefix_cache import MIN_SHARED_TOKENS

__all__ = ["HFBackend", "MIN_SHARED_TOKENS"]
