"""CPU reference kernels for the torch_npu operators Ascend models call most.

With these, a model written with ``torch_npu.npu_rms_norm``, ``npu_fusion_attention`` ...
runs eagerly on a CPU-only machine, so fxlab compares eager with compiled and the
Ascend IR's reference run with both. Each kernel computes what torch_npu's documentation
says the operator returns, in float32 for the reductions, for the options models use;
an option outside that raises ``NotImplementedError`` naming it. Outputs the operator
returns only for training or debugging (softmax statistics, dropout seeds) are zeros of
the shapes torch_npu's Meta function gives, so every output exists with the right shape.

torch_npu runs ``npu_apply_rotary_pos_emb`` in place on an NPU; its schema is functional,
so here it returns new tensors (what the captured graph means).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch.utils._pytree import tree_map

# torch's ScalarType numbering, which torch_npu's ``int? output_dtype`` arguments use.
SCALAR_TYPES = {1: torch.int8, 3: torch.int32, 5: torch.float16, 6: torch.float32, 15: torch.bfloat16}
_MASK_FILL = float("-inf")


def _meta_outputs(op_name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """The operator's outputs as its Meta function gives them (shapes and dtypes)."""

    def to_meta(value: Any) -> Any:
        return value.to("meta") if isinstance(value, torch.Tensor) else value

    op = getattr(torch.ops.npu, op_name).default
    return op(*tree_map(to_meta, list(args)), **tree_map(to_meta, kwargs))


def _zeros_like_meta(meta: torch.Tensor) -> torch.Tensor:
    return torch.zeros(meta.shape, dtype=meta.dtype)


# -- normalisation -----------------------------------------------------------------------------
def rms_norm(x: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, rstd): rstd over gamma's (trailing) dims, kept as size-1 dims."""
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    x32 = x.float()
    rstd = torch.rsqrt(x32.pow(2).mean(dims, keepdim=True) + epsilon)
    return (x32 * rstd * gamma.float()).to(x.dtype), rstd


def add_rms_norm(x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, ...]:
    """(y, rstd, x1 + x2)."""
    x = x1 + x2
    y, rstd = rms_norm(x, gamma, epsilon)
    return y, rstd, x


# -- rotary ------------------------------------------------------------------------------------
def _rotate(x: torch.Tensor, mode: str) -> torch.Tensor:
    if mode == "half":
        first, second = x.chunk(2, dim=-1)
        return torch.cat((-second, first), dim=-1)
    if mode == "interleave":
        pairs = x.unflatten(-1, (-1, 2))
        return torch.stack((-pairs[..., 1], pairs[..., 0]), dim=-1).flatten(-2)
    raise NotImplementedError(f"npu_apply_rotary_pos_emb: rotary_mode={mode!r} has no CPU reference kernel (half and interleave have)")


def apply_rotary_pos_emb(
    query: torch.Tensor, key: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str = "BSND", rotary_mode: str = "half"
) -> tuple[torch.Tensor, torch.Tensor]:
    """(q * cos + rotate(q) * sin, the same for k); cos/sin broadcast in the given layout."""

    def embed(x: torch.Tensor) -> torch.Tensor:
        return (x.float() * cos.float() + _rotate(x.float(), rotary_mode) * sin.float()).to(x.dtype)

    return embed(query), embed(key)


# -- activations and quantisation ----------------------------------------------------------------
def swiglu(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """silu(first half) * second half, halves split along ``dim``."""
    first, second = x.chunk(2, dim=dim)
    return (F.silu(first.float()) * second.float()).to(x.dtype)


def dynamic_quant(
    input: torch.Tensor,
    *,
    smooth_scales: torch.Tensor | None = None,
    group_index: torch.Tensor | None = None,
    dst_type: int | None = None,
    quant_mode: str = "pertoken",
    dst_type_max: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8 per token: scale = max|x| / 127 over the last dim, y = round(x / scale)."""
    if group_index is not None or quant_mode != "pertoken" or dst_type not in (None, 1):
        raise NotImplementedError("npu_dynamic_quant: only per-token int8 quantisation without group_index has a CPU reference kernel")
    x = input.float() * (smooth_scales.float() if smooth_scales is not None else 1.0)
    scale = x.abs().amax(dim=-1) / 127.0
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    y = torch.round(x / safe.unsqueeze(-1)).clamp(-128, 127).to(torch.int8)
    return y, scale


def quant_matmul(
    x1: torch.Tensor,
    x2: torch.Tensor,
    scale: torch.Tensor,
    *,
    offset: torch.Tensor | None = None,
    pertoken_scale: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    output_dtype: int | None = None,
    **unused: Any,
) -> torch.Tensor:
    """int8 x int8 matmul accumulated in int32 (+ int32 bias), dequantised by ``scale``
    (per channel) and ``pertoken_scale`` (per row); int8 output (requantised) when no
    output dtype is given."""
    if any(v is not None for v in unused.values()):
        raise NotImplementedError(
            f"npu_quant_matmul: {', '.join(k for k, v in unused.items() if v is not None)} have no CPU reference kernel"
        )
    acc = torch.matmul(x1.to(torch.int64), x2.to(torch.int64))
    if bias is not None and bias.dtype == torch.int32:
        acc = acc + bias.to(torch.int64)
    out = acc.to(torch.float64) * scale.to(torch.float64)
    if pertoken_scale is not None:
        out = out * pertoken_scale.to(torch.float64).unsqueeze(-1)
    if bias is not None and bias.dtype != torch.int32:
        out = out + bias.to(torch.float64)
    if output_dtype is None or SCALAR_TYPES.get(output_dtype) == torch.int8:
        return (torch.round(out) + (offset.to(torch.float64) if offset is not None else 0)).clamp(-128, 127).to(torch.int8)
    return out.to(SCALAR_TYPES.get(output_dtype, torch.float16))


# -- MoE -----------------------------------------------------------------------------------------
def moe_gating_top_k_softmax(x: torch.Tensor, finished: torch.Tensor | None = None, k: int = 1) -> tuple[torch.Tensor, ...]:
    """(top-k softmax probabilities, their expert ids, row ids): the row id of the j-th
    choice of row i is ``j * rows + i`` (the order the routing op reads them in).
    A finished row routes every choice to expert ``num_experts``."""
    probs = torch.softmax(x.float(), dim=-1)
    values, experts = probs.topk(k, dim=-1)
    experts = experts.to(torch.int32)
    if finished is not None:
        experts = torch.where(finished.unsqueeze(-1), torch.full_like(experts, x.shape[-1]), experts)
    rows = math.prod(x.shape[:-1])
    row_idx = torch.arange(rows * k, dtype=torch.int32).reshape(k, rows).t().reshape(*x.shape[:-1], k)
    return values.to(x.dtype), experts, row_idx.contiguous()


def grouped_matmul(
    x: list[torch.Tensor],
    weight: list[torch.Tensor],
    *,
    bias: list[torch.Tensor] | None = None,
    group_list: torch.Tensor | None = None,
    split_item: int | None = 0,
    group_type: int | None = None,
    group_list_type: int | None = 0,
    **unused: Any,
) -> list[torch.Tensor]:
    """``y_i = x_i @ w_i (+ b_i)``. With one ``x`` and a ``group_list`` (group_type 0),
    the rows of ``x`` are split into groups (cumulative ends, or counts when
    group_list_type is 1) and group i uses weight i (or slice i of a 3-D weight).
    split_item 2/3 returns one tensor, 0/1 one per group."""
    if any(v not in (None, 0) for v in unused.values()):
        raise NotImplementedError(
            f"npu_grouped_matmul: {', '.join(k for k, v in unused.items() if v not in (None, 0))} have no CPU reference kernel"
        )
    weights = list(weight[0].unbind(0)) if len(weight) == 1 and weight[0].dim() == 3 else list(weight)
    biases = (list(bias[0].unbind(0)) if len(bias) == 1 and bias[0].dim() == 2 else list(bias)) if bias else [None] * len(weights)
    if len(x) == 1 and len(weights) > 1:
        if group_list is None:
            raise NotImplementedError("npu_grouped_matmul: one x and several weights need a group_list")
        counts = group_list.tolist() if group_list_type == 1 else torch.diff(group_list, prepend=group_list.new_zeros(1)).tolist()
        xs = list(x[0][: sum(counts)].split([int(c) for c in counts]))
    else:
        xs = list(x)
    outs = [_linear(xi, wi, bi) for xi, wi, bi in zip(xs, weights, biases)]
    return [torch.cat(outs)] if split_item in (2, 3) else outs


def _linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    y = x.float() @ w.float()
    return (y + b.float() if b is not None else y).to(x.dtype)


# -- attention -----------------------------------------------------------------------------------
def _to_bnsd(t: torch.Tensor, layout: str, heads: int) -> torch.Tensor:
    if layout == "BNSD":
        return t
    if layout == "BSND":
        return t.transpose(1, 2)
    if layout == "BSH":
        return t.unflatten(-1, (heads, -1)).transpose(1, 2)
    if layout == "SBH":
        return t.unflatten(-1, (heads, -1)).permute(1, 2, 0, 3)
    raise NotImplementedError(f"layout {layout!r} has no CPU reference kernel (BNSD, BSND, BSH, SBH have)")


def _from_bnsd(t: torch.Tensor, layout: str) -> torch.Tensor:
    if layout == "BNSD":
        return t
    if layout == "BSND":
        return t.transpose(1, 2)
    if layout == "BSH":
        return t.transpose(1, 2).flatten(-2)
    return t.permute(2, 0, 1, 3).flatten(-2)  # SBH


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, masked: torch.Tensor | None, scale: float) -> torch.Tensor:
    """softmax(q k^T * scale, masked positions excluded) v in float32, BNSD; key/value
    heads are repeated for grouped-query attention."""
    if k.shape[1] != q.shape[1]:
        k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
        v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
    scores = torch.matmul(q.float(), k.float().transpose(-1, -2)) * scale
    if masked is not None:
        scores = scores.masked_fill(masked.to(torch.bool), _MASK_FILL)
    return torch.matmul(torch.softmax(scores, dim=-1), v.float())


def _sparse_mask(sparse_mode: int, atten_mask: torch.Tensor | None, s_q: int, s_kv: int) -> torch.Tensor | None:
    """The mask of masked (True) positions: the given one (modes 0/1), or the causal
    band the compressed 2048x2048 mask stands for (modes 2: top-left, 3: bottom-right)."""
    if sparse_mode in (0, 1):
        return atten_mask
    if sparse_mode in (2, 3):
        shift = 0 if sparse_mode == 2 else s_kv - s_q
        return torch.ones(s_q, s_kv, dtype=torch.bool).triu(1 + shift)
    raise NotImplementedError(f"sparse_mode={sparse_mode} has no CPU reference kernel (0-3 have)")


def attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    layout: str,
    heads: int,
    kv_heads: int,
    masked: torch.Tensor | None,
    sparse_mode: int,
    scale: float,
    kv_lengths: Sequence[int] | None = None,
) -> torch.Tensor:
    """Attention in the given layout: the mask (True = masked) or the sparse mode's
    causal band, key positions at or after each batch's ``kv_lengths`` masked too."""
    q = _to_bnsd(query, layout, heads)
    k, v = _to_bnsd(key, layout, kv_heads), _to_bnsd(value, layout, kv_heads)
    masked = _sparse_mask(sparse_mode, masked, q.shape[2], k.shape[2])
    if kv_lengths is not None:
        beyond = torch.arange(k.shape[2]).unsqueeze(0) >= torch.as_tensor([int(n) for n in kv_lengths]).reshape(-1, 1)
        beyond = beyond.reshape(-1, 1, 1, k.shape[2])
        masked = beyond if masked is None else (masked.to(torch.bool) | beyond)
    return _from_bnsd(_attention(q, k, v, masked, scale), layout).to(query.dtype).contiguous()


def kv_heads_of(query: torch.Tensor, key: torch.Tensor, layout: str, heads: int) -> int:
    if layout in ("BSH", "SBH"):
        return key.shape[-1] // (query.shape[-1] // heads)
    return key.shape[1] if layout == "BNSD" else key.shape[2]


FUSION_ATTENTION_OPTIONS = (
    "pse",
    "padding_mask",
    "atten_mask",
    "scale",
    "keep_prob",
    "pre_tockens",
    "next_tockens",
    "inner_precise",
    "prefix",
    "actual_seq_qlen",
    "actual_seq_kvlen",
    "sparse_mode",
)


def fusion_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, head_num: int, input_layout: str, *args: Any, **kwargs: Any
) -> tuple[Any, ...]:
    """``npu_fusion_attention``'s attention output (keep_prob 1, no pse); the softmax
    statistics and dropout numbers are zeros of the Meta function's shapes."""
    options = {**dict(zip(FUSION_ATTENTION_OPTIONS, args)), **kwargs}
    if options.get("pse") is not None or options.get("keep_prob", 1.0) != 1.0:
        raise NotImplementedError("npu_fusion_attention: pse and dropout (keep_prob < 1) have no CPU reference kernel")
    kv_heads = kv_heads_of(query, key, input_layout, head_num)
    out = attention(
        query,
        key,
        value,
        input_layout,
        head_num,
        kv_heads,
        options.get("atten_mask"),
        options.get("sparse_mode", 0),
        options.get("scale", 1.0),
    )
    meta = _meta_outputs("npu_fusion_attention", (query, key, value, head_num, input_layout), options)
    return (out, *(_zeros_like_meta(m) for m in meta[1:4]), 0, 0, 0)


def fused_infer_attention_score(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, **options: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    """``npu_fused_infer_attention_score`` for float query/key/value: the given
    ``atten_mask`` (True = masked) or the sparse mode's causal band, the per-batch
    ``actual_seq_lengths_kv`` (later key positions masked), grouped-query heads."""
    check_fia_options(options, query.dtype)
    layout, heads = options.get("input_layout", "BSH"), options.get("num_heads", 1)
    kv_heads = options.get("num_key_value_heads") or heads
    out = attention(
        query,
        key,
        value,
        layout,
        heads,
        kv_heads,
        options.get("atten_mask"),
        options.get("sparse_mode", 0),
        options.get("scale", 1.0),
        options.get("actual_seq_lengths_kv"),
    )
    meta = _meta_outputs("npu_fused_infer_attention_score", (query, key, value), options)
    return out, _zeros_like_meta(meta[1])


def fused_infer_attention_score_workspace(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, **options: Any) -> torch.Tensor:
    """``_npu_fused_infer_attention_score_get_max_workspace`` (TorchAir's
    ``replace_dynamic_workspace_ops`` adds it): the NPU kernel's scratch memory for the
    longest sequences. The CPU reference kernel needs none: an empty tensor."""
    return torch.empty(0, dtype=torch.uint8)


def fused_infer_attention_score_out(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    *,
    workspace: torch.Tensor | None = None,
    attention_out: torch.Tensor,
    softmax_lse: torch.Tensor,
    **options: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``npu_fused_infer_attention_score.out``: the operator into the given buffers (the
    workspace is the NPU kernel's; the reference kernel ignores it)."""
    out, lse = fused_infer_attention_score(query, key, value, **options)
    attention_out.resize_(out.shape).copy_(out)
    softmax_lse.resize_(lse.shape).copy_(lse)
    return attention_out, softmax_lse


def check_fia_options(options: dict[str, Any], query_dtype: torch.dtype) -> None:
    unsupported = [
        n
        for n in ("pse_shift", "block_table", "antiquant_scale", "quant_scale2", "dequant_scale1", "query_rope")
        if options.get(n) is not None
    ]
    if unsupported or query_dtype == torch.int8:
        raise NotImplementedError(f"npu_fused_infer_attention_score: {', '.join(unsupported) or 'int8 query'} have no CPU reference kernel")


# -- in-place --------------------------------------------------------------------------------------
def scatter_nd_update_(self: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
    """``self[indices[..., 0], indices[..., 1], ...] = updates``, in place."""
    with torch.no_grad():
        self[tuple(indices.long().unbind(-1))] = updates.to(self.dtype)
    return self


def scatter_nd_update(self: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
    return scatter_nd_update_(self.clone(), indices, updates)


CPU_KERNELS: dict[str, Callable[..., Any]] = {
    "npu_rms_norm": rms_norm,
    "npu_add_rms_norm": add_rms_norm,
    "npu_apply_rotary_pos_emb": apply_rotary_pos_emb,
    "npu_swiglu": swiglu,
    "npu_dynamic_quant": dynamic_quant,
    "npu_quant_matmul": quant_matmul,
    "npu_moe_gating_top_k_softmax": moe_gating_top_k_softmax,
    "npu_grouped_matmul": grouped_matmul,
    "npu_fusion_attention": fusion_attention,
    "npu_fused_infer_attention_score": fused_infer_attention_score,
    "npu_fused_infer_attention_score.out": fused_infer_attention_score_out,
    "_npu_fused_infer_attention_score_get_max_workspace": fused_infer_attention_score_workspace,
    "npu_scatter_nd_update_": scatter_nd_update_,
    "npu_scatter_nd_update": scatter_nd_update,
}
