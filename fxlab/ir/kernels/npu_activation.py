"""Kernels of the GE ops TorchAir makes for torch_npu's activation operators (``SwiGlu``,
``GeGluV2``, ``FastGelu``, ``DequantSwigluQuant`` ...), on the math of
:mod:`fxlab.ir.kernels.npu_activation_reference`."""

from __future__ import annotations

from typing import Any

from fxlab.ir.kernels import npu_activation_reference as ref
from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.model import IrOp

# TorchAir's GE type numbers of quantised results -> torch_npu dtype codes.
_QUANT_CODES = {2: 1, 35: 23, 36: 24}


def _quant_code(number: int) -> int:
    if int(number) not in _QUANT_CODES:
        raise NotImplementedError(
            f"quantised results of GE type number {number} (int4, float4, hifloat8) have no unpacked CPU representation"
        )
    return _QUANT_CODES[int(number)]


@register_kernel("SwiGlu")
def swiglu(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [ref.swiglu(inputs[0], int(attrs.get("dim", -1)))]


@register_kernel("SwiGluGrad")
def swiglu_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return [ref.swiglu_backward(n["y_grad"], n["x"], int(attrs.get("dim", -1)))]


@register_kernel("ClippedSwiglu")
def clipped_swiglu(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options = {key: attrs[key] for key in ("dim", "alpha", "limit", "bias", "interleaved") if key in attrs}
    return [ref.clipped_swiglu(n["x"], group_index=n.get("group_index"), **options)]


@register_kernel("GeluV2")
def gelu_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [ref.gelu(inputs[0], approximate=attrs.get("approximate", "none"))]


@register_kernel("GeluGradV2")
def gelu_grad_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return [ref.gelu_backward(n["dy"], n["x"], approximate=attrs.get("approximate", "none"))]


@register_kernel("FastGelu")
def fast_gelu(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [ref.fast_gelu(inputs[0])]


@register_kernel("FastGeluGrad")
def fast_gelu_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return [ref.fast_gelu_backward(n["dy"], n["x"])]


@register_kernel("GeGluV2")
def geglu_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    options = {key: attrs[key] for key in ("dim", "approximate", "activate_left") if key in attrs}
    return list(ref.geglu(inputs[0], **options))


@register_kernel("GeluQuant")
def gelu_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options = {key: attrs[key] for key in ("approximate", "quant_mode", "round_mode") if key in attrs}
    code = _quant_code(attrs.get("dst_type", 2))
    return list(ref.gelu_quant(n["x"], input_scale=n.get("input_scale"), input_offset=n.get("input_offset"), dst_type=code, **options))


_ROUND_MODES = {"rint": 0, "round": 1, "floor": 2, "ceil": 3, "trunc": 4}


@register_kernel("DequantSwigluQuant")
def dequant_swiglu_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    tensors: dict[str, Any] = {
        name: n.get(name) for name in ("weight_scale", "activation_scale", "bias", "quant_scale", "quant_offset", "group_index")
    }
    keys = ("activate_left", "activate_dim", "swiglu_mode", "clamp_limit", "glu_alpha", "glu_bias")
    options: dict[str, Any] = {key: attrs[key] for key in keys if key in attrs}
    options["quant_mode"] = 1 if attrs.get("quant_mode", "static") == "dynamic" else 0
    options["round_mode"] = _ROUND_MODES[attrs.get("round_mode", "rint")]
    return list(ref.dequant_swiglu_quant(n["x"], dst_type=_quant_code(attrs.get("dst_type", 2)), **tensors, **options))


_MX_CODES = {35: 23, 36: 24}


@register_kernel("SwigluMxQuant")
def swiglu_mx_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    number = int(attrs.get("dst_type", 40))
    if number not in _MX_CODES:
        raise NotImplementedError(f"MX quantisation to GE type number {number} (float4) has no unpacked CPU representation")
    keys = (
        "activate_dim",
        "activate_left",
        "swiglu_mode",
        "clamp_limit",
        "glu_alpha",
        "glu_bias",
        "group_mode",
        "axis",
        "round_mode",
        "scale_alg",
        "max_dtype_value",
    )
    options = {key: attrs[key] for key in keys if key in attrs}
    return list(ref.swiglu_mx_quant(n["x"], group_index=n.get("group_index"), dst_type=_MX_CODES[number], **options))
