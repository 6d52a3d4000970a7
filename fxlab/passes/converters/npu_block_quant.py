"""Converters of torch_npu's block and MX (microscaling) quantisation operators, making
the GE ops TorchAir makes.

From TorchAir's converters (``ge_converter/custom/`` of torch_npu 2.13.0):
``npu_dynamic_block_quant`` → ``DynamicBlockQuant``, ``npu_grouped_dynamic_block_quant`` →
``GroupedDynamicBlockQuant``, ``npu_dynamic_mx_quant`` → ``DynamicMxQuant``,
``npu_dynamic_block_mx_quant`` → ``DynamicBlockMxQuant``,
``npu_dynamic_mx_quant_with_dual_axis`` → ``DynamicMxQuantWithDualAxis``,
``npu_dynamic_dual_level_mx_quant`` → ``DynamicDualLevelMxQuant``,
``npu_grouped_dynamic_mx_quant`` → ``GroupedDynamicMxQuant``, ``npu_kronecker_quant`` →
``FlatQuant``, ``npu_rotate_quant`` → ``RotateQuant``, ``npu_anti_mx_quant`` →
``AntiMxQuant``; float4 results are repacked two to a byte and int4 ones eight to an
int32, as TorchAir does. Kernels: :mod:`fxlab.ir.kernels.npu_block_quant`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, DataType
from fxlab.ir.npu_dtypes import FLOAT4_X2
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op, npu_dtype, packed, refuse, widened
from fxlab.passes.converters.registry import Sample

E8M0 = DataType.DT_FLOAT8_E8M0


def _number(code: int) -> int:
    return TORCHAIR_DTYPE_NUMBER[npu_dtype(code)]


def _x(*shape: int) -> torch.Tensor:
    return torch.randn(*shape).half()


def _mx_packed(y: ge.Tensor, rank: int, dst_type: int) -> ge.Tensor:
    """An MX result typed as asked; a float4 one repacked two to a byte."""
    ge.set_dtype(y, npu_dtype(dst_type))
    return packed(y, rank, 2, DataType.DT_UINT8, cast_consts=True) if dst_type in FLOAT4_X2 else y


# -- block quantisation ----------------------------------------------------------------------------
@npu_converter(
    "npu_dynamic_block_quant.default",
    lambda: [
        Sample((_x(4, 256),), {"dst_type": 291}),
        Sample((_x(2, 4, 256),), {"dst_type": 24, "row_block_size": 2}),
        Sample((_x(4, 128),)),
    ],
)
def convert_dynamic_block_quant(
    x: ge.Tensor,
    *,
    min_scale: float = 0.0,
    round_mode: str = "rint",
    dst_type: int = 1,
    row_block_size: int = 1,
    col_block_size: int = 128,
    dst_type_max: float = 0.0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_dynamic_block_quant(Tensor x, *, float min_scale=0.0, str round_mode="rint", int dst_type=1, int row_block_size=1, int col_block_size=128, float dst_type_max=0.0) -> (Tensor y, Tensor scale)"""
    if dst_type >= 256:
        number = dst_type - 256
    elif dst_type in (23, 24):
        number = _number(dst_type)
    else:
        # TorchAir's converter maps only the float8 codes (its own table), so int8 fails.
        refuse(
            "RuntimeError: Unsupported dst_type, only support torch.float8_e5m2,torch.float8_e4m3fn,torch_npu.float8_e5m2,"
            "torch_npu.float8_e4m3fn,torch_npu.hifloat8.",
            "custom/npu_dynamic_block_quant.py:10",
        )
    attrs = {
        "min_scale": float(min_scale),
        "round_mode": round_mode,
        "dst_type": number,
        "row_block_size": int(row_block_size),
        "col_block_size": int(col_block_size),
        "dst_type_max": float(dst_type_max),
    }
    y, scale = ge.op("DynamicBlockQuant", {"x": x}, attrs, outputs=("y", "scale"))
    return [ge.set_dtype(y, npu_dtype(dst_type)), scale]


@npu_converter(
    "npu_grouped_dynamic_block_quant.default",
    lambda: [
        Sample((_x(6, 256), torch.tensor([2, 6]))),
        Sample((_x(6, 256), torch.tensor([4, 2])), {"group_list_type": 1, "dst_type": 292}),
    ],
)
def convert_grouped_dynamic_block_quant(
    x: ge.Tensor,
    group_list: ge.Tensor,
    *,
    min_scale: float = 0.0,
    round_mode: str = "rint",
    dst_type: int = 291,
    row_block_size: int = 1,
    col_block_size: int = 128,
    group_list_type: int = 0,
    dst_type_max: float = 0.0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_grouped_dynamic_block_quant(Tensor x, Tensor group_list, *, float min_scale=0.0, str round_mode="rint", int dst_type=291, int row_block_size=1, int col_block_size=128, int group_list_type=0, float dst_type_max=0.0) -> (Tensor, Tensor)"""
    attrs = {
        "min_scale": float(min_scale),
        "round_mode": round_mode,
        "dst_type": _number(dst_type),
        "row_block_size": int(row_block_size),
        "col_block_size": int(col_block_size),
        "group_list_type": int(group_list_type),
        "dst_type_max": float(dst_type_max),
    }
    y, scale = ge.op("GroupedDynamicBlockQuant", {"x": x, "group_list": group_list}, attrs, outputs=("y", "scale"))
    return [ge.set_dtype(y, npu_dtype(dst_type)), scale]


# -- MX quantisation -------------------------------------------------------------------------------
@npu_converter(
    "npu_dynamic_mx_quant.default",
    lambda: [Sample((_x(4, 64),)), Sample((_x(4, 64),), {"dst_type": 24}), Sample((_x(64, 4),), {"axis": 0, "dst_type": 23})],
)
def convert_dynamic_mx_quant(
    x: ge.Tensor,
    *,
    axis: int = -1,
    round_mode: str = "rint",
    dst_type: int = 296,
    block_size: int = 32,
    scale_alg: int | None = 0,
    dst_type_max: float = 0.0,
    max_low_bound: float = 0.0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_dynamic_mx_quant(Tensor input, *, int axis=-1, str round_mode="rint", int dst_type=296, int block_size=32, int? scale_alg=0, float dst_type_max=0.0, float max_low_bound=0.0) -> (Tensor, Tensor)"""
    attrs = {
        "axis": int(axis),
        "round_mode": round_mode,
        "dst_type": _number(dst_type),
        "blocksize": int(block_size),
        "scale_alg": int(scale_alg or 0),
        "dst_type_max": float(dst_type_max),
        "max_low_bound": float(max_low_bound),
    }
    y, mxscale = ge.op("DynamicMxQuant", {"x": x}, attrs, outputs=("y", "mxscale"))
    ge.set_dtype(mxscale, E8M0)
    return [_mx_packed(y, x.rank, dst_type), mxscale]


def _mx_attrs(round_mode: str, dst_type: int, scale_alg: int, dst_type_max: float) -> dict[str, Any]:
    return {"round_mode": round_mode, "dst_type": _number(dst_type), "scale_alg": int(scale_alg), "dst_type_max": float(dst_type_max)}


@npu_converter("npu_dynamic_block_mx_quant.default", lambda: [Sample((_x(64, 64),)), Sample((_x(64, 64),), {"dst_type": 292})])
def convert_dynamic_block_mx_quant(
    x: ge.Tensor, *, round_mode: str = "rint", dst_type: int = 296, scale_alg: int = 0, dst_type_max: float = 0.0, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_dynamic_block_mx_quant(Tensor input, *, str round_mode="rint", int dst_type=296, int scale_alg=0, float dst_type_max=0.0) -> (Tensor, Tensor, Tensor)"""
    y, scale1, scale2 = ge.op(
        "DynamicBlockMxQuant", {"x": x}, _mx_attrs(round_mode, dst_type, scale_alg, dst_type_max), outputs=("y", "scale1", "scale2")
    )
    ge.set_dtype(scale1, E8M0)
    ge.set_dtype(scale2, E8M0)
    return [_mx_packed(y, x.rank, dst_type), scale1, scale2]


@npu_converter("npu_dynamic_mx_quant_with_dual_axis.default", lambda: [Sample((_x(64, 64),)), Sample((_x(64, 64),), {"dst_type": 24})])
def convert_dynamic_mx_quant_with_dual_axis(
    x: ge.Tensor,
    *,
    round_mode: str = "rint",
    dst_type: int = 296,
    scale_alg: int = 0,
    dst_type_max: float | None = 0.0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_dynamic_mx_quant_with_dual_axis(Tensor input, *, str round_mode="rint", int dst_type=296, int scale_alg=0, float? dst_type_max=0.0) -> (Tensor, Tensor, Tensor, Tensor)"""
    attrs = _mx_attrs(round_mode, dst_type, scale_alg, dst_type_max or 0.0)
    y1, scale1, y2, scale2 = ge.op("DynamicMxQuantWithDualAxis", {"x": x}, attrs, outputs=("y1", "mxscale1", "y2", "mxscale2"))
    for y in (y1, y2):
        ge.set_dtype(y, npu_dtype(dst_type))
    ge.set_dtype(scale1, E8M0)
    ge.set_dtype(scale2, E8M0)
    if dst_type not in FLOAT4_X2:
        return [y1, scale1, y2, scale2]
    packed1, packed2 = _dual_axis_packed(y1, y2, x.rank)
    return [packed1, scale1, packed2, scale2]


def _dual_axis_packed(y1: ge.Tensor, y2: ge.Tensor, rank: int) -> list[ge.Tensor]:
    """TorchAir's repacking of both float4 results, interleaved as its converter builds
    them: one divisor, both shapes, both divisions, both concatenations, then each."""
    divisor = ge.cast(ge.const([1] * (rank - 1) + [2]), DataType.DT_INT32)
    shapes = [ge.op1("Shape", {"x": y}, {"dtype": 3}) for y in (y1, y2)]
    halves = [ge.op1("Div", {"x1": shape, "x2": divisor}) for shape in shapes]
    splits = [
        ge.op1("ConcatV2", {"x0": half, "x1": ge.cast(ge.const([2]), DataType.DT_INT32), "concat_dim": ge.const(0)}, {"N": 2})
        for half in halves
    ]
    casts = [
        ge.op1("Bitcast", {"x": ge.op1("Reshape", {"x": y, "shape": split}, {"axis": 0, "num_axes": -1})}, {"type": DataType.DT_UINT8})
        for y, split in zip((y1, y2), splits)
    ]
    return [ge.op1("Reshape", {"x": cast, "shape": half}, {"axis": 0, "num_axes": -1}) for cast, half in zip(casts, halves)]


@npu_converter("npu_dynamic_dual_level_mx_quant.default", lambda: [Sample((_x(4, 512),)), Sample((_x(4, 512),), {"smooth_scale": _x(512)})])
def convert_dynamic_dual_level_mx_quant(
    input: ge.Tensor, *, smooth_scale: ge.Tensor | None = None, round_mode: str = "rint", meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_dynamic_dual_level_mx_quant(Tensor input, *, Tensor? smooth_scale=None, str round_mode="rint") -> (Tensor, Tensor, Tensor)"""
    attrs = {"round_mode": round_mode, "level0_block_size": 512, "level1_block_size": 32}
    y, level0, level1 = ge.op(
        "DynamicDualLevelMxQuant", {"x": input, "smooth_scale": smooth_scale}, attrs, outputs=("y", "level0_scale", "level1_scale")
    )
    ge.set_dtype(level0, DataType.DT_FLOAT)
    ge.set_dtype(level1, E8M0)
    return [_mx_packed(y, input.rank, 296), level0, level1]


_GROUPED_MX_TYPES = (DataType.DT_FLOAT8_E4M3FN, DataType.DT_FLOAT8_E5M2, DataType.DT_FLOAT4_E2M1, DataType.DT_FLOAT4_E1M2)


def _grouped_mx_refusal(x: ge.Tensor, group_index: ge.Tensor, dst_type: int, round_mode: str, blocksize: int, scale_alg: int) -> str | None:
    if npu_dtype(dst_type) not in _GROUPED_MX_TYPES:
        return f"RuntimeError: Parameter dtype only supports torch.float8_e5m2, torch.float8_e4m3fn, torch_npu.float4_e2m1fn_x2, torch_npu.float4_e1m2fn_x2, got {dst_type}"
    if x.rank != 2:
        return f"RuntimeError: Input x must be 2-dimensional, got {x.rank}"
    if group_index.rank != 1:
        return f"RuntimeError: Input group_index must be 1-dimensional, got {group_index.rank}"
    if round_mode not in ("rint", "round", "floor"):
        return f"ValueError: Parameter round_mode must be 'rint'/'round'/'floor', got {round_mode}"
    if blocksize != 32:
        return f"ValueError: Parameter blocksize must be 32, got {blocksize}"
    if scale_alg not in (0, 1, 2):
        return f"ValueError: Parameter scale_alg must be 0, 1 or 2, got {scale_alg}"
    return None


@npu_converter(
    "npu_grouped_dynamic_mx_quant.default",
    lambda: [
        Sample((_x(128, 16), torch.tensor([64, 128], dtype=torch.int32))),
        Sample((_x(128, 16), torch.tensor([64, 128], dtype=torch.int32)), {"dst_type": 296}),
    ],
)
def convert_grouped_dynamic_mx_quant(
    x: ge.Tensor,
    group_index: ge.Tensor,
    *,
    round_mode: str = "rint",
    dst_type: int = 23,
    blocksize: int = 32,
    scale_alg: int | None = 0,
    dst_type_max: float | None = 0.0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_grouped_dynamic_mx_quant(Tensor x, Tensor group_index, *, str round_mode="rint", int dst_type=23, int blocksize=32, int? scale_alg=0, float? dst_type_max=0.0) -> (Tensor, Tensor)"""
    reason = _grouped_mx_refusal(x, group_index, dst_type, round_mode, blocksize, scale_alg or 0)
    if reason is not None:
        refuse(reason, "custom/npu_grouped_dynamic_mx_quant.py")
    attrs = {
        "round_mode": round_mode,
        "dst_type": _number(dst_type),
        "blocksize": int(blocksize),
        "scale_alg": int(scale_alg or 0),
        "dst_type_max": float(dst_type_max or 0.0),
    }
    defaults = {"round_mode": "rint", "dst_type": 35, "blocksize": 32, "scale_alg": 0, "dst_type_max": 0.0}
    y, mxscale = compact_op("GroupedDynamicMxQuant", {"x": x, "group_index": group_index}, attrs, defaults, outputs=("y", "mxscale"))
    ge.set_dtype(mxscale, E8M0)
    return [packed(y, x.rank, 2, DataType.DT_UINT8, cast_consts=True) if dst_type in FLOAT4_X2 else y, mxscale]


# -- Kronecker / rotation quantisation -------------------------------------------------------------
def _kronecker_samples() -> list[Sample]:
    x = _x(4, 4, 8)
    return [
        Sample((x, torch.randn(4, 4).half(), torch.randn(8, 8).half())),
        Sample((x, torch.randn(4, 4).half(), torch.randn(8, 8).half(), 0.9)),
    ]


@npu_converter("npu_kronecker_quant.default", _kronecker_samples)
def convert_kronecker_quant(
    x: ge.Tensor,
    kronecker_p1: ge.Tensor,
    kronecker_p2: ge.Tensor,
    clip_ratio: float | None = 1.0,
    dst_dtype: Any = torch.int32,
    dst_type_max: float | None = 0.0,
    *,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_kronecker_quant(Tensor x, Tensor kronecker_p1, Tensor kronecker_p2, float? clip_ratio=None, int? dst_dtype=None, float? dst_type_max=None) -> (Tensor out, Tensor quant_scale)"""
    if dst_dtype is not None and dst_dtype not in (torch.int32, 3, 296, 297):
        refuse(
            f"ValueError: dst_dtype should be int32 or float4_e2m1otherwise it should be None, but got {dst_dtype}", "custom/flat_quant.py"
        )
    if dst_dtype == 296:
        raise NotImplementedError(
            "npu_kronecker_quant to float4: the built-in conversion does not build TorchAir's graph for it; convert with --converter torchair"
        )
    attrs = {"clip_ratio": 1.0 if clip_ratio is None else float(clip_ratio), "dst_dtype": 3, "dst_type_max": 0.0}
    y, scale = ge.op(
        "FlatQuant", {"x": x, "kronecker_p1": kronecker_p1, "kronecker_p2": kronecker_p2}, attrs, outputs=("out", "quant_scale")
    )
    return [packed(y, x.rank, 8, DataType.DT_INT32, shape_first=True), scale]


@npu_converter(
    "npu_rotate_quant.default",
    lambda: [
        Sample((_x(4, 16), torch.randn(16, 16).half()), {"dst_dtype": 1}),
        Sample((_x(4, 16), torch.randn(16, 16).half()), {"dst_dtype": 16}),
    ],
)
def convert_rotate_quant(
    x: ge.Tensor,
    rotation: ge.Tensor,
    *,
    alpha: ge.Tensor | None = None,
    dst_dtype: int | None = 0,
    axis: int | None = -1,
    round_mode: str | None = "rint",
    scale_alg: int | None = 0,
    dst_type_max: float | None = 0.0,
    transpose_y: bool | None = False,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_rotate_quant(Tensor x, Tensor rotation, *, Tensor? alpha=None, int? dst_dtype=None, int? axis=-1, str? round_mode="rint", int? scale_alg=0, float? dst_type_max=0.0, bool? transpose_y=False) -> (Tensor, Tensor)"""
    code = 0 if dst_dtype is None else int(dst_dtype)
    attrs = {
        "y_dtype": _number(code),
        "axis": -1 if axis is None else int(axis),
        "round_mode": round_mode or "rint",
        "scale_alg": int(scale_alg or 0),
        "dst_type_max": float(dst_type_max or 0.0),
        "transpose_y": bool(transpose_y),
    }
    defaults = {"y_dtype": 0, "axis": -1, "round_mode": "rint", "scale_alg": 0, "dst_type_max": 0.0, "transpose_y": False}
    y, scale = compact_op("RotateQuant", {"x": x, "rotation": rotation, "alpha": alpha}, attrs, defaults, outputs=("y", "scale"))
    ge.set_dtype(y, npu_dtype(code))
    return [packed(y, x.rank, 8, DataType.DT_INT32) if code == 16 else y, scale]


# -- MX dequantisation -----------------------------------------------------------------------------
def _anti_mx_samples() -> list[Sample]:
    x = (torch.randn(4, 64) * 8).to(torch.float8_e4m3fn)
    scale = torch.randint(120, 130, (4, 1, 2), dtype=torch.uint8)
    return [Sample((x, scale)), Sample((x, scale), {"dst_type": 5})]


_ANTI_MX_OUTPUTS = (DataType.DT_FLOAT16, DataType.DT_FLOAT, DataType.DT_BF16)


@npu_converter("npu_anti_mx_quant.default", _anti_mx_samples)
def convert_anti_mx_quant(
    x: ge.Tensor,
    mxscale: ge.Tensor,
    *,
    axis: int | None = -1,
    dst_type: int | None = 15,
    src_type: int | None = 292,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_anti_mx_quant(Tensor x, Tensor mxscale, *, int? axis=-1, int? dst_type=15, int? src_type=292) -> Tensor"""
    where = "custom/npu_anti_mx_quant.py"
    target, source = npu_dtype(15 if dst_type is None else dst_type), npu_dtype(292 if src_type is None else src_type)
    if target not in _ANTI_MX_OUTPUTS:
        refuse(f"RuntimeError: Parameter dst_type only supports torch.float16, torch.float32, torch.bfloat16, got {dst_type}", where)
    if x.dtype == DataType.DT_UINT8 and src_type not in FLOAT4_X2:
        refuse("RuntimeError: torch.ops.npu.npu_anti_mx_quant.default: when x is uint8, src_type must be float4", where)
    if x.dtype != DataType.DT_UINT8 and x.dtype != source:
        refuse("RuntimeError: src_type should be match to x dtype", where)
    if x.dtype == DataType.DT_UINT8:
        x = widened(x, 2, source)
    y = ge.op1(
        "AntiMxQuant", {"x": x, "mxscale": mxscale}, {"axis": -1 if axis is None else int(axis), "dst_type": TORCHAIR_DTYPE_NUMBER[target]}
    )
    return ge.set_dtype(y, target)
