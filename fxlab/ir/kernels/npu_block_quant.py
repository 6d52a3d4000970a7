"""Kernels of the GE ops TorchAir makes for torch_npu's block and MX quantisation
operators (``DynamicBlockQuant``, ``DynamicMxQuant``, ``AntiMxQuant``), on the math of
:mod:`fxlab.ir.kernels.npu_block_quant_reference`. A float4 result has no unpacked CPU
representation (TorchAir's graph packs it into bytes after the op): such ops raise
``NotImplementedError`` saying so."""

from __future__ import annotations

from typing import Any

from fxlab.ir.kernels import npu_block_quant_reference as ref
from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.model import DTYPE_FROM_TORCHAIR_NUMBER, DataType, IrOp

# TorchAir's GE type numbers of float8 results -> torch_npu dtype codes.
_FLOAT8_CODES = {35: 23, 36: 24}
_FLOAT_CODES = {DataType.DT_FLOAT16: 5, DataType.DT_FLOAT: 6, DataType.DT_BF16: 15}


def _float8_code(number: int) -> int:
    if int(number) not in _FLOAT8_CODES:
        raise NotImplementedError(f"results of GE type number {number} (float4, hifloat8) have no unpacked CPU representation")
    return _FLOAT8_CODES[int(number)]


@register_kernel("DynamicBlockQuant")
def dynamic_block_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    keys = ("min_scale", "round_mode", "row_block_size", "col_block_size", "dst_type_max")
    options = {key: attrs[key] for key in keys if key in attrs}
    return list(ref.dynamic_block_quant(inputs[0], dst_type=_float8_code(attrs.get("dst_type", 34)), **options))


@register_kernel("DynamicMxQuant")
def dynamic_mx_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    options = {key: attrs[key] for key in ("axis", "round_mode", "scale_alg", "dst_type_max", "max_low_bound") if key in attrs}
    return list(
        ref.dynamic_mx_quant(
            inputs[0], dst_type=_float8_code(attrs.get("dst_type", 40)), block_size=int(attrs.get("blocksize", 32)), **options
        )
    )


@register_kernel("AntiMxQuant")
def anti_mx_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    target = DTYPE_FROM_TORCHAIR_NUMBER[int(attrs.get("dst_type", 27))]
    return [ref.anti_mx_quant(n["x"], n["mxscale"], axis=int(attrs.get("axis", -1)), dst_type=_FLOAT_CODES[target])]
