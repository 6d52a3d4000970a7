"""Converters of torch_npu's quantisation operators, making the GE ops TorchAir makes.

From TorchAir's converters (``ge_converter/custom/`` of torch_npu 2.13.0):
``npu_dynamic_quant`` → ``DynamicQuant`` (per token, no ``dst_type_max``) or
``DynamicQuantV2``, ``npu_dynamic_quant_asymmetric`` → ``DynamicQuantV2``,
``npu_quantize`` → ``Quantize`` (``div_mode``) or ``AscendQuantV2``,
``npu_anti_quant`` → ``AscendAntiQuantV2``, ``npu_group_quant`` → ``GroupQuant``,
``npu_quant_max`` → ``QuantMax``, ``npu_trans_quant_param`` → ``TransQuantParamV2``,
``npu_dequant_bias`` → ``DequantBias``; int4 results are repacked eight to an int32 as
TorchAir does. Kernels: :mod:`fxlab.ir.kernels.npu_quant`.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, DataType, ge_dtype
from fxlab.ir.npu_dtypes import QUINT4X2
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op, npu_dtype, packed, refuse, widened
from fxlab.passes.converters.registry import Sample


def torchair_number(code: int) -> int:
    """TorchAir's number of a torch_npu dtype code's GE type (what int ``dst_type``
    attrs carry)."""
    return TORCHAIR_DTYPE_NUMBER[npu_dtype(code)]


def _activations(*shape: int) -> torch.Tensor:
    return torch.randn(*shape).half()


# -- dynamic quantisation -------------------------------------------------------------------------
def _dynamic_quant_samples() -> list[Sample]:
    x = _activations(3, 16)
    return [
        Sample((x,)),
        Sample((_activations(2, 3, 8),), {"smooth_scales": (torch.rand(8) + 0.5).half()}),
        Sample((x,), {"smooth_scales": (torch.rand(2, 16) + 0.5).half(), "group_index": torch.tensor([1, 3], dtype=torch.int32)}),
        Sample((x,), {"quant_mode": "pertensor"}),
        Sample((x,), {"quant_mode": "perchannel"}),
        Sample((x,), {"dst_type": QUINT4X2}),
        Sample((x.bfloat16(),), {"dst_type": 24, "dst_type_max": 240.0}),
    ]


@npu_converter("npu_dynamic_quant.default", _dynamic_quant_samples)
def convert_dynamic_quant(
    input: ge.Tensor,
    *,
    smooth_scales: ge.Tensor | None = None,
    group_index: ge.Tensor | None = None,
    dst_type: int | None = None,
    quant_mode: str = "pertoken",
    dst_type_max: float = 0.0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_dynamic_quant(Tensor input, *, Tensor? smooth_scales=None, Tensor? group_index=None, int? dst_type=None, str quant_mode="pertoken", float dst_type_max=0.0) -> (Tensor, Tensor)"""
    code = 1 if dst_type is None else int(dst_type)
    if quant_mode == "pertoken" and math.isclose(dst_type_max, 0.0, rel_tol=1e-9):
        inputs = {"x": input, "smooth_scales": smooth_scales, "group_index": group_index}
        y, scale = compact_op("DynamicQuant", inputs, {"dst_type": torchair_number(code)}, {"dst_type": 2}, outputs=("y", "scale"))
    else:
        y, scale, _ = _dynamic_quant_v2(input, smooth_scales, group_index, code, True, quant_mode, dst_type_max)
    ge.set_dtype(y, npu_dtype(code))
    if code == QUINT4X2:
        y = packed(y, input.rank, 8, DataType.DT_INT32)
    return [y, scale]


def _dynamic_quant_v2(
    x: ge.Tensor, smooth: ge.Tensor | None, groups: ge.Tensor | None, code: int, symmetric: bool, mode: str, type_max: float
) -> list[ge.Tensor]:
    attrs = {"dst_type": torchair_number(code), "is_symmetrical": symmetric, "quant_mode": mode, "dst_type_max": float(type_max)}
    inputs = {"x": x, "smooth_scales": smooth, "group_index": groups}
    return ge.op("DynamicQuantV2", inputs, attrs, outputs=("y", "scale", "offset"))


def _asymmetric_samples() -> list[Sample]:
    return [
        Sample((_activations(3, 16),)),
        Sample((_activations(3, 16),), {"smooth_scales": (torch.rand(16) + 0.5).half(), "dst_type": QUINT4X2}),
    ]


@npu_converter("npu_dynamic_quant_asymmetric.default", _asymmetric_samples)
def convert_dynamic_quant_asymmetric(
    input: ge.Tensor,
    *,
    smooth_scales: ge.Tensor | None = None,
    group_index: ge.Tensor | None = None,
    dst_type: int | None = None,
    quant_mode: str = "pertoken",
    dst_type_max: float = 0.0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_dynamic_quant_asymmetric(Tensor input, *, Tensor? smooth_scales=None, Tensor? group_index=None, int? dst_type=None, str quant_mode="pertoken", float dst_type_max=0.0) -> (Tensor, Tensor, Tensor)"""
    code = 1 if dst_type is None else int(dst_type)
    y, scale, offset = _dynamic_quant_v2(input, smooth_scales, group_index, code, False, quant_mode, dst_type_max)
    ge.set_dtype(y, npu_dtype(code))
    if code == QUINT4X2:
        y = packed(y, input.rank, 8, DataType.DT_INT32)
    return [y, scale, offset]


# -- static quantisation --------------------------------------------------------------------------
def _quantize_samples() -> list[Sample]:
    x = torch.randn(2, 3, 16)
    return [
        Sample((x, torch.rand(3) + 0.1, torch.tensor([1, -2, 0], dtype=torch.int32), 12, 1)),
        Sample((x, torch.rand(16) + 0.1, None, 1, -1, False)),
        Sample((x.half(), (torch.rand(16) + 0.1).half(), torch.randn(16).half(), QUINT4X2, -1, False)),
        # static W8A8 activations: bf16 reciprocal scales and offsets, values halfway between integers
        Sample(
            ((torch.arange(-16, 16) + 0.5).bfloat16().reshape(2, 16), torch.ones(16).bfloat16(), torch.zeros(16).bfloat16(), 12, -1, False)
        ),
    ]


# torch.qint8/quint8/qint32 by TorchAir's dtype_str for the Quantize op.
_QUANTIZE_TYPES = {
    DataType.DT_INT8: "torch.qint8",
    DataType.DT_UINT8: "torch.quint8",
    DataType.DT_INT32: "torch.qint32",
    DataType.DT_HIFLOAT8: "torch.hifloat8",
    DataType.DT_FLOAT8_E5M2: "torch.float8_e5m2",
    DataType.DT_FLOAT8_E4M3FN: "torch.float8_e4m3fn",
}
# torch's quantised ScalarType codes (qint8 12, quint8 13, qint32 14) -> their GE types.
_QUANTISED_CODES = {12: DataType.DT_INT8, 13: DataType.DT_UINT8, 14: DataType.DT_INT32}


@npu_converter("npu_quantize.default", _quantize_samples)
def convert_quantize(
    self: ge.Tensor,
    scales: ge.Tensor,
    zero_points: ge.Tensor | None,
    dtype: int,
    axis: int = 1,
    div_mode: bool = True,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_quantize(Tensor self, Tensor scales, Tensor? zero_points, int dtype, int axis=1, bool div_mode=True) -> Tensor"""
    target = _QUANTISED_CODES.get(int(dtype)) or npu_dtype(dtype)
    if not div_mode:
        attrs = {"sqrt_mode": False, "round_mode": "round", "dst_type": TORCHAIR_DTYPE_NUMBER[target], "axis": min(int(axis), -1)}
        y = ge.op1("AscendQuantV2", {"x": self, "scale": scales, "offset": zero_points}, attrs)
        ge.set_dtype(y, target)
        return packed(y, self.rank, 8, DataType.DT_INT32, cast_consts=True) if int(dtype) == QUINT4X2 else y
    where = "custom/quantized.py"
    if scales.rank != 1:
        refuse("RuntimeError: Scales' dim should be equal to 1.", where)
    axis = int(axis) + self.rank if axis < 0 else int(axis)
    if target not in _QUANTIZE_TYPES:
        refuse("RuntimeError: Unsupported dst_type ... when div_mode=True", where)
    others = [i for i in range(self.rank) if i != axis]
    if zero_points is not None:
        zero_points = ge.op1("Unsqueeze", {"x": zero_points}, {"axes": others})
    scales = ge.op1("Unsqueeze", {"x": scales}, {"axes": others})
    y = ge.op1("Quantize", {"x": self, "scales": scales, "zero_points": zero_points}, {"dtype": _QUANTIZE_TYPES[target], "axis": axis})
    return ge.set_dtype(y, target)


def _anti_quant_samples() -> list[Sample]:
    x = torch.randint(-128, 127, (4, 16), dtype=torch.int8)
    return [
        Sample((x, torch.rand(16).half()), {"offset": torch.randn(16).half()}),
        Sample((x, torch.rand(16).bfloat16()), {"dst_dtype": 15}),
        Sample((torch.randint(-(2**31), 2**31 - 1, (4, 2), dtype=torch.int32), torch.rand(16).half())),
    ]


_ANTI_QUANT_SOURCES = {
    DataType.DT_UINT8: DataType.DT_HIFLOAT8,
    DataType.DT_FLOAT8_E4M3FN: DataType.DT_FLOAT8_E4M3FN,
    DataType.DT_FLOAT8_E5M2: DataType.DT_FLOAT8_E5M2,
    DataType.DT_INT8: DataType.DT_INT8,
    DataType.DT_INT32: DataType.DT_INT4,
}


@npu_converter("npu_anti_quant.default", _anti_quant_samples)
def convert_anti_quant(
    x: ge.Tensor,
    scale: ge.Tensor,
    *,
    offset: ge.Tensor | None = None,
    dst_dtype: int | None = None,
    src_dtype: int | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_anti_quant(Tensor x, Tensor scale, *, Tensor? offset=None, int? dst_dtype=None, int? src_dtype=None) -> Tensor"""
    where = "custom/npu_anti_quant.py"
    if x.dtype not in _ANTI_QUANT_SOURCES:
        refuse(
            "RuntimeError: AntiQuant only support int8, int32, hifloat8, float8_e5m2 or float8_e4m3fn for input x",
            where,
        )
    if src_dtype is not None and npu_dtype(src_dtype) != _ANTI_QUANT_SOURCES[x.dtype]:
        refuse("RuntimeError: src_dtype should be match to x", where)
    if x.dtype == DataType.DT_UINT8:
        x = ge.op1("Bitcast", {"x": x}, {"type": DataType.DT_HIFLOAT8})
    elif x.dtype == DataType.DT_INT32:
        x = widened(x, 8, DataType.DT_INT4)
    dst = DataType.DT_FLOAT16 if dst_dtype is None else npu_dtype(dst_dtype)
    attrs = {"dst_type": TORCHAIR_DTYPE_NUMBER[dst], "sqrt_mode": False}
    return ge.op1("AscendAntiQuantV2", {"x": x, "scale": scale, "offset": offset}, attrs)


def _group_quant_samples() -> list[Sample]:
    x = torch.randn(6, 16).half()
    groups = torch.tensor([2, 6], dtype=torch.int32)
    return [
        Sample((x, torch.rand(2, 16) + 0.5, groups), {"dst_dtype": torch.qint8}),
        Sample((x, torch.rand(2, 16) + 0.5, groups), {"offset": torch.randn(1), "dst_dtype": torch.qint8}),
        Sample((x, torch.rand(2, 16) + 0.5, groups), {"dst_dtype": torch.quint4x2}),
    ]


@npu_converter("npu_group_quant.default", _group_quant_samples)
def convert_group_quant(
    x: ge.Tensor,
    scale: ge.Tensor,
    group_index: ge.Tensor,
    *,
    offset: ge.Tensor | None = None,
    dst_dtype: torch.dtype = torch.uint8,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_group_quant(Tensor x, Tensor scale, Tensor group_index, *, Tensor? offset=None, ScalarType? dst_dtype=None) -> Tensor"""
    if dst_dtype == torch.qint8:
        dst_dtype = torch.int8
    target = DataType.DT_INT4 if dst_dtype == torch.quint4x2 else ge_dtype(dst_dtype)
    attrs = {"dst_type": TORCHAIR_DTYPE_NUMBER[target]}
    y = ge.op1("GroupQuant", {"x": x, "scale": scale, "group_index": group_index, "offset": offset}, attrs)
    return packed(y, x.rank, 8, DataType.DT_INT32, shape_first=True) if dst_dtype == torch.quint4x2 else y


@npu_converter(
    "npu_quant_max.default",
    lambda: [
        Sample((torch.randn(4, 16).half(), torch.tensor([2.0]))),
        Sample((torch.randn(4, 16), torch.tensor([0.5])), {"dst_dtype": 292}),
    ],
)
def convert_quant_max(
    x: ge.Tensor,
    scale: ge.Tensor,
    *,
    round_mode: str = "rint",
    dst_dtype: int = 291,
    group_list: ge.Tensor | None = None,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_quant_max(Tensor x, Tensor scale, *, str round_mode="rint", int dst_dtype=291, Tensor? group_list=None) -> (Tensor, Tensor)"""
    # TorchAir's builder writes group_list (after scale) only when given.
    inputs = {"x": x, "scale": scale} if group_list is None else {"x": x, "scale": scale, "group_list": group_list}
    y, amax = ge.op("QuantMax", inputs, {"round_mode": round_mode, "dst_type": torchair_number(dst_dtype)}, outputs=("y", "amax"))
    return [ge.set_dtype(y, npu_dtype(dst_dtype)), amax]


@npu_converter(
    "npu_trans_quant_param.default",
    lambda: [Sample((torch.rand(8),)), Sample((torch.rand(1, 8), torch.randn(1, 8)), {"round_mode": 1})],
)
def convert_trans_quant_param(
    scale: ge.Tensor, offset: ge.Tensor | None = None, round_mode: int | None = 0, *, meta_outputs: Any = None
) -> ge.Tensor:
    """npu_trans_quant_param(Tensor scale, Tensor? offset=None, int? round_mode=0) -> Tensor"""
    return compact_op("TransQuantParamV2", {"scale": scale, "offset": offset}, {"round_mode": round_mode}, {"round_mode": 0})[0]


def _dequant_bias_samples() -> list[Sample]:
    x = torch.randint(-1000, 1000, (4, 16), dtype=torch.int32)
    return [
        Sample((x, torch.rand(16), torch.rand(4), torch.randn(16).half())),
        Sample((x, torch.rand(16), None, None), {"output_dtype": torch.bfloat16}),
    ]


@npu_converter("npu_dequant_bias.default", _dequant_bias_samples)
def convert_dequant_bias(
    x: ge.Tensor,
    weight_scale: ge.Tensor,
    activation_scale: ge.Tensor | None,
    bias: ge.Tensor | None,
    *,
    output_dtype: torch.dtype | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_dequant_bias(Tensor x, Tensor weight_scale, Tensor? activation_scale, Tensor? bias, *, ScalarType? output_dtype=None) -> Tensor"""
    out = DataType.DT_FLOAT16 if output_dtype is None else ge_dtype(output_dtype)
    inputs = {"x": x, "weight_scale": weight_scale, "activate_scale": activation_scale, "bias": bias}
    return ge.op1("DequantBias", inputs, {"output_dtype": TORCHAIR_DTYPE_NUMBER[out]})
