"""Kernels of the GE ops TorchAir makes for torch_npu's quantisation operators
(``DynamicQuant``, ``AscendQuantV2``, ``AscendAntiQuantV2`` ...), on the math of
:mod:`fxlab.ir.kernels.npu_quant_reference`.

Their ``dst_type`` attrs carry TorchAir's numbers of GE types. An int4 result has no
CPU representation a GE graph can pass on (torch has no int4 type; TorchAir's graph
bitcasts it to int32 words later): such ops raise ``NotImplementedError`` saying so.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels import npu_quant_reference as ref
from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.model import DTYPE_FROM_TORCHAIR_NUMBER, DataType, IrOp, torch_dtype

# TorchAir's GE type numbers -> torch_npu dtype codes of the quantised results.
_CODES = {2: 1, 29: 16, 35: 23, 36: 24, 34: 290, 4: 0}


def _code(number: int) -> int:
    code = _CODES.get(int(number))
    if code == 16:
        raise NotImplementedError("an int4 result has no CPU representation in the GE graph (torch has no int4 type)")
    if code is None:
        raise NotImplementedError(f"quantisation to GE type number {number} has no CPU reference kernel")
    return code


@register_kernel("DynamicQuant")
def dynamic_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    code = _code(attrs.get("dst_type", 2))
    return list(ref.dynamic_quant(n["x"], smooth_scales=n.get("smooth_scales"), group_index=n.get("group_index"), dst_type=code))


@register_kernel("DynamicQuantV2")
def dynamic_quant_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options = {
        "smooth_scales": n.get("smooth_scales"),
        "group_index": n.get("group_index"),
        "dst_type": _code(attrs.get("dst_type", 2)),
        "quant_mode": attrs.get("quant_mode", "pertoken"),
        "dst_type_max": float(attrs.get("dst_type_max", 0.0)),
    }
    if attrs.get("is_symmetrical", False):
        y, scale = ref.dynamic_quant(n["x"], **options)
        return [y, scale, torch.zeros_like(scale)]
    return list(ref.dynamic_quant_asymmetric(n["x"], **options))


@register_kernel("AscendQuantV2")
def ascend_quant_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    if attrs.get("sqrt_mode") or attrs.get("round_mode", "round") != "round":
        raise NotImplementedError("AscendQuantV2: sqrt_mode and round modes other than 'round' have no CPU reference kernel")
    return [ref.quantize(n["x"], n["scale"], n.get("offset"), _code(attrs.get("dst_type", 2)), -1, div_mode=False)]


@register_kernel("Quantize")
def quantize(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    codes = {"torch.qint8": 12, "torch.quint8": 13, "torch.qint32": 14}
    if attrs["dtype"] not in codes:
        raise NotImplementedError(f"Quantize to {attrs['dtype']} has no CPU reference kernel")
    axis = int(attrs.get("axis", 1))
    scales = n["scales"].reshape(-1)
    zero_points = n["zero_points"].reshape(-1) if n.get("zero_points") is not None else None
    return [ref.quantize(n["x"], scales, zero_points, codes[attrs["dtype"]], axis)]


@register_kernel("AscendAntiQuantV2")
def ascend_anti_quant_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    if attrs.get("sqrt_mode"):
        raise NotImplementedError("AscendAntiQuantV2: sqrt_mode has no CPU reference kernel")
    out = torch_dtype(DTYPE_FROM_TORCHAIR_NUMBER[int(attrs.get("dst_type", 1))])
    return [ref.dequantised(n["x"], n["scale"], n.get("offset"), out)]


@register_kernel("GroupQuant")
def group_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    if _code(attrs.get("dst_type", 2)) != 1:
        raise NotImplementedError("GroupQuant: only int8 results have a CPU reference kernel")
    return [ref.group_quant(n["x"], n["scale"], n["group_index"], offset=n.get("offset"), dst_dtype=torch.qint8)]


@register_kernel("QuantMax")
def quant_max(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    code = _code(attrs.get("dst_type", 35))
    return list(
        ref.quant_max(n["x"], n["scale"], round_mode=attrs.get("round_mode", "rint"), dst_dtype=code, group_list=n.get("group_list"))
    )


@register_kernel("TransQuantParamV2")
def trans_quant_param_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return [ref.trans_quant_param(n["scale"], n.get("offset"), int(attrs.get("round_mode", 0)))]


@register_kernel("DequantBias")
def dequant_bias(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    out = torch_dtype(DTYPE_FROM_TORCHAIR_NUMBER.get(int(attrs["output_dtype"]), DataType.DT_FLOAT16))
    return [ref.dequant_bias(n["x"], n["weight_scale"], n.get("activate_scale"), n.get("bias"), output_dtype=out)]
