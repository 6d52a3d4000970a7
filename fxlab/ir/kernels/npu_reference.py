"""CPU reference kernels of torch_npu's rotary and attention operators, and the registry
every operator family fills with the eager CPU kernels of its torch_npu operators
(:func:`cpu_kernel`; :func:`meta_kernel` for the few Meta functions torch_npu lacks).

With these, a model written with ``torch_npu.npu_rms_norm``, ``npu_fusion_attention`` ...
runs eagerly on a CPU-only machine, so fxlab compares eager with compiled and the
Ascend IR's reference run with both. Each family keeps its shared math in its own
``npu_<family>_reference`` module. Each kernel computes what torch_npu's documentation
says the operator returns, in float32 for the reductions, for the options models use;
an option outside that raises ``NotImplementedError`` naming it. Outputs the operator
returns only for training or debugging (softmax statistics, dropout seeds) are zeros of
the shapes torch_npu's Meta function gives, so every output exists with the right shape.

torch_npu runs ``npu_apply_rotary_pos_emb`` in place on an NPU; its schema is functional,
so here it returns new tensors (what the captured graph means).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
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


def check_fia_options(options: dict[str, Any], query_dtype: torch.dtype) -> None:
    unsupported = [
        n
        for n in ("pse_shift", "block_table", "antiquant_scale", "quant_scale2", "dequant_scale1", "query_rope")
        if options.get(n) is not None
    ]
    if unsupported or query_dtype == torch.int8:
        raise NotImplementedError(f"npu_fused_infer_attention_score: {', '.join(unsupported) or 'int8 query'} have no CPU reference kernel")


def cpu_kernel(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as the eager CPU kernel of torch_npu operators ``names``
    (``"npu_x"`` for the default overload, ``"npu_x.List"`` for another). Each operator
    family's reference module registers its own; the torch_npu definitions register them
    with torch while the operators are defined."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            if name in CPU_KERNELS:
                raise ValueError(f"two CPU kernels registered for npu::{name}")
            CPU_KERNELS[name] = fn
        return fn

    return decorate


# operator name (``npu_x`` or ``npu_x.overload``) -> its eager CPU kernel
CPU_KERNELS: dict[str, Callable[..., Any]] = {}
# operator name -> a Meta function, for the few operators torch_npu's Meta file leaves out
META_KERNELS: dict[str, Callable[..., Any]] = {}


def meta_kernel(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as the Meta function of torch_npu operators ``names`` that have
    none of their own (registered only where the operator has no Meta kernel)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            META_KERNELS[name] = fn
        return fn

    return decorate


_ROTARY_AND_ATTENTION: dict[str, Callable[..., Any]] = {
    "npu_apply_rotary_pos_emb": apply_rotary_pos_emb,
    "npu_fusion_attention": fusion_attention,
    "npu_fused_infer_attention_score": fused_infer_attention_score,
}
for _name, _kernel in _ROTARY_AND_ATTENTION.items():
    cpu_kernel(_name)(_kernel)
