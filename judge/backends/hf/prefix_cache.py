"""The causal forward pass and the prefix-KV cache: shared beginnings computed once.

Pairwise prompts of one context repeat the same long beginning (instructions, the context,
often the first candidate). Requests with a non-empty ``LabelRequest.prefix`` take part in
sharing: their full token sequences are sorted into a prefix tree (a node wherever at least
``MIN_SHARED_TOKENS`` more tokens are common), each node's tokens are run once on top of its
parent's key/value cache, and each request's remaining tokens on top of its deepest node. A
16-candidate context thus costs one context pass, 16 short first-candidate passes and 240
short continuations instead of 240 full prompts, whether the runner's prefix is the context
alone or the context and the first candidate. Nodes, and the continuations, are batched
across siblings: at most ``batch_size`` rows a pass and, with ``batch_tokens``, at most that
many padded tokens, so short continuations fill large passes.

What is shared is found on the *full* tokenisations, so the tokens fed with sharing are
exactly those fed without it (a prefix that ends inside a BPE merge simply shares a little
less; such prefixes are counted in ``stats``). Padding is on the left throughout, with the
attention mask carrying the holes and positions computed from the mask, so results equal the
unshared, unbatched ones up to float rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judge.backends.base import LabelResult
from judge.backends.hf.loading import to_device
from judge.backends.hf.prepared import Prepared

#: a prefix-tree node must share at least this many more tokens than its parent
MIN_SHARED_TOKENS = 8


@dataclass
class _Past:
    """Key/value tensors of some rows plus the attention mask that goes with them.

    Kept as plain tensors (not a transformers Cache) because forward mutates the Cache it is
    given; every forward gets a fresh cache built from these (:meth:`prefilled`).
    """

    layers: list[tuple[Any, Any]]  # per layer (keys, values): (n_rows, n_kv_heads, L, head_dim)
    mask: Any  # (n_rows, L) long, 0 where a row had left padding

    @property
    def n_rows(self) -> int:
        return int(self.mask.shape[0])

    def prefilled(self, rows: Sequence[int], t_new: int, torch):
        """A cache for a batch whose row b continues ``t_new`` tokens past row ``rows[b]``.

        Returns ``(cache, past mask (B, L))``. Each layer's keys and values are allocated
        once at their final length (L + ``t_new``) with the past rows copied in, and forward
        writes the new tokens' keys and values after them (:class:`_PrefilledLayer`): one copy
        of the prefix per batch row, whether the rows repeat one node row (a broadcast copy)
        or gather several (``index_select`` straight into the buffer). A transformers
        ``DynamicCache`` would gather (or broadcast) and then concatenate: two copies for
        gathered rows. The copy itself stays: attention reads each row's keys and values as
        one (n_kv_heads, L + t_new, head_dim) block, and the stored rows are never written.
        """
        n, length = len(rows), int(self.mask.shape[1])
        same = self.n_rows == 1 or all(r == rows[0] for r in rows)
        first = rows[0] if self.n_rows > 1 else 0
        idx = None if same else to_device(torch.as_tensor(list(rows)), self.mask.device)
        layers = []
        for k, v in self.layers:
            bufs = []
            for t in (k, v):
                buf = t.new_empty((n, t.shape[1], length + t_new, t.shape[3]))
                if idx is None:
                    buf[:, :, :length] = t[first : first + 1]
                else:
                    torch.index_select(t, 0, idx, out=buf[:, :, :length])
                bufs.append(buf)
            layers.append((bufs[0], bufs[1], length))
        mask = self.mask[first : first + 1].expand(n, -1) if idx is None else self.mask[idx]
        return _cache_of(layers, length), mask


def _prefilled_layer_class():
    """:class:`_PrefilledLayer`, defined on first use so importing this module needs no torch."""
    global _PrefilledLayer
    if _PrefilledLayer is None:
        from transformers.cache_utils import DynamicLayer

        class PrefilledLayer(DynamicLayer):
            """A DynamicLayer whose tensors already have room for the tokens of one forward.

            ``keys``/``values`` are (B, n_kv_heads, past + t_new, head_dim) with the first
            ``past`` positions filled; ``update`` writes the new positions in place and returns
            the whole tensors, and the layer then holds past + t_new tokens like a DynamicLayer.
            """

            def __init__(self, keys, values, n_past: int):
                super().__init__()
                self.dtype, self.device = keys.dtype, keys.device
                self.keys, self.values = keys, values
                self.is_initialized = True
                self._n_filled = int(n_past)

            def update(self, key_states, value_states, *args, **kwargs):
                end = self._n_filled + key_states.shape[-2]
                if end > self.keys.shape[-2]:  # not the forward it was sized for
                    raise RuntimeError(
                        f"prefilled cache has room for {self.keys.shape[-2]} positions, "
                        f"asked for {end}"
                    )
                self.keys[:, :, self._n_filled : end] = key_states
                self.values[:, :, self._n_filled : end] = value_states
                self._n_filled = end
                return self.keys[:, :, :end], self.values[:, :, :end]

            def get_seq_length(self) -> int:
                return self._n_filled

        _PrefilledLayer = PrefilledLayer
    return _PrefilledLayer


_PrefilledLayer: Any = None


def _cache_of(layers, n_past: int):
    """A DynamicCache over prefilled layers, given as ``(keys, values, n_past)``."""
    from transformers import DynamicCache

    cls = _prefilled_layer_class()
    cache = DynamicCache()
    cache.layers = [cls(*x) for x in layers]
    if cache.get_seq_length() != n_past:  # a transformers change would show here
        return DynamicCache(
            ddp_cache_data=[(x.keys[:, :, :n_past], x.values[:, :, :n_past]) for x in cache.layers]
        )
    return cache


class _NotShareable(Exception):
    """The model's cache is not a plain per-token key/value cache (sliding window, recurrent)."""


class PrefixSharing:
    """Causal forward passes, optionally on a cached prefix, and the prefix-tree runner.

    A mixin of :class:`judge.backends.hf.HFBackend`; it uses the backend's model, tokenizer,
    ``stats``, ``batch_size``, ``batch_tokens``, ``share_prefix`` and its helpers ``_pad``, ``_label_result``
    and ``_count_oom``.
    """

    # ------------------------------------------------------------------ causal forward pass
    def _forward(self, seqs, past: _Past | None = None, rows=None, want_cache: bool = False):
        """Run left-padded ``seqs`` (optionally on top of ``past`` rows); last-token log-probs.

        Returns ``(logprobs (B, V) float32, _Past of the whole sequences or None)``.
        """
        out, _, mask = self._cached_pass(seqs, past, rows, want_cache, **self._keep_last)
        lp = out.logits[:, -1, :].float().log_softmax(-1)
        new_past = self._past_from(out.past_key_values, mask) if want_cache else None
        return lp, new_past

    def _cached_pass(self, seqs, past: _Past | None, rows, want_cache: bool, **kwargs):
        """One model pass of left-padded ``seqs``, each on top of its ``rows`` of ``past``
        (default row 0; none without ``past``); ``kwargs`` go to the model.

        Returns ``(model output, input ids (B, T), attention mask over past + new)``.
        """
        torch = self._torch
        n = len(seqs)
        ids, new_mask = self._pad(seqs, left=True)
        t_new = ids.shape[1]
        cache = None
        mask = new_mask
        if past is not None:
            cache, past_mask = past.prefilled(
                list(rows) if rows is not None else [0] * n, t_new, torch
            )
            mask = torch.cat([past_mask, new_mask], dim=1)
        # positions from the mask, so left padding and holes do not shift the real tokens
        position_ids = (mask.cumsum(-1) - 1).clamp_(min=0)[:, -t_new:]
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=position_ids,
            past_key_values=cache,
            use_cache=bool(want_cache or cache is not None),
            **kwargs,
        )
        self.stats["n_forward"] += 1
        self.stats["n_tokens_computed"] += sum(len(s) for s in seqs)
        self.stats["n_tokens_padded"] += n * t_new
        return out, ids, mask

    def _past_from(self, cache, mask) -> _Past:
        from transformers.cache_utils import DynamicLayer

        layers = getattr(cache, "layers", None)
        ok = (DynamicLayer, _prefilled_layer_class())
        if layers is None or any(type(layer) not in ok for layer in layers):
            raise _NotShareable(type(cache).__name__)
        return _Past([(layer.keys, layer.values) for layer in layers], mask)

    # ------------------------------------------------------------------ shared prefixes
    def _share_plan(self, requests, prepared, runnable):
        """Split runnable requests into those that take part in sharing and plain ones.

        Requests with a non-empty ``prefix`` take part (the runner declares that they share
        a beginning); what is shared is found on the full token sequences, see
        :meth:`_run_shared`.
        """
        if not (self.share_prefix and self._can_share and self._probe_shareable()):
            return [], list(runnable)
        shared = [i for i in runnable if requests[i].prefix]
        plain = [i for i in runnable if not requests[i].prefix]
        by_prefix: dict[str, list[int]] = {}
        for i in shared:
            by_prefix.setdefault(requests[i].prefix, []).append(i)
        for members in by_prefix.values():
            if len(members) >= 2:
                self.stats["n_prefix_groups"] += 1
                self._check_boundary(prepared[members[0]])
        return shared, plain

    def _probe_shareable(self) -> bool:
        """Whether the model's cache is a plain per-token key/value cache (checked once)."""
        if getattr(self, "_shareable", None) is None:
            try:
                with self._torch.inference_mode():
                    self._forward([[self._pad_id, self._pad_id]], want_cache=True)
                self._shareable = True
            except _NotShareable:
                # sliding-window or recurrent caches cannot be cut and reused exactly
                self._shareable = False
            self.stats["n_forward"] -= 1
            self.stats["n_tokens_computed"] -= 2
            self.stats["n_tokens_padded"] -= 2
        return self._shareable

    def _check_boundary(self, item: Prepared) -> None:
        """Count prefix groups whose prefix does not end on a token boundary of the prompt.

        Sharing stays exact either way (what is shared comes from the full tokenisations);
        this makes visible that the prefix split a token (a BPE merge across it) or that the
        chat template changed the text, in which case a little less is shared.
        """
        if item.prefix_end is None:
            self.stats["n_prefix_boundary_mismatch"] += 1
            return
        head = item.text[: item.prefix_end]
        head_ids = self.tokenizer(head, add_special_tokens=not self.use_chat_template)["input_ids"]
        if item.ids[: len(head_ids)] != list(head_ids):
            self.stats["n_prefix_boundary_mismatch"] += 1

    def _run_shared(self, indices, prepared, results, progress) -> list[int]:
        """Run requests as a prefix tree of their token sequences; return the unshared ones.

        The sequences are sorted, so requests with a common beginning are neighbours and
        ``lcp[k]`` (common length of neighbours k and k+1, each keeping at least its last
        token) describes the whole tree: a node is a range of sorted requests at a depth, its
        children are the maximal sub-ranges whose neighbours share at least
        ``MIN_SHARED_TOKENS`` more tokens. Each child's extra tokens are run once on top of
        its parent's cache (children batched together), and each request's remaining tokens
        on top of its deepest node (requests batched across sibling nodes).
        """
        order = sorted(indices, key=lambda i: prepared[i].ids)
        seqs = [prepared[i].ids for i in order]
        lcp = [
            min(_lcp2(a, b), len(a) - 1, len(b) - 1) for a, b in zip(seqs, seqs[1:], strict=False)
        ]
        leaves, children = _split_range(0, len(order), 0, lcp)
        nodes = [(start, end, stem, None) for start, end, stem in children]
        self._solve_children(nodes, order, lcp, prepared, results, progress)
        return [order[k] for k in leaves]

    def _solve_children(self, nodes, order, lcp, prepared, results, progress):
        """Run the prefix-tree ``nodes``, then their requests and their children, level-wise.

        ``nodes`` are ``(start, end, stem, parent)`` with ``parent`` None (the root) or
        ``(past, row, depth)``: the cache row holding the ``depth`` tokens the node continues.
        Nodes on one parent pass run together whatever node they continue (``batch_size`` at
        a time: at most that many node caches alive per tree level), so the first-candidate
        nodes of several contexts share passes, and so do their requests, which pool across
        the nodes of one pass (:meth:`_run_leaves`).
        """
        by_parent: dict[int, list] = {}
        for node in nodes:
            by_parent.setdefault(id(node[3][0]) if node[3] else 0, []).append(node)
        for group in by_parent.values():
            parent_past = group[0][3][0] if group[0][3] else None
            for pos in range(0, len(group), self.batch_size):
                chunk = group[pos : pos + self.batch_size]
                exts = [
                    prepared[order[s]].ids[(p[2] if p else 0) : stem] for s, _, stem, p in chunk
                ]
                rows = [p[1] if p else 0 for _, _, _, p in chunk]

                def ext_fn(idx, exts=exts, rows=rows, parent_past=parent_past):
                    _, past = self._forward(
                        [exts[j] for j in idx],
                        past=parent_past,
                        rows=[rows[j] for j in idx],
                        want_cache=True,
                    )
                    self.stats["n_shared_nodes"] += len(idx)
                    return [(past, b) for b in range(len(idx))]

                sources = self._budgeted(
                    [len(e) for e in exts], ext_fn, error_result=lambda msg: msg
                )
                leaf_items, deeper = [], []
                for (start, end, stem, _), src in zip(chunk, sources, strict=True):
                    if isinstance(src, str):
                        failed = [order[k] for k in range(start, end)]
                        for i in failed:
                            results[i] = LabelResult(error=f"shared prefix ({stem} tokens): {src}")
                        if progress is not None:
                            progress(len(failed))
                        continue
                    leaves, grandchildren = _split_range(start, end, stem, lcp)
                    leaf_items += [(order[k], src, stem) for k in leaves]
                    deeper += [(s, e, st, (src[0], src[1], stem)) for s, e, st in grandchildren]
                self._run_leaves(leaf_items, prepared, results, progress)
                if deeper:
                    self._solve_children(deeper, order, lcp, prepared, results, progress)

    def _run_leaves(self, items, prepared, results, progress) -> None:
        """Each request's remaining tokens on top of its node's cache row, batched.

        Requests on the rows of one node pass pool together, longest remainder first, so a
        batch pads little and may span many rows: every batch row gets one copy of its
        prefix whichever rows a batch gathers (:meth:`_Past.prefilled`). Batches hold at most
        ``batch_size`` rows and, with ``batch_tokens``, at most that many padded tokens
        (rows x longest remainder), so short remainders fill large batches.
        """
        pools: dict[int, tuple[_Past, list]] = {}
        for i, (past, row), depth in items:
            pools.setdefault(id(past), (past, []))[1].append((i, row, depth))
        for past, group in pools.values():

            def fn(idx, past=past, group=group):
                batch = [group[j] for j in idx]
                lp, _ = self._forward(
                    [prepared[i].ids[depth:] for i, _, depth in batch],
                    past=past,
                    rows=[row for _, row, _ in batch],
                )
                self.stats["n_shared_requests"] += len(batch)
                return self._label_result(lp, [prepared[i] for i, _, _ in batch])

            out = self._budgeted(
                [len(prepared[i].ids) - depth for i, _, depth in group], fn, progress=progress
            )
            for (i, _, _), res in zip(group, out, strict=True):
                results[i] = res


def _lcp2(a: list[int], b: list[int]) -> int:
    """Length of the common beginning of two token lists (binary search on C-speed slices)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while hi - lo > 1:  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _split_range(start: int, end: int, depth: int, lcp: list[int]):
    """Leaves and child nodes of the sorted range [start, end) that shares ``depth`` tokens.

    A child is a maximal run of neighbours whose common length (``lcp``) is at least
    ``depth + MIN_SHARED_TOKENS``; it is returned as ``(start, end, stem)`` with ``stem`` the
    tokens all its members share. Members in no such run are leaves.
    """
    leaves, children = [], []
    run_start = start
    for k in range(start, end):
        if k + 1 < end and lcp[k] >= depth + MIN_SHARED_TOKENS:
            continue
        if k > run_start:
            children.append((run_start, k + 1, min(lcp[run_start:k])))
        else:
            leaves.append(k)
        run_start = k + 1
    return leaves, children
