"""Converters that sample or search: ``grid_sampler_2d``/``_3d`` (and the 2-D backward)
→ ``GridSampler2D``/``GridSampler3D``/``GridSampler2DGrad`` (float16 computed in float32
and cast back, as TorchAir does), ``linspace`` → ``LinSpace``, ``searchsorted`` →
``SearchSorted``."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType, ge_dtype
from fxlab.passes.converters.promotion import dtype_promote, scalar_input
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten
INTERPOLATION = ("bilinear", "nearest", "bicubic")
PADDING = ("zeros", "border", "reflection")


def _float32(x: ge.Tensor) -> ge.Tensor:
    return dtype_promote(DataType.DT_FLOAT, x) if x.dtype == DataType.DT_FLOAT16 else x


def _check_modes(interpolation_mode: int, padding_mode: int, interpolations: int) -> None:
    if not 0 <= interpolation_mode < interpolations:
        raise ValueError(f"interpolation_mode must be in [0, {interpolations - 1}], got {interpolation_mode}")
    if not 0 <= padding_mode <= 2:
        raise ValueError(f"padding_mode must be in [0, 2], got {padding_mode}")


def _grid_2d_samples() -> list[Sample]:
    grid = torch.rand(2, 3, 4, 2) * 2 - 1
    return [
        Sample((torch.randn(2, 3, 5, 5), grid, 0, 0, False)),
        Sample((torch.randn(2, 3, 5, 5), grid, 1, 1, True)),
        Sample((torch.randn(1, 2, 4, 4).double(), (torch.rand(1, 3, 3, 2) * 2 - 1).double(), 0, 2, False)),
    ]


@register_converter(aten.grid_sampler_2d.default, samples=_grid_2d_samples)
def convert_grid_sampler_2d(
    input: ge.Tensor, grid: ge.Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool, meta_outputs: Any = None
) -> ge.Tensor:
    """grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor"""
    _check_modes(interpolation_mode, padding_mode, 3)
    attrs = {"interpolation_mode": INTERPOLATION[interpolation_mode], "padding_mode": PADDING[padding_mode], "align_corners": align_corners}
    result = ge.op1("GridSampler2D", {"x": _float32(input), "grid": _float32(grid)}, attrs, dtypes=DataType.DT_FLOAT)
    # TorchAir compares the result's desc dtype, unset on a fresh op: it always casts back.
    return dtype_promote(input.dtype, result)


def _grid_3d_samples() -> list[Sample]:
    return [
        Sample((torch.randn(1, 2, 3, 4, 4), torch.rand(1, 2, 2, 3, 3) * 2 - 1, 0, 0, False)),
        Sample((torch.randn(1, 2, 3, 4, 4), torch.rand(1, 2, 2, 3, 3) * 2 - 1, 1, 1, True)),
    ]


@register_converter(aten.grid_sampler_3d.default, samples=_grid_3d_samples)
def convert_grid_sampler_3d(
    input: ge.Tensor, grid: ge.Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool, meta_outputs: Any = None
) -> ge.Tensor:
    """grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor"""
    _check_modes(interpolation_mode, padding_mode, 2)
    attrs = {
        "interpolation_mode": INTERPOLATION[interpolation_mode],
        "padding_mode": PADDING[padding_mode],
        "data_format": "NCDHW",
        "align_corners": align_corners,
    }
    result = ge.op1("GridSampler3D", {"x": _float32(input), "grid": _float32(grid)}, attrs, dtypes=DataType.DT_FLOAT)
    return dtype_promote(input.dtype, result)


def _grid_backward_samples() -> list[Sample]:
    grid = torch.rand(2, 3, 4, 2) * 2 - 1
    return [Sample((torch.randn(2, 3, 3, 4), torch.randn(2, 3, 5, 5), grid, 0, 0, False, [True, True]))]


@register_converter(aten.grid_sampler_2d_backward.default, samples=_grid_backward_samples)
def convert_grid_sampler_2d_backward(
    grad_output: ge.Tensor,
    input: ge.Tensor,
    grid: ge.Tensor,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
    output_mask: Any,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """grid_sampler_2d_backward(Tensor grad_output, Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)"""
    _check_modes(interpolation_mode, padding_mode, 3)
    attrs = {"interpolation_mode": INTERPOLATION[interpolation_mode], "padding_mode": PADDING[padding_mode], "align_corners": align_corners}
    inputs = {"grad": _float32(grad_output), "x": _float32(input), "grid": _float32(grid)}
    dx, dgrid = ge.op("GridSampler2DGrad", inputs, attrs, outputs=("dx", "dgrid"))
    # The results' dtypes are unknown to TorchAir, so both are always cast.
    return [dtype_promote(input.dtype, dx), dtype_promote(input.dtype, dgrid)]


@register_converter(aten.linspace.default, samples=lambda: [Sample((0.0, 1.0, 5)), Sample((-2.0, 3.5, 8), {"dtype": torch.float32})])
def convert_linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    if steps < 0:
        raise ValueError("linspace needs a non-negative number of steps")
    if layout is not None and layout != torch.strided:
        raise NotImplementedError("linspace is converted only for dense (strided) tensors")
    num = scalar_input(steps)  # TorchAir's op builder makes the count's Const first
    inputs = {"start": scalar_input(start), "stop": scalar_input(end), "num": num}
    result = ge.op("LinSpace", inputs, outputs=("output",))[0]
    return dtype_promote(ge_dtype(dtype), result) if dtype is not None else result


def _searchsorted_samples() -> list[Sample]:
    sequence = torch.tensor([[1.0, 3.0, 5.0, 7.0], [2.0, 4.0, 6.0, 8.0]])
    values = torch.tensor([[3.0, 6.0], [1.0, 9.0]])
    return [
        Sample((sequence, values)),
        Sample((sequence, values), {"right": True}),
        Sample((sequence, values), {"out_int32": True, "side": "right"}),
    ]


@register_converter(aten.searchsorted.Tensor, samples=_searchsorted_samples)
def convert_searchsorted(
    sorted_sequence: ge.Tensor,
    self: ge.Tensor,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: ge.Tensor | None = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor"""
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted side must be 'left' or 'right', got {side!r}")
        right = side == "right"
    out_dtype = DataType.DT_INT32 if out_int32 else DataType.DT_INT64
    inputs = {"sorted_sequence": sorted_sequence, "values": self, "sorter": sorter}
    return ge.op("SearchSorted", inputs, {"dtype": out_dtype, "right": right}, outputs=("out",), dtypes=out_dtype)[0]
