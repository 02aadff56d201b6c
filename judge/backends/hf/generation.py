"""Free-text answers from a transformers judge: seeded sampling, batched, in request order.

Each request draws from its own random generator seeded by (seed, sample index, system,
prompt), so an answer depends only on its request, never on the batch it ran in. Sampling
(temperature, nucleus top-p) is done on CPU in float64; ``temperature == 0`` is greedy.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence

from judge.backends._batching import run_batched
from judge.backends.base import GenerateRequest, GenerateResult, Progress


class Generation:
    """:meth:`generate` and its sampling loop.

    A mixin of :class:`judge.backends.hf.HFBackend`; it uses the backend's model, tokenizer,
    ``kind``, ``max_length``, ``batch_size``, ``stats`` and its helpers ``_render``,
    ``_answer_prefix_of``, ``_encode_many``, ``_pad`` and ``_count_oom``.
    """

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress | None = None
    ) -> list[GenerateResult]:
        """Sample one answer per request (temperature / top-p / seed from its ``decoding``).

        Each request draws from its own random generator seeded by (seed, sample index,
        prompt), so a result depends only on its request, not on the batch it ran in or the
        other requests. ``temperature == 0`` decodes greedily. ``seed=None`` draws fresh
        randomness. Causal models: the chat template and answer prefix apply as in
        :meth:`label_probs` (the returned text is what follows the answer prefix).
        """
        requests = list(requests)
        if not requests:
            return []
        torch = self._torch
        if self.kind == "causal":
            rendered = [
                self._render(r.prompt, system=r.system, answer_prefix=self._answer_prefix_of(r))
                for r in requests
            ]
            ids = [self._encode_many([t], add_special)[0] for t, add_special, _ in rendered]
        else:
            ids = self._encode_many(
                [r.prompt if not r.system else f"{r.system}\n\n{r.prompt}" for r in requests],
                True,
            )
        results: list[GenerateResult | None] = [None] * len(requests)
        runnable = []
        for i, seq in enumerate(ids):
            if self.max_length is not None and len(seq) > self.max_length:
                results[i] = GenerateResult(
                    text=None,
                    error=f"prompt has {len(seq)} tokens, more than max_length={self.max_length}",
                    n_prompt_tokens=len(seq),
                )
            else:
                runnable.append(i)

        def fn(batch_idx):
            batch = [runnable[j] for j in batch_idx]
            return self._generate_batch([ids[i] for i in batch], [requests[i] for i in batch])

        with torch.inference_mode():
            out, self.batch_size = run_batched(
                [len(ids[i]) for i in runnable],
                fn,
                batch_size=self.batch_size,
                error_result=lambda msg: GenerateResult(text=None, error=msg),
                progress=progress,
                on_oom=self._count_oom,
            )
        for i, res in zip(runnable, out, strict=True):
            results[i] = res
        return results  # type: ignore[return-value]

    def _generator(self, req: GenerateRequest):
        torch = self._torch
        gen = torch.Generator(device="cpu")
        seed = req.decoding.seed
        if seed is None:
            gen.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        else:
            key = f"{seed}\x00{req.sample}\x00{req.system or ''}\x00{req.prompt}".encode()
            gen.manual_seed(int.from_bytes(hashlib.sha256(key).digest()[:8], "little") >> 1)
        return gen

    def _sample_token(self, logits_row, req: GenerateRequest, gen) -> int:
        """Temperature and nucleus (top-p) sampling of one token on CPU, in float64."""
        torch = self._torch
        temperature, top_p = req.decoding.temperature, req.decoding.top_p
        logits_row = logits_row.double()
        if temperature <= 0:
            return int(torch.argmax(logits_row))
        probs = torch.softmax(logits_row / temperature, dim=-1)
        if top_p < 1.0:
            sorted_p, order = torch.sort(probs, descending=True)
            # keep the smallest head whose mass reaches top_p (always at least one token)
            keep = (torch.cumsum(sorted_p, 0) - sorted_p) < top_p
            sorted_p = torch.where(keep, sorted_p, torch.zeros_like(sorted_p))
            choice = torch.multinomial(sorted_p, 1, generator=gen)
            return int(order[choice])
        return int(torch.multinomial(probs, 1, generator=gen))

    def _generate_batch(self, seqs: list[list[int]], reqs: list[GenerateRequest]):
        torch = self._torch
        n = len(seqs)
        gens = [self._generator(r) for r in reqs]
        limits = [max(0, int(r.decoding.max_new_tokens)) for r in reqs]
        dev = self.device
        if self.kind == "causal":
            ids, mask = self._pad(seqs, left=True)
            position_ids = (mask.cumsum(-1) - 1).clamp_(min=0)
            out = self.model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=position_ids,
                use_cache=True,
                **self._keep_last,
            )
            next_pos = position_ids[:, -1:] + 1
        else:
            enc, mask = self._pad(seqs, left=False)
            encoder_outputs = self.model.get_encoder()(input_ids=enc, attention_mask=mask)
            start = self.model.config.decoder_start_token_id
            start = self._pad_id if start is None else int(start)
            dec = torch.full((n, 1), start, dtype=torch.long, device=dev)
            out = self.model(
                encoder_outputs=encoder_outputs,
                attention_mask=mask,
                decoder_input_ids=dec,
                use_cache=True,
            )
        self.stats["n_forward"] += 1
        produced: list[list[int]] = [[] for _ in range(n)]
        done = [limit == 0 for limit in limits]
        for _ in range(max(limits, default=0)):
            logits = out.logits[:, -1, :].float().cpu()
            next_ids = []
            for b in range(n):
                if done[b]:
                    next_ids.append(self._pad_id)
                    continue
                tok = self._sample_token(logits[b], reqs[b], gens[b])
                produced[b].append(tok)
                done[b] = tok in self._eos_ids or len(produced[b]) >= limits[b]
                next_ids.append(tok)
            if all(done):
                break
            step = torch.as_tensor(next_ids, dtype=torch.long, device=dev)[:, None]
            if self.kind == "causal":
                mask = torch.cat([mask, torch.ones((n, 1), dtype=mask.dtype, device=dev)], dim=1)
                out = self.model(
                    input_ids=step,
                    attention_mask=mask,
                    position_ids=next_pos,
                    past_key_values=out.past_key_values,
                    use_cache=True,
                    **self._keep_last,
                )
                next_pos = next_pos + 1
            else:
                out = self.model(
                    encoder_outputs=encoder_outputs,
                    attention_mask=mask,
                    decoder_input_ids=step,
                    past_key_values=out.past_key_values,
                    use_cache=True,
                )
            self.stats["n_forward"] += 1
        return [
            GenerateResult(
                text=self.tokenizer.decode(p, skip_special_tokens=True),
                n_prompt_tokens=len(s),
                n_completion_tokens=len(p),
            )
            for p, s in zip(produced, seqs, strict=True)
        ]
