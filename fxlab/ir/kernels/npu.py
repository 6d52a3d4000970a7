"""Kernels of the GE ops TorchAir makes for torch_npu's common operators (``RmsNorm``,
``SwiGlu``, ``DynamicQuant`` ...), on the math of
:mod:`fxlab.ir.kernels.npu_reference` (the same as the torch operators' CPU kernels).

``ScatterNdUpdate`` writes its ref input in place, as GE does.
"""

from __future__ import annotations

from typing import Any


from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.kernels import npu_reference as ref
from fxlab.ir.model import IrOp


@register_kernel("RmsNorm")
def rms_norm(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, gamma = inputs[:2]
    return list(ref.rms_norm(x, gamma, attrs.get("epsilon", 1e-6)))


@register_kernel("AddRmsNorm")
def add_rms_norm(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x1, x2, gamma = inputs[:3]
    return list(ref.add_rms_norm(x1, x2, gamma, attrs.get("epsilon", 1e-6)))


@register_kernel("SwiGlu")
def swiglu(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [ref.swiglu(inputs[0], int(attrs.get("dim", -1)))]


@register_kernel("ScatterNdUpdate")
def scatter_nd_update(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Writes ``var`` (its ref input) in place and returns it."""
    var, indices, updates = inputs[:3]
    return [ref.scatter_nd_update_(var, indices, updates)]


@register_kernel("MoeGatingTopKSoftmax")
def moe_gating_top_k_softmax(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, finished = inputs[0], inputs[1] if len(inputs) > 1 else None
    return list(ref.moe_gating_top_k_softmax(x, finished, int(attrs.get("k", 1))))


@register_kernel("DynamicQuant")
def dynamic_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    named = named_inputs(op, inputs)
    return list(ref.dynamic_quant(named["x"], smooth_scales=named.get("smooth_scales"), group_index=named.get("group_index")))
