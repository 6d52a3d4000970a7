"""Convolution, pooling, resizing and padding converters (NCHW).

``convolution`` → ``Conv2D`` (1-D convolutions are unsqueezed to 2-D around it, 3-D ones
use ``Conv3D``), ``max_pool2d_with_indices`` → ``MaxPoolWithArgmaxV1``, ``avg_pool2d`` →
``AvgPoolV2``, ``_adaptive_avg_pool2d`` → ``AdaptiveAvgPool2d``, ``upsample_nearest2d`` →
``ResizeNearestNeighborV2``, ``constant_pad_nd`` → ``PadV3``, ``reflection_pad2d`` →
``MirrorPad``. Attrs follow TorchAir's Atlas A2/A3 forms (NCHW ``data_format``, 4-element
``strides``/``pads``/``dilations``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType, ge_dtype
from fxlab.passes.converters.layouts import input_layout, output_layout
from fxlab.passes.converters.registry import Sample, register_converter
from fxlab.passes.converters.promotion import index_input, scalar_input
from fxlab.passes.converters.shape import squeeze, unsqueeze
from fxlab.passes.torchair_refusals import NotBuiltIn

aten = torch.ops.aten


def _conv_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3), torch.randn(4), [1, 1], [1, 1], [1, 1], False, [0, 0], 1)),
        Sample((torch.randn(1, 4, 9, 9), torch.randn(4, 2, 3, 3), None, [2, 2], [0, 1], [2, 1], False, [0, 0], 2)),
        Sample((torch.randn(2, 3, 10), torch.randn(5, 3, 3), torch.randn(5), [1], [1], [1], False, [0], 1)),
        Sample((torch.randn(1, 2, 4, 5, 5), torch.randn(3, 2, 3, 3, 3), None, [1, 1, 1], [1, 0, 1], [1, 1, 1], False, [0, 0, 0], 1)),
    ]


@register_converter(aten.convolution.default, samples=_conv_samples)
def convert_convolution(
    input: ge.Tensor,
    weight: ge.Tensor,
    bias: ge.Tensor | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, SymInt[] padding, int[] dilation, bool transposed, SymInt[] output_padding, int groups) -> Tensor"""
    if transposed:
        raise NotBuiltIn("transposed=True (Conv2DTranspose / Conv3DTranspose)")
    target = ge_dtype(meta_outputs.dtype)
    if bias is not None:
        bias = ge.cast_to(bias, target)
    x, weight = ge.promote(target, input, weight)
    stride, padding, dilation = list(stride), list(padding), list(dilation)
    if len(padding) == 1:
        padding = padding * 3
    one_dim = len(meta_outputs.shape) == 3
    if one_dim:  # a 1-D convolution runs as a 2-D one over a unit height
        stride, padding, dilation = [1] + stride, [0] + padding, [1] + dilation
        x, weight = unsqueeze(x, [2]), unsqueeze(weight, [2])
    if len(meta_outputs.shape) in (3, 4):
        out = _conv(x, weight, bias, "Conv2D", stride, padding, dilation, groups, "NCHW")
    else:
        out = _conv(x, weight, bias, "Conv3D", stride, padding, dilation, groups, "NCDHW")
    return squeeze(out, [2]) if one_dim else out


def _conv(
    x: ge.Tensor,
    weight: ge.Tensor,
    bias: ge.Tensor | None,
    op_type: str,
    stride: list[int],
    padding: list[int],
    dilation: list[int],
    groups: int,
    data_format: str,
) -> ge.Tensor:
    spatial = len(stride)
    attrs = {
        "strides": [1, 1, *stride],
        "pads": [p for p in padding[:spatial] for _ in range(2)],
        "dilations": [1, 1, *dilation],
        "groups": groups,
        "data_format": data_format,
        "offset_x": 0,
    }
    out = ge.op1(op_type, {"x": x, "filter": weight, "bias": bias, "offset_w": None}, attrs)
    if op_type == "Conv2D":
        input_layout(out, [0, 1, 2] if bias is not None else [0, 1], "NCHW")
    else:
        if bias is not None:
            input_layout(out, 2, "ND")
        input_layout(out, [0, 1], "NCDHW")
    return output_layout(out, 0, data_format)


def _window(values: Sequence[int], default: Sequence[int]) -> list[int]:
    """A 2-D pooling window argument as ATen allows it: one int for both axes, or none."""
    if len(values) == 0:
        return list(default)
    return [values[0], values[0]] if len(values) == 1 else [values[0], values[1]]


def _plane_indices_sample() -> torch.Tensor:
    # Each plane counts 0..H*W-1 row-major, so a window's maximum equals its flat index.
    return torch.arange(36, dtype=torch.float32).reshape(1, 1, 6, 6).repeat(2, 3, 1, 1)


def _max_pool_samples() -> list[Sample]:
    return [
        Sample((_plane_indices_sample(), [2, 2])),
        Sample((_plane_indices_sample(), [3, 3], [2, 2], [1, 1])),
        Sample((_plane_indices_sample(), [2], [1], [0], [1], True)),
    ]


@register_converter(aten.max_pool2d_with_indices.default, samples=_max_pool_samples)
def convert_max_pool2d_with_indices(
    self: ge.Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0, 0),
    dilation: Sequence[int] = (1, 1),
    ceil_mode: bool = False,
    *,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"""
    kernel = _window(kernel_size, ())
    strides = _window(stride, kernel)
    pads = _window(padding, ())
    dilations = _window(dilation, ())
    attrs = {
        "ksize": [1, *kernel, 1],
        "strides": [1, *strides, 1],
        "pads": [1, *pads, 1],
        "dtype": 3,
        "dilation": [1, *dilations, 1],
        "ceil_mode": ceil_mode,
    }
    out, _ = ge.op("MaxPoolWithArgmaxV1", {"x": self}, attrs, outputs=("y", "argmax"), dtypes=[self.dtype, DataType.DT_INT32])
    output_layout(input_layout(out, 0, "NCHW"), [0, 1], "NCHW")
    # TorchAir does not hand out GE's argmax (a bit mask, not ATen's flat indices): the
    # indices output is the pooled values themselves, cast to int64. Inference graphs
    # never read it; the samples are planes whose values equal their flat indices.
    indices = ge.cast_to(ge.op1("Identity", {"x": out}), DataType.DT_INT64)
    return [out, indices]


def _avg_pool_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 3, 6, 6), [2, 2])),
        Sample((torch.randn(2, 3, 7, 7), [3, 3], [2, 2], [1, 1], True, False)),
        Sample((torch.randn(3, 6, 6), [2], [1], [1], False, True, 3)),
    ]


@register_converter(aten.avg_pool2d.default, samples=_avg_pool_samples)
def convert_avg_pool2d(
    self: ge.Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0, 0),
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"""
    if self.rank not in (3, 4):
        raise ValueError("avg_pool2d expects a 3-D or 4-D input")
    if divisor_override is not None and not 0 < divisor_override <= 255:
        raise ValueError(f"divisor_override={divisor_override} is outside [1, 255], which AvgPoolV2 supports")
    x = unsqueeze(self, [0]) if self.rank == 3 else self
    kernel = _window(kernel_size, ())
    strides = _window(stride, kernel)
    pads = _window(padding, ())
    # TorchAir always excludes padding from the average for float16 and int8 inputs.
    exclusive = True if self.dtype in (DataType.DT_FLOAT16, DataType.DT_INT8) else not count_include_pad
    attrs = {
        "ksize": [1, 1, *kernel],
        "strides": [1, 1, *strides],
        "padding_mode": "CALCULATED",
        "pads": [pads[0], pads[0], pads[1], pads[1]],
        "data_format": "NCHW",
        "global_pooling": False,
        "ceil_mode": ceil_mode,
        "exclusive": exclusive,
        "divisor_override": divisor_override or 0,
    }
    out = output_layout(input_layout(ge.op1("AvgPoolV2", {"x": x}, attrs), [0], "NCHW"), 0, "NCHW")
    return squeeze(out, [0]) if self.rank == 3 else out


@register_converter(
    aten._adaptive_avg_pool2d.default,
    samples=lambda: [Sample((torch.randn(2, 3, 8, 8), [1, 1])), Sample((torch.randn(2, 3, 7, 5), [3, 2]))],
)
def convert_adaptive_avg_pool2d(self: ge.Tensor, output_size: Any, *, meta_outputs: Any = None) -> ge.Tensor:
    """_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor"""
    if any(isinstance(s, ge.Tensor) for s in output_size):
        raise NotImplementedError("_adaptive_avg_pool2d with a symbolic output_size has no GE mapping (TorchAir rejects it too)")
    return ge.op1("AdaptiveAvgPool2d", {"x": self}, {"output_size": list(output_size)})


@register_converter(
    aten.upsample_nearest2d.default, samples=lambda: [Sample((torch.randn(1, 2, 3, 4), [6, 8])), Sample((torch.randn(1, 2, 4, 4), [6, 3]))]
)
def convert_upsample_nearest2d(
    self: ge.Tensor, output_size: Any, scales_h: float | None = None, scales_w: float | None = None, *, meta_outputs: Any = None
) -> ge.Tensor:
    """upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor"""
    size = index_input(output_size, DataType.DT_INT32)
    attrs = {"align_corners": False, "half_pixel_centers": False}
    out = ge.op1("ResizeNearestNeighborV2", {"x": self, "size": size}, attrs)
    return output_layout(input_layout(out, 0, "NCHW"), 0, "NCHW")


def _pad_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 3, 4), [1, 2])),
        Sample((torch.randn(2, 3, 4), [1, 1, 0, 2], 1.5)),
        Sample((torch.randn(2, 3, 4, 4), [1, 1, 1, 1, 1, 1, 0, 0], 0.0)),
        Sample((torch.randint(0, 5, (2, 3), dtype=torch.int32), [2, 0], 7)),
    ]


@register_converter(aten.constant_pad_nd.default, samples=_pad_samples)
def convert_constant_pad_nd(self: ge.Tensor, pad: Sequence[int], value: Any = 0, *, meta_outputs: Any = None) -> ge.Tensor:
    """constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor"""
    if any(isinstance(p, ge.Tensor) for p in pad):
        raise NotImplementedError("constant_pad_nd with symbolic pads has no GE mapping (TorchAir rejects it too)")
    if len(pad) % 2 or len(pad) > 2 * self.rank:
        raise ValueError(f"pad {list(pad)} must have an even length of at most twice the input rank {self.rank}")
    inputs = {"x": self, "paddings": index_input(_leading_dim_pairs(pad, self.rank)), "constant_values": scalar_input(value, self)}
    return ge.op1("PadV3", inputs, {"mode": "constant", "paddings_contiguous": True})


def _leading_dim_pairs(pad: Sequence[int], rank: int) -> list[int]:
    """ATen lists (before, after) pairs from the last dim backwards; GE from the first dim."""
    padded = list(pad) + [0] * (2 * rank - len(pad))
    pairs = [padded[i : i + 2] for i in range(0, len(padded), 2)]
    return [v for pair in reversed(pairs) for v in pair]


@register_converter(
    aten.reflection_pad2d.default,
    samples=lambda: [Sample((torch.randn(1, 2, 4, 5), [1, 2, 2, 1])), Sample((torch.randn(2, 4, 5), [1, 1, 0, 2]))],
)
def convert_reflection_pad2d(self: ge.Tensor, padding: Sequence[int], *, meta_outputs: Any = None) -> ge.Tensor:
    """reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor"""
    if any(isinstance(p, ge.Tensor) for p in padding) or len(padding) != 4:
        raise ValueError("reflection_pad2d needs 4 static paddings")
    x = unsqueeze(self, [0]) if self.rank == 3 else self
    rank = 4 if self.rank == 3 else self.rank
    shape = index_input([rank, 2])  # TorchAir's Reshape builder makes the index-typed Const first
    values = ge.const(_leading_dim_pairs(padding, rank), DataType.DT_INT64)
    pairs = ge.op1("Reshape", {"x": values, "shape": shape}, {"axis": 0, "num_axes": -1}, shapes=[(rank, 2)])
    out = ge.op1("MirrorPad", {"x": x, "paddings": pairs}, {"mode": "REFLECT"})
    return squeeze(out, [0]) if self.rank == 3 else out


@register_converter(
    aten.replication_pad1d.default, samples=lambda: [Sample((torch.randn(2, 3, 5), [2, 1])), Sample((torch.randn(3, 4), [0, 3]))]
)
def convert_replication_pad1d(self: ge.Tensor, padding: Sequence[int], *, meta_outputs: Any = None) -> ge.Tensor:
    """replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor"""
    if any(isinstance(p, ge.Tensor) for p in padding) or len(padding) < 2:
        raise ValueError("replication_pad1d needs 2 static paddings")
    # TorchAir pads a leading unit axis as if the input were 4-D, whatever its rank.
    x = unsqueeze(self, [0])
    inputs = {
        "x": x,
        "paddings": index_input([0, 0, 0, 0, 0, 0, padding[0], padding[1]]),
        "constant_values": ge.const([0], DataType.DT_INT64),
    }
    out = ge.op1("PadV3", inputs, {"mode": "edge", "paddings_contiguous": True})
    return squeeze(out, [0])
