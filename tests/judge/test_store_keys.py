"""Run-store keys: what changes an answer changes the key, nothing else does."""

from __future__ import annotations

from judge.store.keys import make_key, prompt_hash

BACKEND = {"kind": "openai", "model": "m", "base_url": "http://h/v1"}
TEMPLATE = {"id": "liusie-c2", "version": "1", "key": "abc"}


def key(**over):
    kw = dict(
        backend=BACKEND,
        template=TEMPLATE,
        kind="generate",
        prompt_sha=prompt_hash("p"),
        labels=None,
        decoding={"temperature": 1.0, "top_p": 1.0},
        sample=0,
    )
    kw.update(over)
    return make_key(**kw)


def test_key_changes_with_what_changes_answers():
    base = key()
    assert key() == base  # deterministic
    changed = [
        key(backend={**BACKEND, "model": "m2"}),
        key(backend={**BACKEND, "base_url": "http://other/v1"}),
        key(backend={**BACKEND, "kind": "hf"}),
        key(template={**TEMPLATE, "version": "2"}),
        key(template={**TEMPLATE, "key": "abd"}),
        key(template={**TEMPLATE, "id": "liusie-c1"}),
        key(decoding={"temperature": 0.7, "top_p": 1.0}),
        key(prompt_sha=prompt_hash("p ")),
        key(prompt_sha=prompt_hash("p", system="be fair")),
        key(prompt_sha=prompt_hash("p", decoder_prefix="Summary")),
        key(labels=["A", "B"]),
        key(sample=1),
        key(kind="label"),
    ]
    assert len({base, *changed}) == len(changed) + 1


def test_key_ignores_throughput_settings_and_secrets():
    noisy = {**BACKEND, "timeout": 5, "batch_size": 64, "max_concurrency": 3, "api_key": "sk-x"}
    assert key(backend=noisy) == key()


def test_prefix_and_prompt_hash_as_one_text():
    assert prompt_hash("b", prefix="a") == prompt_hash("ab")
