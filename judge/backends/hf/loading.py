"""Loading a transformers judge: settings, device and dtype, config / weights / tokenizer.

Every failure to load becomes a :class:`BackendError` that names the model and says what to
do (a missing folder, offline mode, a model that is not a language model). torch and
transformers are imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

import os

from judge.backends.base import BackendError

_DTYPES = {
    "float32": "float32",
    "fp32": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
}


def check_settings(batch_size, use_chat_template, max_length) -> None:
    """Raise ValueError for settings no backend can run with (before anything is loaded)."""
    if use_chat_template not in ("auto", True, False):
        raise ValueError(
            f"use_chat_template must be 'auto', True or False, got {use_chat_template!r}"
        )
    if int(batch_size) < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if max_length is not None and int(max_length) < 1:
        raise ValueError(f"max_length must be a positive number of tokens, got {max_length}")


def pick_device(torch, device: str) -> str:
    """``device`` itself, or for "auto" cuda when available, else cpu."""
    if device != "auto":
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


def to_device(tensor, device):
    """A new CPU ``tensor`` on ``device``. On CUDA it goes through pinned memory without
    blocking: a plain copy from pageable memory waits for every kernel already queued, so a
    copy per pass would leave the GPU idle while Python prepares the next one."""
    if device.type != "cuda":
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)


def pick_dtype(torch, dtype, device):
    """A torch dtype: given, named (see ``_DTYPES``), or "auto" (bf16/fp16 on GPU, fp32 on CPU)."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be 'auto' or one of {sorted(_DTYPES)}, got {dtype!r}")
    return getattr(torch, _DTYPES[dtype])


def cannot_load(name: str, what: str, exc: BaseException) -> BackendError:
    """The error for a ``what`` (configuration, weights, tokenizer) of ``name`` that failed."""
    looks_local = name.startswith(("/", "./", "../", "~"))
    if looks_local and not os.path.isdir(os.path.expanduser(name)):
        return BackendError(
            f"cannot load model {name!r}: there is no folder at that path. Give an existing "
            "folder saved with save_pretrained, or a Hugging Face model id."
        )
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")
    hint = (
        "Offline mode (HF_HUB_OFFLINE) is on: only models already downloaded or saved in "
        "a local folder can be used."
        if offline
        else "Check the model id (or local folder) and the network connection."
    )
    return BackendError(f"cannot load the {what} of model {name!r}: {first.rstrip('.')}. {hint}")


def load_config(name: str):
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(name)
    except (OSError, ValueError, KeyError) as exc:
        raise cannot_load(name, "configuration", exc) from exc


def load_model(name: str, config, kind: str, dtype, device):
    """The model of ``kind`` ("seq2seq" / "causal") on ``device`` in ``dtype``, in eval mode."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

    auto = AutoModelForSeq2SeqLM if kind == "seq2seq" else AutoModelForCausalLM
    try:
        model = auto.from_pretrained(name, config=config, dtype=dtype)
    except ValueError as exc:
        if "Unrecognized configuration class" in str(exc):
            raise BackendError(
                f"{name!r} (model type {getattr(config, 'model_type', '?')!r}) is not a "
                f"{kind} language model that transformers can load; the judge needs a "
                "causal LM (Llama-style) or a seq2seq LM (T5-style). Check `kind`."
            ) from exc
        raise cannot_load(name, "weights", exc) from exc
    except OSError as exc:
        raise cannot_load(name, "weights", exc) from exc
    model.to(device)
    model.eval()
    return model


def load_tokenizer(name: str):
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError, KeyError) as exc:
        raise cannot_load(name, "tokenizer", exc) from exc


def short_name(name: str) -> str:
    """The folder's base name for a local model, the hub id otherwise (the ``model_id``)."""
    path = name.rstrip("/\\")
    return os.path.basename(path) if os.path.isdir(path) else path


def eos_token_ids(model, tokenizer) -> set[int]:
    """Every token id that ends an answer (generation config and tokenizer)."""
    ids: set[int] = set()
    gen = getattr(model, "generation_config", None)
    eos = getattr(gen, "eos_token_id", None) if gen is not None else None
    for value in (eos, tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif value is not None:
            ids.update(int(v) for v in value)
    return ids


def keep_last_kwargs(model) -> dict:
    """``{"logits_to_keep": 1}`` when the model's forward accepts it (only last logits)."""
    try:
        import inspect

        params = inspect.signature(model.forward).parameters
        return {"logits_to_keep": 1} if "logits_to_keep" in params else {}
    except (TypeError, ValueError):
        return {}
