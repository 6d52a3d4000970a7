"""Kernels of the GE ops TorchAir makes for torch_npu's common operators (``RmsNorm``,
``ApplyRotaryPosEmb``, ``FusedInferAttentionScore`` ...), on the math of
:mod:`fxlab.ir.kernels.npu_reference` (the same as the torch operators' CPU kernels).

Outputs a model does not read at inference (softmax statistics) are zeros of the shapes
the op's output descs give. ``ScatterNdUpdate`` and ``ApplyRotaryPosEmb`` write their ref
inputs in place, as GE does.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.kernels import npu_reference as ref
from fxlab.ir.model import IrOp, torch_dtype

# ApplyRotaryPosEmb's layout attr -> the layout string (BSND for 1: cos/sin broadcast alike for BSH).
_ROTARY_LAYOUTS = {1: "BSND", 2: "SBND", 3: "BNSD", 4: "TND"}


def _zeros_of(op: IrOp, index: int) -> torch.Tensor:
    desc = op.output_desc[index]
    return torch.zeros([max(d, 0) for d in desc.shape], dtype=torch_dtype(desc.dtype))


def _named(op: IrOp, inputs: list[Any]) -> dict[str, Any]:
    return {desc.name: value for desc, value in zip(op.input_desc, inputs)}


@register_kernel("RmsNorm")
def rms_norm(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, gamma = inputs[:2]
    return list(ref.rms_norm(x, gamma, attrs.get("epsilon", 1e-6)))


@register_kernel("AddRmsNorm")
def add_rms_norm(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x1, x2, gamma = inputs[:3]
    return list(ref.add_rms_norm(x1, x2, gamma, attrs.get("epsilon", 1e-6)))


@register_kernel("ApplyRotaryPosEmb")
def apply_rotary_pos_emb(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Writes query and key (its ref inputs) in place and returns them."""
    query, key, cos, sin = inputs[:4]
    layout = _ROTARY_LAYOUTS[int(attrs.get("layout", 1))]
    q, k = ref.apply_rotary_pos_emb(query, key, cos, sin, layout, attrs.get("rotary_mode", "half"))
    with torch.no_grad():
        query.copy_(q)
        key.copy_(k)
    return [query, key]


@register_kernel("SwiGlu")
def swiglu(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [ref.swiglu(inputs[0], int(attrs.get("dim", -1)))]


@register_kernel("ScatterNdUpdate")
def scatter_nd_update(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Writes ``var`` (its ref input) in place and returns it."""
    var, indices, updates = inputs[:3]
    return [ref.scatter_nd_update_(var, indices, updates)]


@register_kernel("FusedInferAttentionScore")
def fused_infer_attention_score(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    named = _named(op, inputs)
    ref.check_fia_options(named, named["query"].dtype)
    heads = int(attrs.get("num_heads", 1))
    lengths = named.get("actual_seq_lengths_kv")
    out = ref.attention(
        named["query"],
        named["key0"],
        named["value0"],
        attrs.get("input_layout", "BSH"),
        heads,
        int(attrs.get("num_key_value_heads", 0)) or heads,
        named.get("atten_mask"),
        int(attrs.get("sparse_mode", 0)),
        float(attrs.get("scale", 1.0)),
        lengths.tolist() if lengths is not None else None,
    )
    return [out, _zeros_of(op, 1)]


@register_kernel("FlashAttentionScore")
def flash_attention_score(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Outputs softmax_max, softmax_sum, softmax_out (zeros) and attention_out."""
    named = _named(op, inputs)
    if named.get("real_shift") is not None or float(attrs.get("keep_prob", 1.0)) != 1.0:
        raise NotImplementedError("FlashAttentionScore: real_shift and dropout have no CPU reference kernel")
    query, key, layout, heads = named["query"], named["key"], attrs["input_layout"], int(attrs["head_num"])
    out = ref.attention(
        query,
        key,
        named["value"],
        layout,
        heads,
        ref.kv_heads_of(query, key, layout, heads),
        named.get("atten_mask"),
        int(attrs.get("sparse_mode", 0)),
        float(attrs.get("scale_value", 1.0)),
    )
    return [_zeros_of(op, 0), _zeros_of(op, 1), _zeros_of(op, 2), out]


@register_kernel("MoeGatingTopKSoftmax")
def moe_gating_top_k_softmax(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, finished = inputs[0], inputs[1] if len(inputs) > 1 else None
    return list(ref.moe_gating_top_k_softmax(x, finished, int(attrs.get("k", 1))))


@register_kernel("DynamicQuant")
def dynamic_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    named = _named(op, inputs)
    return list(ref.dynamic_quant(named["x"], smooth_scales=named.get("smooth_scales"), group_index=named.get("group_index")))
