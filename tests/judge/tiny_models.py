"""Tiny random-weight T5 and Llama models with an offline tokenizer, saved to disk.

Tests load them back through ``from_pretrained`` so the real transformers path of
``judge.backends.hf`` runs without any download. Nothing here touches the network: the
tokenizer is a byte-level BPE trained with the ``tokenizers`` library on a small corpus that
contains the words judge prompts use ("Summary A", "Answer:", digits, ...).

Use from a test module::

    from tests.judge.tiny_models import tiny_model_dirs

    @pytest.fixture(scope="session")
    def models(tmp_path_factory):
        return tiny_model_dirs(tmp_path_factory)

(tests/judge/conftest.py gives its tests such a fixture, ``model_dirs``).

The models are built once per pytest session (cached in this module), whatever number of test
modules ask for them.
"""

from __future__ import annotations

import os
from pathlib import Path

# Tests must never reach the Hub; set before transformers is imported anywhere.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

#: HFBackend settings of a CPU float32 reference. Tests comparing against one pin these: the
#: backend's device="auto" / dtype="auto" pick CUDA and bfloat16 on a GPU machine.
CPU_FLOAT32 = {"device": "cpu", "dtype": "float32"}

SPECIAL_TOKENS = ["<pad>", "</s>", "<s>", "<unk>", "<|system|>", "<|user|>", "<|assistant|>"]

#: A Zephyr-like chat template: role markers, end-of-turn ``</s>`` and a generation prompt.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] }}</s>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

_WORDS = (
    "the a an cat dog sat ran on mat park story summary passage article text news title "
    "coherent consistent fluent relevant natural engaging better good grammatically correct "
    "which is more or and with of to in it was were he she they very quite not but because "
    "rate score response provide between that measures how please explain your decision "
    "scale lowest highest question prompt fragment agree meaning preserved"
).split()


def _corpus() -> list[str]:
    """Sentences shaped like judge prompts, so the BPE learns " A", " B", digits, "Answer:"."""
    import random

    rng = random.Random(0)
    lines = []
    for _ in range(400):
        n_words = rng.randint(5, 25)
        text = " ".join(rng.choice(_WORDS) for _ in range(n_words))
        lines.append(
            f"Passage:\n{text}.\n\nSummary A: {text[:30]}\n\nSummary B: {text[-30:]}\n\n"
            "Which Summary is more coherent, Summary A or Summary B?\nAnswer: A"
        )
        lines.append(f"Score: {rng.randint(1, 10)} out of 10. Answer: B. Summary B. Response A.")
    lines += [" ".join(str(i) for i in range(1, 11))] * 50
    lines += ["Answer: A", "Answer: B", "Answer: C", " A B C 1 2 3 4 5"] * 50
    return lines


def build_tokenizer(style: str = "llama"):
    """A PreTrainedTokenizerFast trained offline.

    Parameters
    ----------
    style : {"llama", "t5"}
        "llama" prepends ``<s>`` and carries a chat template; "t5" appends ``</s>`` (as the
        T5 tokenizer does) and has no chat template.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(), trainer)
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    if style == "llama":
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", bos)]
        )
    elif style == "t5":
        tok.post_processor = processors.TemplateProcessing(
            single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos)]
        )
    else:
        raise ValueError(f"style must be 'llama' or 't5', got {style!r}")
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        additional_special_tokens=["<|system|>", "<|user|>", "<|assistant|>"],
    )
    if style == "llama":
        fast.chat_template = CHAT_TEMPLATE
    return fast


def llama_fields(tok) -> dict:
    """The config fields of a tiny Llama-architecture model (Llama, Mistral) for ``tok``:
    hidden size 32, 2 layers, 4 attention heads over 2 key-value heads."""
    return dict(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        # a wide init spreads the next-token distribution, so label probabilities differ
        # clearly between prompts and the equality tests have something to compare
        initializer_range=0.3,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )


def save_random(model_class, config, tok, path, random_state=0) -> Path:
    """Build ``model_class(config)`` with random weights (seeded, fp32) and save it with ``tok``."""
    import torch

    torch.manual_seed(random_state)
    model = model_class(config).to(torch.float32).eval()
    path = Path(path)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def save_tiny_llama(path, *, chat_template=True, random_state=0) -> Path:
    """Save a random-weight Llama-architecture model (fp32, :func:`llama_fields`) and its
    tokenizer to ``path``."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = build_tokenizer("llama")
    if not chat_template:
        tok.chat_template = None
    config = LlamaConfig(
        **llama_fields(tok), max_position_embeddings=4096, tie_word_embeddings=False
    )
    return save_random(LlamaForCausalLM, config, tok, path, random_state)


def save_tiny_t5(path, *, random_state=0) -> Path:
    """Save a random-weight T5 (FlanT5-style gated-gelu) model and its tokenizer to ``path``:
    d_model 32, 2 encoder and 2 decoder layers, 4 heads."""
    from transformers import T5Config, T5ForConditionalGeneration

    tok = build_tokenizer("t5")
    config = T5Config(
        vocab_size=len(tok),
        d_model=32,
        d_kv=32 // 4,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        feed_forward_proj="gated-gelu",
        tie_word_embeddings=False,
        initializer_factor=1.0,
        decoder_start_token_id=tok.pad_token_id,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
    )
    return save_random(T5ForConditionalGeneration, config, tok, path, random_state)


_CACHE: dict[str, dict[str, Path]] = {}


def tiny_model_dirs(tmp_path_factory) -> dict[str, Path]:
    """Build (once per session) and return {"llama", "llama-nochat", "t5"} model folders."""
    if "dirs" not in _CACHE:
        root = tmp_path_factory.mktemp("tiny_models")
        _CACHE["dirs"] = {
            "llama": save_tiny_llama(root / "tiny-llama"),
            "llama-nochat": save_tiny_llama(root / "tiny-llama-nochat", chat_template=False),
            "t5": save_tiny_t5(root / "tiny-t5"),
        }
    return _CACHE["dirs"]


_TEXT_WORDS = "the cat sat on mat dog ran park story very quite not coherent good".split()


def random_text(rng, lo: int, hi: int) -> str:
    """``lo`` to ``hi`` words drawn by ``rng`` (a random.Random) from a few the tokenizer knows."""
    return " ".join(rng.choice(_TEXT_WORDS) for _ in range(rng.randint(lo, hi)))
