"""The attention math of torch_npu's fused attention operators, in float32, on CPU.

One function, :func:`infer_attention`, computes what ``npu_fused_infer_attention_score``
(v1, v2), ``npu_prompt_flash_attention``, ``npu_incre_flash_attention`` and the GE ops
TorchAir makes of them compute: each batch's query (its ``actual_seq_lengths`` rows)
attends to its keys (its ``actual_seq_lengths_kv``, gathered block by block through
``block_table`` for a paged KV cache), with grouped-query heads, the mask of the sparse
mode, a position bias (``pse_shift``), MLA's rope parts (``query_rope``/``key_rope``:
their dot products add to the scores) and a learnable sink per head. The layouts are
those of torch_npu's documentation: BSH, BSND, BNSD, NSD, TND and NTD for the query
(``TND``/``NTD`` batches are cut by cumulative lengths), and an output layout after an
underscore (``BNSD_BSND``...).

What the NPU leaves undefined is fixed here: query rows past a batch's length and rows
whose every key is masked give zeros, and their log-sum-exp is ``+inf``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from fxlab.ir.kernels.npu_reference import cpu_kernel

INT32_MAX = 2147483647
# input_layout -> (query/key/value layout, output layout)
LAYOUTS = {
    "BSH": ("BSH", "BSH"),
    "BSND": ("BSND", "BSND"),
    "BNSD": ("BNSD", "BNSD"),
    "NSD": ("NSD", "NSD"),
    "TND": ("TND", "TND"),
    "NTD": ("NTD", "NTD"),
    "SBH": ("SBH", "SBH"),
    "BNSD_BSND": ("BNSD", "BSND"),
    "BSH_BNSD": ("BSH", "BNSD"),
    "BSND_BNSD": ("BSND", "BNSD"),
    "NTD_TND": ("NTD", "TND"),
    "TND_NTD": ("TND", "NTD"),
    "BSH_NBSD": ("BSH", "NBSD"),
    "BSND_NBSD": ("BSND", "NBSD"),
    "BNSD_NBSD": ("BNSD", "NBSD"),
}
PACKED_LAYOUTS = ("TND", "NTD")


@dataclass(frozen=True)
class AttentionOptions:
    """The scalar options every variant shares (names as the GE ops' attrs)."""

    input_layout: str = "BSH"
    num_heads: int = 1
    num_key_value_heads: int = 0
    scale: float = 1.0
    sparse_mode: int = 0
    pre_tokens: int = INT32_MAX
    next_tokens: int = INT32_MAX
    block_size: int = 0
    softmax_lse_flag: bool = False

    @property
    def kv_heads(self) -> int:
        return self.num_key_value_heads or self.num_heads

    @property
    def layouts(self) -> tuple[str, str]:
        if self.input_layout not in LAYOUTS:
            raise NotImplementedError(f"input_layout {self.input_layout!r} has no CPU reference kernel ({', '.join(LAYOUTS)} have)")
        return LAYOUTS[self.input_layout]


@dataclass
class AttentionTensors:
    """The tensor inputs; lengths are Python lists (a tensor is read with ``tolist``)."""

    query: torch.Tensor
    key: torch.Tensor
    value: torch.Tensor
    atten_mask: torch.Tensor | None = None
    pse_shift: torch.Tensor | None = None
    actual_seq_lengths: Sequence[int] | None = None
    actual_seq_lengths_kv: Sequence[int] | None = None
    block_table: torch.Tensor | None = None
    query_rope: torch.Tensor | None = None
    key_rope: torch.Tensor | None = None
    learnable_sink: torch.Tensor | None = None


def as_lengths(value: Any) -> list[int] | None:
    """A length list from a Python list or a tensor."""
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        return [int(v) for v in value.reshape(-1).tolist()]
    return [int(v) for v in value]


def unsupported(op: str, options: dict[str, Any], names: Sequence[str]) -> None:
    """Raise naming the given options that have no CPU reference kernel."""
    given = [n for n in names if options.get(n) is not None]
    if given:
        raise NotImplementedError(f"{op}: {', '.join(given)} {'has' if len(given) == 1 else 'have'} no CPU reference kernel")


# -- layouts ---------------------------------------------------------------------------------
def _bounds(lengths: Sequence[int]) -> list[tuple[int, int]]:
    """Cumulative ends -> (start, end) of each batch."""
    starts = [0, *lengths[:-1]]
    return [(int(s), int(e)) for s, e in zip(starts, lengths)]


def split_heads(x: torch.Tensor, layout: str, heads: int, cumulative: Sequence[int] | None) -> list[torch.Tensor]:
    """Per batch: ``(heads, S, D)``."""
    if layout == "BSH":
        return [b.unflatten(-1, (heads, -1)).transpose(0, 1) for b in x]
    if layout == "SBH":
        return [b.unflatten(-1, (heads, -1)).transpose(0, 1) for b in x.transpose(0, 1)]
    if layout == "BSND":
        return [b.transpose(0, 1) for b in x]
    if layout == "BNSD":
        return list(x)
    if layout == "NSD":
        return [x]
    if layout in PACKED_LAYOUTS:
        if cumulative is None:
            raise NotImplementedError(f"layout {layout}: the cumulative sequence lengths are needed to cut the batches")
        tokens = x if layout == "TND" else x.transpose(0, 1)
        return [tokens[s:e].transpose(0, 1) for s, e in _bounds(cumulative)]
    raise NotImplementedError(f"layout {layout!r} has no CPU reference kernel")


def merge_heads(parts: list[torch.Tensor], layout: str) -> torch.Tensor:
    """Per-batch ``(heads, S, D)`` -> the output layout."""
    if layout in PACKED_LAYOUTS:
        tokens = torch.cat([p.transpose(0, 1) for p in parts])
        return tokens if layout == "TND" else tokens.transpose(0, 1)
    bnsd = torch.stack(parts)
    if layout == "BNSD":
        return bnsd
    if layout == "BSND":
        return bnsd.transpose(1, 2)
    if layout == "BSH":
        return bnsd.transpose(1, 2).flatten(-2)
    if layout == "SBH":
        return bnsd.permute(2, 0, 1, 3).flatten(-2)
    if layout == "NBSD":
        return bnsd.transpose(0, 1)
    if layout == "NSD":
        return bnsd[0]
    raise NotImplementedError(f"output layout {layout!r} has no CPU reference kernel")


def gather_blocks(cache: torch.Tensor, blocks: torch.Tensor, kv_heads: int, length: int) -> torch.Tensor:
    """One batch's ``(kv_heads, length, D)`` from a paged cache: ``(blocks, block_size, H)``,
    ``(blocks, N, block_size, D)`` or the NZ ``(blocks, N, D/16, block_size, 16)``."""
    picked = cache[blocks.long()]
    if cache.dim() == 3:
        tokens = picked.flatten(0, 1).unflatten(-1, (kv_heads, -1)).transpose(0, 1)
    elif cache.dim() == 4:
        tokens = picked.transpose(0, 1).flatten(1, 2)
    elif cache.dim() == 5:
        tokens = picked.permute(1, 0, 3, 2, 4).flatten(3).flatten(1, 2)
    else:
        raise NotImplementedError(f"a paged KV cache of {cache.dim()} dims has no CPU reference kernel (3, 4 and 5 have)")
    return tokens[:, :length]


def _kv_parts(x: torch.Tensor | None, t: AttentionTensors, layout: str, kv_heads: int, block_size: int) -> list[Any]:
    if x is None:
        return [None] * _batch_count(t, layout)
    if t.block_table is None:
        cumulative = t.actual_seq_lengths_kv if layout in PACKED_LAYOUTS else None
        return split_heads(x, layout, kv_heads, cumulative)
    lengths = t.actual_seq_lengths_kv
    if lengths is None:
        raise NotImplementedError("a paged KV cache (block_table) needs actual_seq_lengths_kv")
    size = block_size or x.shape[1 if x.dim() == 3 else 2 if x.dim() == 4 else 3]
    parts = []
    for b, n in enumerate(lengths):
        used = t.block_table[b, : math.ceil(int(n) / size)]
        parts.append(gather_blocks(x, used, kv_heads, int(n)))
    return parts


def _batch_count(t: AttentionTensors, layout: str) -> int:
    if layout in PACKED_LAYOUTS:
        return len(t.actual_seq_lengths or ())
    return 1 if layout == "NSD" else t.query.shape[1 if layout == "SBH" else 0]


# -- masks -----------------------------------------------------------------------------------
def _band(sq: int, skv: int, offset: int, pre: int, nxt: int) -> torch.Tensor:
    """True outside ``offset + i - pre <= j <= offset + i + next``."""
    i = torch.arange(sq).unsqueeze(1) + offset
    j = torch.arange(skv).unsqueeze(0)
    return (j > i + nxt) | (j < i - pre)


def _given_mask(mask: torch.Tensor, batch: int, batches: int, sq: int, skv: int, decode: bool) -> torch.Tensor:
    """This batch's ``(heads or 1, sq, skv)`` slice of a user mask (True/1 = masked)."""
    m = mask.to(torch.bool)
    if m.dim() == 2:
        m = m[batch].reshape(1, 1, -1) if decode and m.shape[0] == batches else m.unsqueeze(0)
    elif m.dim() == 3:
        m = m[batch if m.shape[0] > 1 else 0].unsqueeze(0)
    elif m.dim() == 4:
        m = m[batch if m.shape[0] > 1 else 0]
    return m[..., :sq, :skv]


def batch_mask(o: AttentionOptions, mask: torch.Tensor | None, batch: int, batches: int, sq: int, skv: int, decode: bool) -> Any:
    """Masked positions of one batch under the sparse mode: 0 the given mask within the
    pre/next band, 1 the given mask, 2 causal from the top left, 3 from the bottom right,
    4 the band around the bottom-right diagonal."""
    mode = o.sparse_mode
    if mode == 0:
        if mask is None:
            return None
        return _given_mask(mask, batch, batches, sq, skv, decode) | _band(sq, skv, 0, o.pre_tokens, o.next_tokens)
    if mode == 1:
        return None if mask is None else _given_mask(mask, batch, batches, sq, skv, decode)
    if mode == 2:
        return _band(sq, skv, 0, INT32_MAX, 0)
    if mode == 3:
        return _band(sq, skv, skv - sq, INT32_MAX, 0)
    if mode == 4:
        return _band(sq, skv, skv - sq, o.pre_tokens, o.next_tokens)
    raise NotImplementedError(f"sparse_mode={mode} has no CPU reference kernel (0 to 4 have)")


# -- the computation -------------------------------------------------------------------------
def _scores(q: torch.Tensor, k: torch.Tensor, q_rope: Any, k_rope: Any, scale: float) -> torch.Tensor:
    if k.shape[0] != q.shape[0]:
        k = k.repeat_interleave(q.shape[0] // k.shape[0], dim=0)
        if k_rope is not None:
            k_rope = k_rope.repeat_interleave(q.shape[0] // k_rope.shape[0], dim=0)
    scores = q.float() @ k.float().transpose(-1, -2)
    if q_rope is not None:
        scores = scores + q_rope.float() @ k_rope.float().transpose(-1, -2)
    return scores * scale


def softmax_rows(scores: torch.Tensor, masked: Any, sink: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
    """(softmax of the rows, the row max, the row sum of exp(score - max)); a fully masked
    row gives zeros, max -inf and sum 0. A sink per head joins each row's denominator."""
    if masked is not None:
        scores = scores.masked_fill(masked, float("-inf"))
    if sink is not None:
        scores = torch.cat([scores, sink.float().reshape(-1, 1, 1).expand(*scores.shape[:-1], 1)], dim=-1)
    row_max = scores.amax(dim=-1)
    empty = torch.isneginf(row_max)
    exps = torch.exp(scores - torch.where(empty, torch.zeros_like(row_max), row_max).unsqueeze(-1))
    row_sum = exps.sum(dim=-1)
    probs = exps / torch.where(empty, torch.ones_like(row_sum), row_sum).unsqueeze(-1)
    return (probs[..., :-1] if sink is not None else probs), row_max, row_sum


def attend(scores: torch.Tensor, v: torch.Tensor, masked: Any, sink: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
    """(softmax(scores) v, the row max, the row sum): see :func:`softmax_rows`."""
    probs, row_max, row_sum = softmax_rows(scores, masked, sink)
    if v.shape[0] != probs.shape[0]:
        v = v.repeat_interleave(probs.shape[0] // v.shape[0], dim=0)
    return probs @ v.float(), row_max, row_sum


def log_sum_exp(row_max: torch.Tensor, row_sum: torch.Tensor) -> torch.Tensor:
    """max + log(sum): +inf for fully masked (and padding) rows."""
    return torch.where(torch.isneginf(row_max), torch.full_like(row_max, float("inf")), row_max + torch.log(row_sum))


def attention_parts(t: AttentionTensors, o: AttentionOptions) -> tuple[list[torch.Tensor], ...]:
    """Per batch: the output ``(N, S, Dv)`` and the row max and sum ``(N, S)``, float32."""
    in_layout, _ = o.layouts
    cumulative_q = t.actual_seq_lengths if in_layout in PACKED_LAYOUTS else None
    queries = split_heads(t.query, in_layout, o.num_heads, cumulative_q)
    q_ropes = split_heads(t.query_rope, in_layout, o.num_heads, cumulative_q) if t.query_rope is not None else [None] * len(queries)
    keys = _kv_parts(t.key, t, in_layout, o.kv_heads, o.block_size)
    values = _kv_parts(t.value, t, in_layout, o.kv_heads, o.block_size)
    k_ropes = _kv_parts(t.key_rope, t, in_layout, o.kv_heads, o.block_size)
    results = [_one_batch(t, o, b, len(queries), parts, in_layout) for b, parts in enumerate(zip(queries, q_ropes, keys, values, k_ropes))]
    return tuple([r[i] for r in results] for i in range(3))


def infer_attention(t: AttentionTensors, o: AttentionOptions) -> tuple[torch.Tensor, torch.Tensor]:
    """(attention_out in the output layout and query dtype, softmax_lse: ``(B, N, S, 1)``
    or ``(T, N, 1)`` float32 when ``softmax_lse_flag``, else an empty tensor)."""
    in_layout, out_layout = o.layouts
    outs, maxes, sums = attention_parts(t, o)
    attention_out = merge_heads(outs, out_layout).to(t.query.dtype).contiguous()
    if not o.softmax_lse_flag:
        return attention_out, torch.empty(0, dtype=torch.float32)
    lse_layout = "TND" if in_layout in PACKED_LAYOUTS else "BNSD"
    lses = [log_sum_exp(m, s).unsqueeze(-1) for m, s in zip(maxes, sums)]
    return attention_out, merge_heads(lses, lse_layout).contiguous()


def _one_batch(t: AttentionTensors, o: AttentionOptions, b: int, batches: int, parts: tuple[Any, ...], layout: str) -> tuple[Any, ...]:
    q, q_rope, k, v, k_rope = parts
    sq = q.shape[1]
    if t.actual_seq_lengths is not None and layout not in PACKED_LAYOUTS:
        sq = min(sq, int(t.actual_seq_lengths[b]))
    skv = k.shape[1]
    if t.actual_seq_lengths_kv is not None and layout not in PACKED_LAYOUTS:
        skv = min(skv, int(t.actual_seq_lengths_kv[b]))
    q_rope = q_rope[:, :sq] if q_rope is not None else None
    k_rope = k_rope[:, :skv] if k_rope is not None else None
    scores = _scores(q[:, :sq], k[:, :skv], q_rope, k_rope, o.scale)
    if t.pse_shift is not None:
        pse = t.pse_shift[b if t.pse_shift.shape[0] > 1 else 0]
        scores = scores + pse[..., :sq, :skv].float()
    masked = batch_mask(o, t.atten_mask, b, batches, sq, skv, decode=q.shape[1] == 1)
    out, row_max, row_sum = attend(scores, v[:, :skv], masked, t.learnable_sink)
    pad = q.shape[1] - sq
    if pad:
        out = torch.cat([out, out.new_zeros(out.shape[0], pad, out.shape[2])], dim=1)
        row_max = torch.cat([row_max, row_max.new_full((row_max.shape[0], pad), float("-inf"))], dim=1)
        row_sum = torch.cat([row_sum, row_sum.new_zeros(row_sum.shape[0], pad)], dim=1)
    return out, row_max, row_sum


# -- the operators, by the GE ops' input and attr names ---------------------------------------
# Quantised inputs and shared prefixes: named when given, since no kernel here computes them.
QUANT_INPUTS = (
    "dequant_scale1",
    "quant_scale1",
    "dequant_scale2",
    "quant_scale2",
    "quant_offset2",
    "antiquant_scale",
    "antiquant_offset",
    "query_padding_size",
    "kv_padding_size",
    "key_antiquant_scale",
    "key_antiquant_offset",
    "value_antiquant_scale",
    "value_antiquant_offset",
    "key_shared_prefix",
    "value_shared_prefix",
    "actual_shared_prefix_len",
    "key_rope_antiquant_scale",
    "dequant_scale_query",
    "deq_scale1",
    "deq_scale2",
)


def _check_float(op: str, named: dict[str, Any]) -> None:
    unsupported(op, named, QUANT_INPUTS)
    if named["query"].dtype == torch.int8 or named["key"].dtype in (torch.int8, torch.int32):
        raise NotImplementedError(f"{op}: int8 query or int8/int4 key and value have no CPU reference kernel")


def _options(attrs: dict[str, Any], **defaults: Any) -> AttentionOptions:
    fields = AttentionOptions.__dataclass_fields__
    values = {**defaults, **{k: v for k, v in attrs.items() if k in fields and v is not None}}
    return AttentionOptions(**values)


def tensors_from(named: dict[str, Any]) -> AttentionTensors:
    """The attention tensors from a GE op's inputs by name (``key0``/``value0`` or ``key``/``value``)."""
    values: dict[str, Any] = {f: named.get(f) for f in AttentionTensors.__dataclass_fields__}
    values["key"] = named.get("key0", named.get("key"))
    values["value"] = named.get("value0", named.get("value"))
    for lengths in ("actual_seq_lengths", "actual_seq_lengths_kv"):
        values[lengths] = as_lengths(values[lengths])
    return AttentionTensors(**values)


def fused_infer_attention(named: dict[str, Any], attrs: dict[str, Any], op: str = "npu_fused_infer_attention_score") -> tuple[Any, Any]:
    """FusedInferAttentionScore by its GE input and attr names."""
    tensors = tensors_from(named)
    _check_float(op, {**named, "key": tensors.key})
    return infer_attention(tensors, _options(attrs))


@cpu_kernel("npu_fused_infer_attention_score")
def npu_fused_infer_attention_score(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, **options: Any) -> tuple[Any, Any]:
    """``npu_fused_infer_attention_score`` for float query, key and value."""
    return fused_infer_attention({**options, "query": query, "key": key, "value": value}, options)


# npu_fused_infer_attention_score_v2's arguments -> FusedInferAttentionScore's inputs and attrs
V2_NAMES = {
    "actual_seq_qlen": "actual_seq_lengths",
    "actual_seq_kvlen": "actual_seq_lengths_kv",
    "quant_scale_p": "quant_scale1",
    "quant_scale_out": "quant_scale2",
    "quant_offset_out": "quant_offset2",
    "dequant_scale_key": "key_antiquant_scale",
    "dequant_offset_key": "key_antiquant_offset",
    "dequant_scale_value": "value_antiquant_scale",
    "dequant_offset_value": "value_antiquant_offset",
    "dequant_scale_key_rope": "key_rope_antiquant_scale",
    "num_query_heads": "num_heads",
    "softmax_scale": "scale",
    "return_softmax_lse": "softmax_lse_flag",
    "key_quant_mode": "key_antiquant_mode",
    "value_quant_mode": "value_antiquant_mode",
}


@cpu_kernel("npu_fused_infer_attention_score_v2")
def npu_fused_infer_attention_score_v2(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, **options: Any) -> tuple[Any, Any]:
    """``npu_fused_infer_attention_score_v2`` for float query, key and value."""
    renamed = {V2_NAMES.get(k, k): v for k, v in options.items()}
    return fused_infer_attention({**renamed, "query": query, "key": key, "value": value}, renamed, "npu_fused_infer_attention_score_v2")


def incre_flash_attention(named: dict[str, Any], attrs: dict[str, Any]) -> torch.Tensor:
    """IncreFlashAttention: one query token per batch; ``actual_seq_lengths`` are the keys'."""
    tensors = tensors_from({**named, "actual_seq_lengths": None, "actual_seq_lengths_kv": named.get("actual_seq_lengths")})
    _check_float("npu_incre_flash_attention", {**named, "key": tensors.key})
    return infer_attention(tensors, _options(attrs, scale=attrs.get("scale_value", 1.0)))[0]


@cpu_kernel("npu_incre_flash_attention")
def npu_incre_flash_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, **options: Any) -> torch.Tensor:
    """``npu_incre_flash_attention`` for float query, key and value."""
    return incre_flash_attention({**options, "query": query, "key": key, "value": value}, options)


def prompt_flash_attention(named: dict[str, Any], attrs: dict[str, Any]) -> torch.Tensor:
    """PromptFlashAttention (whose pre/next tokens default to a causal band)."""
    _check_float("npu_prompt_flash_attention", named)
    options = _options(attrs, scale=attrs.get("scale_value", 1.0), pre_tokens=214748647, next_tokens=0)
    return infer_attention(tensors_from(named), options)[0]


@cpu_kernel("npu_prompt_flash_attention")
def npu_prompt_flash_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, **options: Any) -> torch.Tensor:
    """``npu_prompt_flash_attention`` for float query, key and value (sparse modes 10-14
    are modes 0-4 at another precision)."""
    mode = options.get("sparse_mode", 0)
    attrs = {**options, "sparse_mode": mode - 10 if 10 <= mode <= 14 else mode}
    attrs.setdefault("pre_tokens", 2147473647)
    return prompt_flash_attention({**options, "query": query, "key": key, "value": value}, attrs)
