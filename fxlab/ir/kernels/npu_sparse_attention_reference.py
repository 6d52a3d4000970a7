"""The math of torch_npu's sparse attention for DeepSeek-V3.2, on CPU: the lightning
indexer that picks key positions, and the attention over the picked positions.

``npu_lightning_indexer``: for query token ``s`` and key position ``j`` of a batch, the
score of key head ``g`` is ``sum_n weights[s, n] * relu(q[s, n] . k[j, g])`` over the
query heads ``n`` of that group; the ``sparse_count`` best positions (best first, ties
to the earlier position) among the allowed ones (before the key length, and, in sparse
mode 3, not after the bottom-right causal diagonal) are returned, ``-1`` where fewer are
allowed, with their scores when asked (``-inf`` after the last). The quantised form
scales the int8 dot products by the query's and key's dequant scales first.

``npu_sparse_flash_attention``: each query head attends to the picked positions of its
key head (``sparse_block_size`` consecutive positions per index; an index of -1 ends the
list), the rope parts' dot products added to the scores, scaled, in float32; the value is
the key when none is given (MLA's latent cache). Layouts BSND and TND (cumulative
lengths); a paged KV cache is gathered through ``block_table``. The softmax statistics,
when asked, are the row max and sum per (batch, key head, token, head of the group).
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.npu_attention_reference import as_lengths, gather_blocks, softmax_rows, unsupported
from fxlab.ir.kernels.npu_reference import no_cpu_kernel, cpu_kernel


def _batches(x: torch.Tensor, layout: str, cumulative: list[int] | None) -> list[torch.Tensor]:
    """Per batch ``(S, N, D)``."""
    if layout == "BSND":
        return list(x)
    if layout == "TND" and cumulative is not None:
        starts = [0, *cumulative[:-1]]
        return [x[s:e] for s, e in zip(starts, cumulative)]
    raise NotImplementedError(f"layout {layout!r} has no CPU reference kernel (BSND, and TND with lengths, have)")


def _keys(key: torch.Tensor | None, options: dict[str, Any], count: int, lengths: list[int] | None, layout: str) -> list[Any]:
    if key is None:
        return [None] * count
    table = options.get("block_table")
    if table is None:
        return _batches(key, layout, lengths if layout == "TND" else None)
    if lengths is None:
        raise NotImplementedError("a paged key (block_table) needs the key lengths")
    size = key.shape[1]
    return [gather_blocks(key, table[b, : -(-n // size)], key.shape[2], n).transpose(0, 1) for b, n in enumerate(lengths)]


def _allowed(sq: int, skv: int, length: int, mode: int) -> torch.Tensor:
    """``(sq, skv)``: positions before the key length and, in mode 3, not after the
    bottom-right diagonal."""
    j = torch.arange(skv).unsqueeze(0)
    ok = (j < length).expand(sq, skv)
    if mode == 3:
        ok = ok & (j <= torch.arange(sq).unsqueeze(1) + (length - sq))
    elif mode != 0:
        raise NotImplementedError(f"sparse_mode {mode} has no CPU reference kernel (0 and 3 have)")
    return ok


# -- the indexer ---------------------------------------------------------------------------------
def indexer_scores(q: torch.Tensor, k: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """``(S1, N2, S2)`` from ``q (S1, N1, D)``, ``k (S2, N2, D)``, ``weights (S1, N1)``."""
    groups = k.shape[1]
    per_group = q.shape[1] // groups
    dots = torch.einsum("snd,tgd->sngt", q.float(), k.float()).relu()  # (S1, N1, N2, S2)
    own = dots.reshape(q.shape[0], groups, per_group, groups, -1).diagonal(dim1=1, dim2=3)  # (S1, per_group, S2, N2)
    w = weights.float().reshape(q.shape[0], groups, per_group)
    return torch.einsum("spjg,sgp->sgj", own, w)


def _top(scores: torch.Tensor, allowed: torch.Tensor, count: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Best ``count`` allowed positions of ``scores (S1, N2, S2)``: indices (-1 past the
    allowed ones) and scores (-inf there)."""
    masked = scores.masked_fill(~allowed.unsqueeze(1), float("-inf"))
    picked = torch.argsort(-masked, dim=-1, stable=True)[..., :count]  # stable: ties to the earlier position
    values = masked.gather(-1, picked)
    indices = torch.where(torch.isneginf(values), torch.full_like(picked, -1), picked)
    if picked.shape[-1] < count:
        pad = count - picked.shape[-1]
        indices = torch.cat([indices, indices.new_full((*indices.shape[:-1], pad), -1)], dim=-1)
        values = torch.cat([values, values.new_full((*values.shape[:-1], pad), float("-inf"))], dim=-1)
    return indices.to(torch.int32), values


@cpu_kernel("npu_lightning_indexer")
def lightning_indexer(query: torch.Tensor, key: torch.Tensor, weights: torch.Tensor, **options: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """(sparse_indices ``(B, S1, N2, K)`` int32, their scores or an empty tensor)."""
    return _indexer(query.float(), key.float(), weights, query.dtype, options)


def _indexer(query: torch.Tensor, key: torch.Tensor, weights: torch.Tensor, out_dtype: torch.dtype, options: dict[str, Any]) -> Any:
    layout_q, layout_k = options.get("layout_query", "BSND"), options.get("layout_key", "BSND")
    q_lengths, k_lengths = as_lengths(options.get("actual_seq_lengths_query")), as_lengths(options.get("actual_seq_lengths_key"))
    queries = _batches(query, layout_q, q_lengths)
    keys = _keys(key, options, len(queries), k_lengths, layout_k)
    ws = _batches(weights.unsqueeze(-1), layout_q, q_lengths)
    count, mode = int(options.get("sparse_count", 2048)), int(options.get("sparse_mode", 3))
    picked = []
    for b, (q, k, w) in enumerate(zip(queries, keys, ws)):
        length = k_lengths[b] if k_lengths is not None and layout_k != "TND" else k.shape[0]
        picked.append(_top(indexer_scores(q, k, w[..., 0]), _allowed(q.shape[0], k.shape[0], length, mode), count))
    indices = _merge([p[0] for p in picked], layout_q)
    if not options.get("return_value", False):
        return indices, torch.empty(0, dtype=out_dtype)
    return indices, _merge([p[1] for p in picked], layout_q).to(out_dtype)


def _merge(parts: list[torch.Tensor], layout: str) -> torch.Tensor:
    return torch.stack(parts) if layout == "BSND" else torch.cat(parts)


@cpu_kernel("npu_quant_lightning_indexer")
def quant_lightning_indexer(
    query: torch.Tensor,
    key: torch.Tensor,
    weights: torch.Tensor,
    query_dequant_scale: torch.Tensor,
    key_dequant_scale: torch.Tensor,
    query_quant_mode: int,
    key_quant_mode: int,
    **options: Any,
) -> torch.Tensor:
    """The indexer on int8 query and key, each scaled back per token (and head) first."""
    unsupported("npu_quant_lightning_indexer", options, ("query_dtype", "key_dtype"))
    q = query.float() * query_dequant_scale.float().unsqueeze(-1)
    k = key.float() * key_dequant_scale.float().unsqueeze(-1)
    return _indexer(q, k, weights, weights.dtype, {**options, "return_value": False})[0]


# -- attention over the picked positions -------------------------------------------------------------
def _picked_positions(indices: torch.Tensor, block: int, allowed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Positions ``(S1, N2, K * block)`` and whether each counts."""
    ends = torch.cumprod((indices >= 0).int(), dim=-1).bool()  # -1 ends the list
    positions = (indices.long().clamp(min=0).unsqueeze(-1) * block + torch.arange(block)).flatten(-2)
    valid = ends.repeat_interleave(block, dim=-1)
    valid = valid & (positions < allowed.shape[-1])
    rows = torch.arange(indices.shape[0]).reshape(-1, 1, 1)
    clamped = positions.clamp(max=allowed.shape[-1] - 1)
    return clamped, valid & allowed[rows, clamped]


def _sfa_batch(
    parts: tuple[Any, ...], indices: torch.Tensor, length: int, scale: float, options: dict[str, Any]
) -> tuple[torch.Tensor, ...]:
    q, k, v, q_rope, k_rope = parts
    sq, heads, groups = q.shape[0], q.shape[1], k.shape[1]
    allowed = _allowed(sq, k.shape[0], length, int(options.get("sparse_mode", 3)))
    positions, valid = _picked_positions(indices, int(options.get("sparse_block_size", 1)), allowed)
    group_of = torch.arange(heads) // (heads // groups)
    kk = k.float()[positions, torch.arange(groups).reshape(1, -1, 1)]  # (S1, N2, P, D)
    vv = v.float()[positions, torch.arange(groups).reshape(1, -1, 1)]
    scores = torch.einsum("snd,snpd->snp", q.float(), kk[:, group_of])
    if q_rope is not None:
        kr = k_rope.float()[positions, torch.arange(groups).reshape(1, -1, 1)]
        scores = scores + torch.einsum("snd,snpd->snp", q_rope.float(), kr[:, group_of])
    probs, row_max, row_sum = softmax_rows(scores * scale, ~valid[:, group_of], None)  # (S1, N1, P)
    out = torch.einsum("snp,snpd->snd", probs, vv[:, group_of])
    return out, row_max.transpose(0, 1), row_sum.transpose(0, 1)


@cpu_kernel("npu_sparse_flash_attention")
def sparse_flash_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor | None, sparse_indices: torch.Tensor, scale_value: float, **options: Any
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(attention_out, softmax_max, softmax_sum (empty unless return_softmax_lse))."""
    unsupported("npu_sparse_flash_attention", options, ("sinks",))
    layout_q, layout_kv = options.get("layout_query", "BSND"), options.get("layout_kv", "BSND")
    q_lengths, kv_lengths = as_lengths(options.get("actual_seq_lengths_query")), as_lengths(options.get("actual_seq_lengths_kv"))
    queries = _batches(query, layout_q, q_lengths)
    count = len(queries)
    keys = _keys(key, options, count, kv_lengths, layout_kv)
    values = _keys(value, options, count, kv_lengths, layout_kv) if value is not None else keys
    q_ropes = _batches(options["query_rope"], layout_q, q_lengths) if options.get("query_rope") is not None else [None] * count
    k_ropes = _keys(options.get("key_rope"), options, count, kv_lengths, layout_kv)
    indices = _batches(sparse_indices, layout_q, q_lengths)
    results = []
    for b, parts in enumerate(zip(queries, keys, values, q_ropes, k_ropes)):
        length = kv_lengths[b] if kv_lengths is not None and layout_kv != "TND" else parts[1].shape[0]
        results.append(_sfa_batch(parts, indices[b], length, float(scale_value), options))
    out = _merge([r[0] for r in results], layout_q).to(query.dtype)
    if not options.get("return_softmax_lse", False):
        return out, torch.empty(0), torch.empty(0)
    groups = key.shape[-2]
    stats = [[r[i].unflatten(0, (groups, -1)).transpose(1, 2) for r in results] for i in (1, 2)]
    if layout_q == "TND":  # (N2, T, N1 / N2)
        return out, torch.cat(stats[0], dim=1), torch.cat(stats[1], dim=1)
    return out, torch.stack(stats[0]), torch.stack(stats[1])  # (B, N2, S1, N1 / N2)


cpu_kernel("npu_kv_quant_sparse_flash_attention")(
    no_cpu_kernel(
        "npu_kv_quant_sparse_flash_attention",
        "its int8 latent cache packs dequant scales and the rope part per tile (tile_size, rope_head_dim, quant_scale_repo_mode), "
        "a layout not documented publicly enough to compute it",
    )
)
