"""Kernels of the GE ops TorchAir makes for torch_npu's rotary embeddings
(``ApplyRotaryPosEmb``, ``RotaryMul``, ``RotaryMulGrad``, ``RotaryPositionEmbedding``,
``InterleaveRope``), on the math of :mod:`fxlab.ir.kernels.npu_rope_reference`.
``ApplyRotaryPosEmb`` writes its query and key (ref inputs) in place, as GE does.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.kernels import npu_rope_reference as ref
from fxlab.ir.model import IrOp

# RotaryPositionEmbedding's mode attr -> the rotary mode
ROTARY_MODES = {0: "half", 1: "interleave", 2: "quarter"}


@register_kernel("ApplyRotaryPosEmb")
def apply_rotary_pos_emb(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Writes query and key in place and returns them (cos/sin broadcast alike in every layout)."""
    query, key, cos, sin = inputs[:4]
    q, k = ref.apply_rotary_pos_emb(query, key, cos, sin, rotary_mode=attrs.get("rotary_mode", "half"))
    with torch.no_grad():
        query.copy_(q)
        key.copy_(k)
    return [query, key]


@register_kernel("RotaryMul")
def rotary_mul(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, r1, r2 = inputs[:3]
    return [ref.rotary_mul(x, r1, r2)]


@register_kernel("RotaryPositionEmbedding")
def rotary_position_embedding(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, cos, sin = inputs[:3]
    matrix = inputs[3] if len(inputs) > 3 else None
    mode = int(attrs.get("mode", 0))
    if mode not in ROTARY_MODES:
        raise NotImplementedError(f"RotaryPositionEmbedding: mode {mode} has no CPU reference kernel")
    return [ref.rotary_mul(x, cos, sin, ROTARY_MODES[mode], matrix)]


@register_kernel("RotaryMulGrad")
def rotary_mul_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """(dx, dr1, dr2) from (x, r1, r2, dy)."""
    x, r1, r2, dy = inputs[:4]
    return list(ref.rotary_mul_backward(dy, x, r1, r2))


@register_kernel("InterleaveRope")
def interleave_rope(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, cos, sin = inputs[:3]
    return [ref.interleave_rope(x, cos, sin)]
