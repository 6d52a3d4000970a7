"""Converters of torch_npu's grouped matmuls (the experts of an MoE layer), making the GE
ops TorchAir makes on an Atlas A2/A3 machine.

From TorchAir's converters (``ge_converter/custom/`` of torch_npu 2.13.0):
``npu_grouped_matmul`` (``.default`` and ``.List``) → ``GroupedMatmul``, every list
input TorchAir's GE op needs filled with an empty tensor (``Fill`` of a ``Cast`` zero) of
the type the quantisation mode asks for, int64 scales cast to uint64, int32-packed int4
weights bitcast; ``npu_grouped_matmul_finalize_routing`` → ``GroupedMatmulFinalizeRouting``;
``npu_grouped_matmul_swiglu_quant_v2`` → ``GroupedMatmulSwigluQuantV2``;
``npu_quant_grouped_matmul_dequant`` → ``QuantGroupedMatmulDequant``. TorchAir refuses
``npu_add_quant_gmm(_)`` before arch35 (Ascend 950). Kernels:
:mod:`fxlab.ir.kernels.npu_matmul`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, DataType
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import bitcast, compact_op, npu_dtype, refuse, viewed_as
from fxlab.passes.converters.registry import Sample

INT4_PER_INT32 = 8
NOT_BUILT_IN = (
    "{op} with float8, hifloat8 or float4 inputs (x_dtype, weight_dtype): the built-in conversion does not build TorchAir's "
    "graph for these modes; convert with --converter torchair"
)
# torch_npu's output dtype codes -> GroupedMatmul's dtype attr (TorchAir's convert_ydtype_in_a8).
_A8_OUTPUT_TYPES = {5: 0, 15: 1, 3: 2}


def _empty_list(dtype: DataType) -> list[ge.Tensor]:
    """TorchAir's stand-in for an absent tensor list: ``Fill([0], Cast(0.0))``."""
    zero = ge.cast(ge.const(0.0), dtype)
    return [ge.op1("Fill", {"dims": ge.const([0]), "value": zero})]


def _y_dtype(x: ge.Tensor, output_dtype: int | None) -> int:
    """GroupedMatmul's ``dtype`` attr on SoCs before arch35: int8 (A8W8) and int32 (A4W4)
    inputs map the requested output type, others keep -1."""
    if output_dtype is None or x.dtype not in (DataType.DT_INT8, DataType.DT_INT32):
        return -1
    where = "custom/grouped_matmul.py"
    if x.dtype == DataType.DT_INT8 and output_dtype == 6:
        refuse("ValueError: output_dtype does not support float32 in versions prior to A5.", where)
    if x.dtype == DataType.DT_INT8 and output_dtype == 1:
        refuse("ValueError: output_dtype not support int8 yet for graph mode", where)
    allowed = _A8_OUTPUT_TYPES if x.dtype == DataType.DT_INT8 else {5: 0, 15: 1}
    if output_dtype not in allowed:
        refuse(f"ValueError: output_dtype should be float16, bfloat16 or int32, but got {output_dtype}", where)
    return allowed[output_dtype]


def _filled(
    x: list[ge.Tensor],
    weight: list[ge.Tensor],
    bias: list[ge.Tensor] | None,
    scale: list[ge.Tensor] | None,
    offset: list[ge.Tensor] | None,
    antiquant: tuple[list[ge.Tensor] | None, list[ge.Tensor] | None],
) -> tuple[list[ge.Tensor], ...]:
    """The list inputs as TorchAir fills them (in its order: bias, scale, offset, antiquant
    scale, antiquant offset) for the non-float8 modes of SoCs before arch35."""
    x_type, w_type = x[0].dtype, weight[0].dtype
    if not bias:
        bias_type = DataType.DT_FLOAT if x_type == DataType.DT_BF16 else x_type
        if x_type == DataType.DT_INT8:
            bias_type = DataType.DT_FLOAT if w_type == DataType.DT_INT32 else DataType.DT_INT32
        bias = _empty_list(bias_type)
    if scale and scale[0].dtype == DataType.DT_INT64:
        scale = [ge.cast(s, DataType.DT_UINT64) for s in scale]
    scale = scale or _empty_list(DataType.DT_UINT64)
    offset = offset or _empty_list(DataType.DT_FLOAT)
    a16 = x_type in (DataType.DT_FLOAT16, DataType.DT_BF16) and w_type in (DataType.DT_INT8, DataType.DT_FLOAT, DataType.DT_INT32)
    antiquant_type = x_type if a16 else DataType.DT_FLOAT16
    antiquant_scale = antiquant[0] or _empty_list(antiquant_type)
    antiquant_offset = antiquant[1] or _empty_list(antiquant_type)
    return bias, scale, offset, antiquant_scale, antiquant_offset


def _int4_weights(x: list[ge.Tensor], weight: list[ge.Tensor]) -> list[ge.Tensor]:
    """int32-packed int4 weights as int4 (CANN 8.5: a shape-keeping ``Bitcast``); with
    int4 activations too (A4W4) the weights are only bitcast, the transposition is the
    op's own; with float activations a transposed weight is transposed around it."""
    if weight[0].dtype != DataType.DT_INT32:
        return weight
    if x[0].dtype == DataType.DT_INT32:
        return [bitcast(w, DataType.DT_INT4, keep_dim=True) for w in weight]
    out = []
    for w in weight:
        transposed = x[0].shape[-1] == w.shape[-2] * INT4_PER_INT32
        perm = list(range(w.rank))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        if transposed:
            w = ge.op1("Transpose", {"x": w, "perm": ge.const(perm)})
        w = bitcast(w, DataType.DT_INT4, keep_dim=True)
        out.append(ge.op1("Transpose", {"x": w, "perm": ge.const(perm)}) if transposed else w)
    return out


def _gmm_samples() -> list[Sample]:
    x, w3 = torch.randn(6, 8).half(), torch.randn(3, 8, 4).half()
    group_list = torch.tensor([2, 3, 6])
    xs, ws = [torch.randn(2, 8).half(), torch.randn(3, 8).half()], [torch.randn(8, 4).half(), torch.randn(8, 5).half()]
    q_x, q_w = torch.randint(-127, 127, (6, 8), dtype=torch.int8), torch.randint(-127, 127, (3, 8, 4), dtype=torch.int8)
    quant = {"scale": [torch.rand(3, 4).bfloat16()], "per_token_scale": [torch.rand(6)], "output_dtype": 15}
    return [
        Sample(([x], [w3]), {"group_list": group_list, "split_item": 2, "group_type": 0, "group_list_type": 0}),
        Sample(
            ([x], [w3]),
            {
                "bias": [torch.randn(3, 4).half()],
                "group_list": torch.tensor([2, 1, 3]),
                "split_item": 3,
                "group_type": 0,
                "group_list_type": 1,
            },
        ),
        Sample((xs, ws), {"bias": [torch.randn(4).half(), torch.randn(5).half()], "group_type": -1}),
        Sample(([q_x], [q_w]), {**quant, "group_list": group_list, "split_item": 2, "group_type": 0}),
        Sample(([q_x], [q_w]), {**quant, "output_dtype": 6, "group_list": group_list, "split_item": 2, "group_type": 0}),
        Sample(
            ([torch.randn(4, 6).half()], [torch.randn(6, 8).half()]), {"group_list": torch.tensor([2, 6]), "split_item": 3, "group_type": 2}
        ),
        Sample(
            ([x], [torch.randint(-127, 127, (3, 8, 4), dtype=torch.int8)]),
            {
                "antiquant_scale": [torch.rand(3, 4).half()],
                "antiquant_offset": [torch.randn(3, 4).half()],
                "group_list": group_list,
                "split_item": 3,
                "group_type": 0,
            },
        ),
    ]


def _gmm_list_samples() -> list[Sample]:
    x, w3 = torch.randn(6, 8).half(), torch.randn(3, 8, 4).half()
    return [
        Sample(([x], [w3]), {"group_list": [2, 3, 6], "split_item": 2, "group_type": 0}),
        Sample(([x], [w3]), {"group_list": [1, 4, 6], "split_item": 3, "group_type": 0, "group_list_type": 0}),
    ]


def convert_grouped_matmul(
    x: list[ge.Tensor],
    weight: list[ge.Tensor],
    *,
    bias: list[ge.Tensor] | None = None,
    scale: list[ge.Tensor] | None = None,
    offset: list[ge.Tensor] | None = None,
    antiquant_scale: list[ge.Tensor] | None = None,
    antiquant_offset: list[ge.Tensor] | None = None,
    per_token_scale: list[ge.Tensor] | None = None,
    group_list: ge.Tensor | list[int] | None = None,
    activation_input: list[ge.Tensor] | None = None,
    activation_quant_scale: list[ge.Tensor] | None = None,
    activation_quant_offset: list[ge.Tensor] | None = None,
    split_item: int | None = 0,
    group_type: int | None = -1,
    group_list_type: int | None = 0,
    act_type: int | None = 0,
    tuning_config: list[int] | None = None,
    output_dtype: int | None = None,
    x_dtype: int | None = None,
    weight_dtype: int | None = None,
    scale_dtype: int | None = None,
    per_token_scale_dtype: int | None = None,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_grouped_matmul(Tensor[] x, Tensor[] weight, *, Tensor[]? bias=None, Tensor[]? scale=None, Tensor[]? offset=None, Tensor[]? antiquant_scale=None, Tensor[]? antiquant_offset=None, Tensor[]? per_token_scale=None, Tensor? group_list=None, ..., int? split_item=0, int? group_type=None, int? group_list_type=0, int? act_type=0, int[]? tuning_config=None, int? output_dtype=None, int? x_dtype=None, int? weight_dtype=None, int? scale_dtype=None, int? per_token_scale_dtype=None) -> Tensor[]"""
    if x[0].dtype in (DataType.DT_FLOAT8_E4M3FN, DataType.DT_FLOAT8_E5M2) or x_dtype is not None or weight_dtype is not None:
        raise NotImplementedError(NOT_BUILT_IN.format(op="npu_grouped_matmul"))
    bias, scale, offset, antiquant_scale, antiquant_offset = _filled(x, weight, bias, scale, offset, (antiquant_scale, antiquant_offset))
    y_dtype = _y_dtype(x[0], output_dtype)
    token_scale = per_token_scale[0] if per_token_scale else None
    if group_list is not None and not isinstance(group_list, ge.Tensor):
        group_list = ge.const([int(v) for v in group_list], DataType.DT_INT64)
    weights = _int4_weights(x, weight)
    if scale_dtype is not None:
        scale = [viewed_as(scale[0], scale_dtype), *scale[1:]]
    if per_token_scale_dtype is not None and token_scale is not None:
        token_scale = viewed_as(token_scale, per_token_scale_dtype)
    inputs: dict[str, ge.Tensor | None] = {}
    for name, tensors in (("x", x), ("weight", weights), ("bias", bias), ("scale", scale), ("offset", offset)):
        inputs.update({f"{name}{i}": t for i, t in enumerate(tensors)})
    for name, tensors in (("antiquant_scale", antiquant_scale), ("antiquant_offset", antiquant_offset)):
        inputs.update({f"{name}{i}": t for i, t in enumerate(tensors)})
    inputs.update(group_list=group_list, per_token_scale=token_scale)
    attrs = {
        "split_item": int(split_item or 0),
        "dtype": y_dtype,
        "transpose_weight": False,
        "transpose_x": False,
        "group_type": -1 if group_type is None else int(group_type),
        "group_list_type": int(group_list_type or 0),
        "act_type": int(act_type or 0),
        "tuning_config": [int(v) for v in tuning_config or [0]],
    }
    outputs = _gmm_output_count(x, group_list, int(split_item or 0))
    return ge.op("GroupedMatmul", inputs, attrs, outputs=[f"y{i}" for i in range(outputs)])


def _gmm_output_count(x: list[ge.Tensor], group_list: ge.Tensor | None, split_item: int) -> int:
    """TorchAir's count of GroupedMatmul outputs: one per group (split_item 0/1), else one."""
    if split_item in (0, 1):
        return group_list.shape[0] if group_list is not None else len(x)
    return 1


npu_converter("npu_grouped_matmul.default", _gmm_samples)(convert_grouped_matmul)
npu_converter("npu_grouped_matmul.List", _gmm_list_samples)(convert_grouped_matmul)


# -- grouped matmul + finalize routing -----------------------------------------------------------
def _gmm_finalize_samples() -> list[Sample]:
    rows, hidden, out, experts, k = 8, 16, 8, 2, 2
    x = torch.randint(-127, 127, (rows, hidden), dtype=torch.int8)
    w = torch.randint(-127, 127, (experts, hidden, out), dtype=torch.int8)
    common = {
        "scale": torch.rand(experts, out),
        "pertoken_scale": torch.rand(rows),
        "logit": torch.rand(rows),
        "row_index": torch.randperm(rows).to(torch.int64) // k,
    }
    return [
        Sample((x, w, torch.tensor([3, 5])), {**common, "output_bs": rows // k}),
        Sample(
            (x, w, torch.tensor([3, 5])),
            {**common, "shared_input": torch.randn(rows // k, out).bfloat16(), "shared_input_weight": 0.5, "output_bs": rows // k},
        ),
    ]


@npu_converter("npu_grouped_matmul_finalize_routing.default", _gmm_finalize_samples)
def convert_grouped_matmul_finalize_routing(
    x: ge.Tensor,
    w: ge.Tensor,
    group_list: ge.Tensor,
    *,
    scale: ge.Tensor | None = None,
    bias: ge.Tensor | None = None,
    offset: ge.Tensor | None = None,
    pertoken_scale: ge.Tensor | None = None,
    shared_input: ge.Tensor | None = None,
    logit: ge.Tensor | None = None,
    row_index: ge.Tensor | None = None,
    dtype: torch.dtype | None = None,
    shared_input_weight: float = 1.0,
    shared_input_offset: int = 0,
    output_bs: int = 0,
    group_list_type: int = 1,
    tuning_config: list[int] | None = None,
    x_dtype: int | None = None,
    w_dtype: int | None = None,
    scale_dtype: int | None = None,
    pertoken_scale_dtype: int | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_grouped_matmul_finalize_routing(Tensor x, Tensor w, Tensor group_list, *, Tensor? scale=None, Tensor? bias=None, Tensor? offset=None, Tensor? pertoken_scale=None, Tensor? shared_input=None, Tensor? logit=None, Tensor? row_index=None, ScalarType? dtype=None, float? shared_input_weight=1.0, int? shared_input_offset=0, int? output_bs=0, int? group_list_type=1, int[]? tuning_config=None, int? x_dtype=None, int? w_dtype=None, int? scale_dtype=None, int? pertoken_scale_dtype=None) -> Tensor"""
    if dtype not in (None, torch.float32):
        refuse(f"RuntimeError: Not supported output dtype is {dtype}", "custom/grouped_matmul_finalize_routing.py")
    if x_dtype is not None or w_dtype is not None:
        raise NotImplementedError(NOT_BUILT_IN.format(op="npu_grouped_matmul_finalize_routing"))
    new_w = bitcast(w, DataType.DT_INT4, keep_dim=True) if w.dtype == DataType.DT_INT32 else w
    if scale_dtype is not None and scale is not None:
        scale = viewed_as(scale, scale_dtype)
    if pertoken_scale_dtype is not None and pertoken_scale is not None:
        pertoken_scale = viewed_as(pertoken_scale, pertoken_scale_dtype)
    inputs = {
        "x": x,
        "w": new_w,
        "scale": scale,
        "bias": bias,
        "pertoken_scale": pertoken_scale,
        "group_list": group_list,
        "shared_input": shared_input,
        "logit": logit,
        "row_index": row_index,
        "offset": offset,
    }
    attrs = {
        "dtype": 0,
        "shared_input_weight": float(shared_input_weight),
        "shared_input_offset": int(shared_input_offset),
        "transpose_x": False,
        "transpose_w": False,
        "output_bs": int(output_bs) if output_bs else x.shape[0],
        "group_list_type": int(group_list_type),
        "tuning_config": [int(v) for v in tuning_config or [0]],
    }
    defaults = {
        "dtype": 0,
        "shared_input_weight": 1.0,
        "shared_input_offset": 0,
        "transpose_x": False,
        "transpose_w": False,
        "output_bs": 0,
        "group_list_type": 1,
        "tuning_config": [],
    }
    return compact_op("GroupedMatmulFinalizeRouting", inputs, attrs, defaults)[0]


# -- grouped matmul + SwiGLU + quantisation ------------------------------------------------------
def _gmm_swiglu_samples() -> list[Sample]:
    rows, hidden, inter, experts = 6, 16, 8, 2
    x = torch.randint(-127, 127, (rows, hidden), dtype=torch.int8)
    weight = [torch.randint(-127, 127, (experts, hidden, 2 * inter), dtype=torch.int8)]
    weight_scale = [torch.rand(experts, 2 * inter) * 0.01]
    return [
        Sample((x, weight, weight_scale, torch.rand(rows) * 0.01, torch.tensor([2, 6]))),
        Sample(
            (x, weight, weight_scale, torch.rand(rows) * 0.01, torch.tensor([2, 4])),
            {"group_list_type": 1, "smooth_scale": torch.rand(experts, inter) + 0.5},
        ),
    ]


@npu_converter("npu_grouped_matmul_swiglu_quant_v2.default", _gmm_swiglu_samples)
def convert_grouped_matmul_swiglu_quant_v2(
    x: ge.Tensor,
    weight: list[ge.Tensor],
    weight_scale: list[ge.Tensor],
    x_scale: ge.Tensor,
    group_list: ge.Tensor,
    *,
    smooth_scale: ge.Tensor | None = None,
    weight_assist_matrix: list[ge.Tensor] | None = None,
    bias: ge.Tensor | None = None,
    dequant_mode: int | None = 0,
    dequant_dtype: int | None = 0,
    quant_mode: int | None = 0,
    quant_dtype: int | None = 1,
    group_list_type: int | None = 0,
    tuning_config: list[int] | None = None,
    x_dtype: int | None = None,
    weight_dtype: int | None = None,
    weight_scale_dtype: int | None = None,
    x_scale_dtype: int | None = None,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_grouped_matmul_swiglu_quant_v2(Tensor x, Tensor[] weight, Tensor[] weight_scale, Tensor x_scale, Tensor group_list, *, Tensor? smooth_scale=None, Tensor[]? weight_assist_matrix=None, Tensor? bias=None, int? dequant_mode=0, int? dequant_dtype=6, int? quant_mode=0, int? quant_dtype=1, int? group_list_type=0, int[]? tuning_config=None, int? x_dtype=None, int? weight_dtype=None, int? weight_scale_dtype=None, int? x_scale_dtype=None) -> (Tensor, Tensor)"""
    if x_dtype is not None or weight_dtype is not None:
        raise NotImplementedError(NOT_BUILT_IN.format(op="npu_grouped_matmul_swiglu_quant_v2"))
    assist = weight_assist_matrix if weight_assist_matrix is not None else _empty_list(DataType.DT_FLOAT)
    weight_scale = list(weight_scale)
    if weight_scale_dtype is not None:
        weight_scale[0] = viewed_as(weight_scale[0], weight_scale_dtype)
    if x_scale_dtype is not None:
        x_scale = viewed_as(x_scale, x_scale_dtype)
    inputs: dict[str, ge.Tensor | None] = {"x": x, "x_scale": x_scale, "group_list": group_list}
    for name, tensors in (("weight", weight), ("weight_scale", weight_scale), ("weight_assist_matrix", assist)):
        inputs.update({f"{name}{i}": t for i, t in enumerate(tensors)})
    inputs.update(bias=bias, smooth_scale=smooth_scale)
    attrs = {
        "dequant_mode": int(dequant_mode or 0),
        "dequant_dtype": _type_number(dequant_dtype or 0),
        "quant_mode": int(quant_mode or 0),
        "quant_dtype": _type_number(1 if quant_dtype is None else quant_dtype),
        "transpose_weight": False,
        "group_list_type": int(group_list_type or 0),
        "tuning_config": [int(v) for v in tuning_config or [0]],
    }
    defaults = {
        "dequant_mode": 0,
        "dequant_dtype": 0,
        "quant_mode": 0,
        "quant_dtype": 1,
        "transpose_weight": False,
        "group_list_type": 0,
        "tuning_config": [0],
    }
    y, y_scale = compact_op("GroupedMatmulSwigluQuantV2", inputs, attrs, defaults, outputs=("y", "y_scale"))
    ge.set_dtype(y, npu_dtype(1 if quant_dtype is None else quant_dtype))
    return [y, y_scale]


def _type_number(code: int) -> int:
    """TorchAir's GE type number of a torch_npu dtype code (``torch_dtype_value_to_ge_type``)."""
    return TORCHAIR_DTYPE_NUMBER[npu_dtype(code)]


# -- quantise + grouped matmul + dequantise ------------------------------------------------------
def _quant_gmm_dequant_samples() -> list[Sample]:
    x = torch.randn(6, 16).half()
    weight = torch.randint(-127, 127, (2, 8, 16), dtype=torch.int8)
    return [
        Sample((x, weight, torch.rand(2, 8) * 0.01, torch.tensor([2, 6]))),
        Sample((x, weight, torch.rand(2, 8) * 0.01, torch.tensor([3, 6])), {"smooth_scale": (torch.rand(16) + 0.5).half()}),
    ]


@npu_converter("npu_quant_grouped_matmul_dequant.default", _quant_gmm_dequant_samples)
def convert_quant_grouped_matmul_dequant(
    x: ge.Tensor,
    quantized_weight: ge.Tensor,
    weight_scale: ge.Tensor,
    group_list: ge.Tensor,
    *,
    bias: ge.Tensor | None = None,
    x_scale: ge.Tensor | None = None,
    x_offset: ge.Tensor | None = None,
    smooth_scale: ge.Tensor | None = None,
    quant_mode: str | None = "pertoken",
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_quant_grouped_matmul_dequant(Tensor x, Tensor quantized_weight, Tensor weight_scale, Tensor group_list, *, Tensor? bias=None, Tensor? x_scale=None, Tensor? x_offset=None, Tensor? smooth_scale=None, str? quant_mode='pertoken') -> Tensor"""
    inputs = {
        "x": x,
        "quantized_weight": quantized_weight,
        "weight_scale": weight_scale,
        "group_list": group_list,
        "bias": bias,
        "x_scale": x_scale,
        "x_offset": x_offset,
        "smooth_scale": smooth_scale,
    }
    attrs = {"x_quant_mode": quant_mode, "transpose_weight": True}
    return compact_op("QuantGroupedMatmulDequant", inputs, attrs, {"x_quant_mode": "pertoken", "transpose_weight": True})[0]


# -- arch35-only ------------------------------------------------------------------------------------
def _add_quant_gmm_samples() -> list[Sample]:
    y = torch.zeros(2, 8, 4)
    return [
        Sample(
            (
                y,
                torch.randint(-127, 127, (16, 8), dtype=torch.int8),
                torch.randint(-127, 127, (16, 4), dtype=torch.int8),
                torch.rand(2, 4),
                torch.tensor([8, 16]),
            )
        )
    ]


def convert_add_quant_gmm(
    y: ge.Tensor, x1: ge.Tensor, x2: ge.Tensor, x2_scale: ge.Tensor, group_list: ge.Tensor, **options: Any
) -> ge.Tensor:
    """npu_add_quant_gmm(Tensor self, Tensor x1, Tensor x2, Tensor x2_scale, Tensor group_list, *, Tensor? x1_scale=None, int? group_list_type=0, int[]? group_sizes=None, int? x1_dtype=None, int? x2_dtype=None, int? x1_scale_dtype=None, int? x2_scale_dtype=None) -> Tensor

    TorchAir builds ``QuantGroupedMatmulInplaceAdd`` only on arch35 (Ascend 950) SoCs."""
    refuse("RuntimeError: This operator currently only supports Ascend950 chips.", "custom/quant_grouped_matmul_inplace_add.py")


npu_converter("npu_add_quant_gmm.default", _add_quant_gmm_samples)(convert_add_quant_gmm)
npu_converter("npu_add_quant_gmm_.default", _add_quant_gmm_samples)(convert_add_quant_gmm)
