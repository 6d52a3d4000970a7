"""Converters of torch_npu's (quantised) matmuls, making the GE ops TorchAir makes on an
Atlas A2/A3 machine.

From TorchAir's converters (``ge_converter/custom/`` of torch_npu 2.13.0):
``npu_quant_matmul`` → ``QuantBatchMatmulV3`` (int8; ``QuantBatchMatmulV4`` is arch35's),
``npu_weight_quant_batchmatmul`` → ``WeightQuantBatchMatmulV2`` (int64 quant scales cast to
uint64), ``npu_quant_matmul_dequant`` → ``QuantMatmulDequant``,
``npu_quant_matmul_reduce_sum`` → ``QuantMatmulReduceSum``, ``npu_quant_conv2d`` →
``QuantConv2D`` (NCHW), ``npu_batch_gather_matmul`` → ``AddLora``,
``npu_transpose_batchmatmul`` → ``TransposeBatchMatMul``,
``npu_transpose_quant_batchmatmul`` → ``TransposeQuantBatchMatMul``, ``npu_linear`` →
``MatMul`` of the transposed weight. TorchAir refuses ``npu_add_quant_matmul(_)`` and
``npu_fused_matmul`` before arch35 (Ascend 950). Kernels: :mod:`fxlab.ir.kernels.npu_matmul`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, DataType
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op, not_built_in, npu_dtype, refuse, viewed_as
from fxlab.passes.converters.registry import Sample

GROUP_SIZE_MAX = 65535


def _type_number(code: int) -> int:
    return TORCHAIR_DTYPE_NUMBER[npu_dtype(code)]


def _int8(*shape: int) -> torch.Tensor:
    return torch.randint(-127, 127, shape, dtype=torch.int8)


# -- quantised matmul ------------------------------------------------------------------------------
def _quant_matmul_samples() -> list[Sample]:
    x1, x2 = _int8(4, 16), _int8(16, 8)
    return [
        Sample((x1, x2, torch.rand(8) * 0.01), {"pertoken_scale": torch.rand(4), "output_dtype": 15}),
        Sample((x1, x2, torch.rand(8) * 0.01), {"bias": torch.randint(-100, 100, (8,), dtype=torch.int32), "output_dtype": 5}),
        # static W8A8: an int32 bias and a float32 scale per channel, bf16 output
        Sample((x1, x2, torch.rand(8) * 0.01), {"bias": torch.randint(-100, 100, (8,), dtype=torch.int32), "output_dtype": 15}),
        Sample((_int8(2, 4, 16), _int8(2, 16, 8), torch.rand(1) * 0.01), {"output_dtype": 5}),
    ]


def _group_size_refusal(group_sizes: list[int] | None) -> str | None:
    """TorchAir's check of ``group_sizes`` (three values, each in [0, 65535])."""
    if group_sizes is None:
        return None
    if len(group_sizes) != 3:
        return f"RuntimeError: group_size must be a list with 3 elements, actual group_sizes is {group_sizes}"
    if any(v > GROUP_SIZE_MAX for v in group_sizes):
        return f"RuntimeError: group_size can't larger than 65535, actual group_sizes is {group_sizes}"
    if any(v < 0 for v in group_sizes):
        return f"RuntimeError: group_size can't smaller than 0, actual group_sizes is {group_sizes}"
    return None


@npu_converter("npu_quant_matmul.default", _quant_matmul_samples)
def convert_quant_matmul(
    x1: ge.Tensor,
    x2: ge.Tensor,
    scale: ge.Tensor,
    *,
    offset: ge.Tensor | None = None,
    pertoken_scale: ge.Tensor | None = None,
    bias: ge.Tensor | None = None,
    output_dtype: int | None = None,
    x1_dtype: int | None = None,
    x2_dtype: int | None = None,
    pertoken_scale_dtype: int | None = None,
    scale_dtype: int | None = None,
    group_sizes: list[int] | None = None,
    y_scale: ge.Tensor | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_quant_matmul(Tensor x1, Tensor x2, Tensor scale, *, Tensor? offset=None, Tensor? pertoken_scale=None, Tensor? bias=None, int? output_dtype=None, int? x1_dtype=None, int? x2_dtype=None, int? pertoken_scale_dtype=None, int? scale_dtype=None, int[]? group_sizes=None, Tensor? y_scale=None) -> Tensor"""
    where = "custom/quantmatmul.py"
    ints = (DataType.DT_INT8, DataType.DT_INT32)
    if x1.dtype not in ints and x2.dtype not in ints:
        refuse("RuntimeError: In soc versions prior to A5, x1 and x2 only supports int8 or int32.", where)
    if x1.dtype == DataType.DT_INT32 or x1_dtype is not None or x2_dtype is not None:
        not_built_in("int4 (int32-packed) or float4/float8 inputs")
    reason = _group_size_refusal(group_sizes)
    if reason is not None:
        refuse(reason, where)
    if pertoken_scale_dtype is not None and pertoken_scale is not None:
        pertoken_scale = viewed_as(pertoken_scale, pertoken_scale_dtype)
    if scale_dtype is not None:
        scale = viewed_as(scale, scale_dtype)
    inputs = {"x1": x1, "x2": x2, "scale": scale, "offset": offset, "bias": bias, "pertoken_scale": pertoken_scale}
    attrs = {"dtype": _type_number(1 if output_dtype is None else output_dtype), "transpose_x1": False, "transpose_x2": False}
    return ge.op1("QuantBatchMatmulV3", inputs, attrs)


def _weight_quant_samples() -> list[Sample]:
    x, w = torch.randn(4, 16).half(), _int8(16, 8)
    return [
        Sample((x, w, torch.rand(8).half() * 0.01)),
        Sample((x, w, torch.rand(8).half() * 0.01, torch.randn(8).half()), {"bias": torch.randn(8).half()}),
        Sample((x, w, torch.rand(2, 8).half() * 0.01), {"antiquant_group_size": 8, "inner_precise": 1}),
    ]


@npu_converter("npu_weight_quant_batchmatmul.default", _weight_quant_samples)
def convert_weight_quant_batchmatmul(
    x: ge.Tensor,
    weight: ge.Tensor,
    antiquant_scale: ge.Tensor,
    antiquant_offset: ge.Tensor | None = None,
    quant_scale: ge.Tensor | None = None,
    quant_offset: ge.Tensor | None = None,
    bias: ge.Tensor | None = None,
    antiquant_group_size: int = 0,
    inner_precise: int = 0,
    weight_dtype: int | None = None,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_weight_quant_batchmatmul(Tensor x, Tensor weight, Tensor antiquant_scale, Tensor? antiquant_offset=None, Tensor? quant_scale=None, Tensor? quant_offset=None, Tensor? bias=None, int antiquant_group_size=0, int inner_precise=0, int? weight_dtype=None) -> Tensor"""
    if quant_scale is not None and quant_scale.dtype == DataType.DT_INT64:
        quant_scale = ge.cast(quant_scale, DataType.DT_UINT64)
    if antiquant_scale.dtype == DataType.DT_UINT8:
        not_built_in("float8_e8m0 (uint8) antiquant scales")
    if weight_dtype is not None:
        weight = viewed_as(weight, weight_dtype)
    inputs = {
        "x": x,
        "weight": weight,
        "antiquant_scale": antiquant_scale,
        "antiquant_offset": antiquant_offset,
        "quant_scale": quant_scale,
        "quant_offset": quant_offset,
        "bias": bias,
    }
    attrs = {
        "transpose_x": False,
        "transpose_weight": False,
        "antiquant_group_size": int(antiquant_group_size),
        "dtype": -1,
        "inner_precise": int(inner_precise),
    }
    return ge.op1("WeightQuantBatchMatmulV2", inputs, attrs)


def _quant_matmul_dequant_samples() -> list[Sample]:
    x, w = torch.randn(4, 16).half(), _int8(8, 16)
    return [Sample((x, w, torch.rand(8) * 0.01)), Sample((x, w, torch.rand(8) * 0.01), {"smooth_scale": (torch.rand(16) + 0.5).half()})]


@npu_converter("npu_quant_matmul_dequant.default", _quant_matmul_dequant_samples)
def convert_quant_matmul_dequant(
    x: ge.Tensor,
    quantized_weight: ge.Tensor,
    weight_scale: ge.Tensor,
    *,
    bias: ge.Tensor | None = None,
    x_scale: ge.Tensor | None = None,
    x_offset: ge.Tensor | None = None,
    smooth_scale: ge.Tensor | None = None,
    quant_mode: str | None = "pertoken",
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_quant_matmul_dequant(Tensor x, Tensor quantized_weight, Tensor weight_scale, *, Tensor? bias=None, Tensor? x_scale=None, Tensor? x_offset=None, Tensor? smooth_scale=None, str? quant_mode='pertoken') -> Tensor"""
    inputs = {
        "x": x,
        "quantized_weight": quantized_weight,
        "weight_scale": weight_scale,
        "bias": bias,
        "x_scale": x_scale,
        "x_offset": x_offset,
        "smooth_scale": smooth_scale,
    }
    attrs = {"x_quant_mode": quant_mode, "transpose_weight": True}
    return compact_op("QuantMatmulDequant", inputs, attrs, {"x_quant_mode": "pertoken", "transpose_weight": True})[0]


@npu_converter(
    "npu_quant_matmul_reduce_sum.default",
    lambda: [Sample((_int8(2, 4, 16), _int8(2, 16, 8)), {"x1_scale": torch.rand(2, 4), "x2_scale": torch.rand(8).bfloat16()})],
)
def convert_quant_matmul_reduce_sum(
    x1: ge.Tensor, x2: ge.Tensor, *, x1_scale: ge.Tensor | None = None, x2_scale: ge.Tensor | None = None, meta_outputs: Any = None
) -> ge.Tensor:
    """npu_quant_matmul_reduce_sum(Tensor x1, Tensor x2, *, Tensor? x1_scale=None, Tensor? x2_scale=None) -> Tensor"""
    inputs: dict[str, ge.Tensor | None] = {
        "x1": x1,
        "x2": x2,
        "dims": ge.const([0]),
        "bias": None,
        "x1_scale": x1_scale,
        "x2_scale": x2_scale,
    }
    inputs.update(y_scale=None, x1_offset=None, x2_offset=None, y_offset=None, x2_table=None)
    attrs = {
        "dtype": TORCHAIR_DTYPE_NUMBER[DataType.DT_BF16],
        "compute_type": -1,
        "transpose_x1": False,
        "transpose_x2": False,
        "group_size": -1,
    }
    return ge.op1("QuantMatmulReduceSum", inputs, {**attrs, "keep_dims": False})


# -- quantised conv --------------------------------------------------------------------------------
_CONV_OUTPUT_CODES = (5, 6, 15, 290)


def _quant_conv_samples() -> list[Sample]:
    x, w = _int8(1, 4, 6, 6), _int8(8, 4, 3, 3)
    # The scales as npu_trans_quant_param makes them (int64 quant parameters).
    scale = ((torch.rand(8) * 0.01).view(torch.int32).to(torch.int64) & 0xFFFFE000) | (1 << 46)
    return [
        Sample((x, w, scale, [1, 1], [1, 1], [1, 1]), {"output_dtype": 5}),
        Sample((x, w, scale, [2, 2], [0, 0], [1, 1]), {"output_dtype": 5, "bias": torch.randint(-9, 9, (8,), dtype=torch.int32)}),
        Sample((x, w, scale, [1, 1], [1, 1], [1, 1]), {"output_dtype": 5, "offset": torch.rand(8)}),
    ]


def _quant_conv_refusal(meta_outputs: Any, offset: ge.Tensor | None, output_dtype: int) -> str | None:
    if meta_outputs is not None and meta_outputs.dim() != 4:
        return "NotImplementedError: torch.ops.npu.npu_quant_conv2d.default ge converter is only implement for 4D tensor!"
    if offset is not None:
        return "NotImplementedError: torch.ops.npu.npu_quant_conv2d.default ge converter is not implement while offset is not None!"
    if output_dtype not in _CONV_OUTPUT_CODES:
        return "NotImplementedError: npu_quant_conv2d ge converter is not implement while output_dtype is not float16, bfloat16, float32 or hifloat8!"
    return None


@npu_converter("npu_quant_conv2d.default", _quant_conv_samples)
def convert_quant_conv2d(
    input: ge.Tensor,
    weight: ge.Tensor,
    scale: ge.Tensor,
    strides: list[int],
    pads: list[int],
    dilations: list[int],
    groups: int = 1,
    offset_x: int = 0,
    round_mode: str = "rint",
    output_dtype: int = 0,
    bias: ge.Tensor | None = None,
    offset: ge.Tensor | None = None,
    x_dtype: int | None = None,
    weight_dtype: int | None = None,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_quant_conv2d(Tensor input, Tensor weight, Tensor scale, int[2] strides=1, int[2] pads=0, int[2] dilations=1, int groups=1, int offset_x=0, str round_mode='rint', int output_dtype=0, Tensor? bias=None, Tensor? offset=None, int? x_dtype=None, int? weight_dtype=None) -> Tensor"""
    reason = _quant_conv_refusal(meta_outputs, offset, output_dtype)
    if reason is not None:
        refuse(reason, "custom/quant_conv2d.py")
    if x_dtype is not None:
        ge.set_dtype(input, npu_dtype(x_dtype))
    if weight_dtype is not None:
        ge.set_dtype(weight, npu_dtype(weight_dtype))
    attrs = {
        # The proto type number of the output (TorchAir passes torch_dtype_value_to_ge_proto_type).
        "dtype": int(npu_dtype(output_dtype)),
        "strides": [1, 1, int(strides[0]), int(strides[1])],
        "pads": [int(pads[0]), int(pads[0]), int(pads[1]), int(pads[1])],
        "dilations": [1, 1, int(dilations[0]), int(dilations[1])],
        "groups": int(groups),
        "data_format": "NCHW",
        "offset_x": int(offset_x),
        "round_mode": round_mode,
    }
    out = ge.op1("QuantConv2D", {"x": input, "filter": weight, "scale": scale, "bias": bias, "offset": None}, attrs)
    return ge.set_dtype(out, npu_dtype(output_dtype)) if output_dtype == 290 else out


# -- other matmuls ---------------------------------------------------------------------------------
def _lora_samples() -> list[Sample]:
    y, x = torch.randn(4, 16).half(), torch.randn(4, 8).half()
    weight_b, weight_a = torch.randn(3, 2, 16, 4).half(), torch.randn(3, 2, 4, 8).half()
    return [Sample((y, x, weight_b, torch.tensor([0, 2, 1, 0], dtype=torch.int32)), {"weight_a": weight_a, "layer_idx": 1, "scale": 0.5})]


@npu_converter("npu_batch_gather_matmul.default", _lora_samples)
def convert_batch_gather_matmul(
    y: ge.Tensor,
    x: ge.Tensor,
    weight_b: ge.Tensor,
    indices: ge.Tensor,
    weight_a: ge.Tensor | None = None,
    layer_idx: int = 0,
    scale: float = 1e-3,
    y_offset: int = 0,
    y_slice_size: int = -1,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_batch_gather_matmul(Tensor self, Tensor x, Tensor weight_b, Tensor indices, Tensor? weight_a=None, int layer_idx=0, float scale=1e-3, int y_offset=0, int y_slice_size=-1) -> Tensor"""
    inputs = {"y": y, "x": x, "weightB": weight_b, "indices": indices, "weightA": weight_a}
    attrs = {"layer_idx": int(layer_idx), "scale": float(scale), "y_offset": int(y_offset), "y_slice_size": int(y_slice_size)}
    return compact_op("AddLora", inputs, attrs, {"layer_idx": 0, "scale": 0.001, "y_offset": 0, "y_slice_size": -1})[0]


@npu_converter(
    "npu_transpose_batchmatmul.default",
    lambda: [
        Sample((torch.randn(2, 3, 8).half(), torch.randn(2, 8, 4).half())),
        Sample((torch.randn(3, 2, 8).half(), torch.randn(2, 8, 4).half()), {"perm_x1": [1, 0, 2]}),
    ],
)
def convert_transpose_batchmatmul(
    input: ge.Tensor,
    weight: ge.Tensor,
    *,
    bias: ge.Tensor | None = None,
    scale: ge.Tensor | None = None,
    perm_x1: list[int] | None = None,
    perm_x2: list[int] | None = None,
    perm_y: list[int] | None = None,
    batch_split_factor: int | None = 1,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_transpose_batchmatmul(Tensor input, Tensor weight, *, Tensor? bias=None, Tensor? scale=None, int[]? perm_x1=None, int[]? perm_x2=None, int[]? perm_y=None, int? batch_split_factor=1) -> Tensor"""
    attrs = {
        "perm_x1": list(perm_x1) if perm_x1 is not None else [0, 1, 2],
        "perm_x2": list(perm_x2) if perm_x2 is not None else [0, 1, 2],
        "perm_y": list(perm_y) if perm_y is not None else [1, 0, 2],
        # torch_npu's default: no HF32 for matmuls (torch.npu.matmul.allow_hf32).
        "enable_hf32": False,
        "batch_split_factor": int(batch_split_factor or 1),
    }
    defaults = {"perm_x1": [], "perm_x2": [], "perm_y": [], "enable_hf32": False, "batch_split_factor": 1}
    return compact_op("TransposeBatchMatMul", {"x1": input, "x2": weight, "bias": bias, "scale": scale}, attrs, defaults)[0]


@npu_converter(
    "npu_transpose_quant_batchmatmul.default",
    lambda: [
        Sample(
            (_int8(3, 2, 16), _int8(2, 16, 8), 5),
            {"x1_scale": torch.rand(3), "x2_scale": torch.rand(8), "perm_x1": [1, 0, 2], "perm_x2": [0, 1, 2], "perm_y": [1, 0, 2]},
        )
    ],
)
def convert_transpose_quant_batchmatmul(
    x1: ge.Tensor,
    x2: ge.Tensor,
    dtype: int,
    *,
    bias: ge.Tensor | None = None,
    x1_scale: ge.Tensor | None = None,
    x2_scale: ge.Tensor | None = None,
    group_sizes: list[int] | None = None,
    perm_x1: list[int] | None = None,
    perm_x2: list[int] | None = None,
    perm_y: list[int] | None = None,
    batch_split_factor: int | None = 1,
    x1_dtype: int | None = None,
    x2_dtype: int | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_transpose_quant_batchmatmul(Tensor x1, Tensor x2, int dtype, *, Tensor? bias=None, Tensor? x1_scale=None, Tensor? x2_scale=None, int[]? group_sizes=None, int[]? perm_x1=None, int[]? perm_x2=None, int[]? perm_y=None, int? batch_split_factor=1, int? x1_dtype=None, int? x2_dtype=None) -> Tensor"""
    reason = _group_size_refusal(group_sizes)
    if reason is not None:
        refuse(reason, "custom/transpose_quant_batchmatmul.py")
    group_size = (group_sizes[0] << 32) + (group_sizes[1] << 16) + group_sizes[2] if group_sizes is not None else 0
    if x1_dtype is not None:
        x1 = viewed_as(x1, x1_dtype)
    if x2_dtype is not None:
        x2 = viewed_as(x2, x2_dtype)
    attrs = {
        "dtype": _type_number(dtype),
        "group_size": group_size,
        "perm_x1": list(perm_x1) if perm_x1 is not None else [1, 0, 2],
        "perm_x2": list(perm_x2) if perm_x2 is not None else [0, 1, 2],
        "perm_y": list(perm_y) if perm_y is not None else [1, 0, 2],
        "batch_split_factor": int(batch_split_factor or 1),
    }
    defaults = {"group_size": 0, "perm_x1": [1, 0, 2], "perm_x2": [0, 1, 2], "perm_y": [1, 0, 2], "batch_split_factor": 1}
    inputs = {"x1": x1, "x2": x2, "bias": bias, "x1_scale": x1_scale, "x2_scale": x2_scale}
    return ge.set_dtype(compact_op("TransposeQuantBatchMatMul", inputs, attrs, defaults)[0], npu_dtype(dtype))


@npu_converter(
    "npu_linear.default",
    lambda: [
        Sample((torch.randn(4, 16).half(), torch.randn(8, 16).half())),
        Sample((torch.randn(4, 16), torch.randn(8, 16), torch.randn(8))),
    ],
)
def convert_linear(input: ge.Tensor, weight: ge.Tensor, bias: ge.Tensor | None = None, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"""
    if DataType.DT_INT8 in (input.dtype, weight.dtype):
        refuse("RuntimeError: torch.ops.aten.npu_linear.default ge_converter is not support int8 dtype!", "custom/npu_linear.py")
    return ge.op1("MatMul", {"x1": input, "x2": weight, "bias": bias}, {"transpose_x1": False, "transpose_x2": True})


# -- arch35-only ------------------------------------------------------------------------------------
def _add_quant_matmul_samples() -> list[Sample]:
    return [Sample((torch.zeros(4, 8), _int8(4, 16), _int8(16, 8), torch.rand(8)))]


def convert_add_quant_matmul(y: ge.Tensor, x1: ge.Tensor, x2: ge.Tensor, x2_scale: ge.Tensor, **options: Any) -> ge.Tensor:
    """npu_add_quant_matmul(Tensor self, Tensor x1, Tensor x2, Tensor x2_scale, *, Tensor? x1_scale=None, int[]? group_sizes=None, int? x1_dtype=None, int? x2_dtype=None, int? x1_scale_dtype=None, int? x2_scale_dtype=None) -> Tensor

    TorchAir builds ``QuantMatmulInplaceAdd`` only on arch35 (Ascend 950) SoCs."""
    refuse("RuntimeError: This operator currently only supports Ascend910_95 chips.", "custom/quant_matmul_inplace_add.py:78")


npu_converter("npu_add_quant_matmul.default", _add_quant_matmul_samples)(convert_add_quant_matmul)


@npu_converter("npu_add_quant_matmul_.default", _add_quant_matmul_samples)
def convert_add_quant_matmul_(y: ge.Tensor, x1: ge.Tensor, x2: ge.Tensor, x2_scale: ge.Tensor, **options: Any) -> ge.Tensor:
    """npu_add_quant_matmul_(Tensor(a!) self, Tensor x1, Tensor x2, Tensor x2_scale, *, ...) -> Tensor(a!)"""
    refuse("RuntimeError: This operator currently only supports on Ascend 950PR/Ascend 950DT.", "custom/quant_matmul_inplace_add.py:134")


@npu_converter(
    "npu_fused_matmul.default", lambda: [Sample((torch.randn(4, 16).half(), torch.randn(16, 8).half()), {"fused_op_type": "relu"})]
)
def convert_fused_matmul(x: ge.Tensor, x2: ge.Tensor, **options: Any) -> ge.Tensor:
    """npu_fused_matmul(Tensor x, Tensor x2, *, Tensor? bias=None, Tensor? x3=None, str fused_op_type='') -> Tensor

    TorchAir's converter builds ``FusedMatMul`` only on arch35 SoCs and returns nothing
    before, which its conversion then rejects."""
    refuse("AssertionError: ge_outputs must be list or a tuple. (the converter returns None before arch35)", "custom/fused_matmul.py:53")
