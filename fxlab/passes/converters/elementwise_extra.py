"""More element-wise converters TorchAir supports: remainder, floor_divide,
bitwise_and/or, log1p, expm1, log2, log10, tan, isinf, and the activations hardtanh,
leaky_relu, elu, hardswish, hardsigmoid, mish.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.converters.promotion import cast_scalar, dtype_promote, known_dtype, output_dtype
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten


def _floats(*shape: int) -> Callable[[], list[Sample]]:
    return lambda: [Sample((torch.randn(*shape),)), Sample((torch.randn(*shape).half(),))]


# -- remainder / floor_divide ---------------------------------------------------------
def _mod_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 3) * 5, torch.rand(2, 3) + 0.5)),
        Sample((torch.randint(-9, 9, (6,)), torch.tensor([2, -3, 4, 5, -2, 7]))),
        Sample((torch.randint(-9, 9, (6,)), torch.rand(6) + 1)),
    ]


@register_converter(aten.remainder.Tensor, samples=_mod_samples)
def convert_remainder_tensor(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """remainder.Tensor(Tensor self, Tensor other) -> Tensor"""
    if self.dtype != other.dtype:
        self, other = dtype_promote(output_dtype(meta_outputs), self, other)
    return ge.op1("FloorMod", {"x1": self, "x2": other})


@register_converter(aten.remainder.Scalar, samples=lambda: [Sample((torch.randn(2, 3) * 5, 2.0)), Sample((torch.randint(-9, 9, (6,)), 4))])
def convert_remainder_scalar(self: ge.Tensor, other: Any, meta_outputs: Any = None) -> ge.Tensor:
    """remainder.Scalar(Tensor self, Scalar other) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, other)
    return ge.op1("FloorMod", {"x1": x1, "x2": x2})


@register_converter(
    aten.remainder.Scalar_Tensor, samples=lambda: [Sample((7.0, torch.rand(2, 3) + 1)), Sample((9, torch.tensor([2, -4, 5])))]
)
def convert_remainder_scalar_tensor(self: Any, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, other)
    return ge.op1("FloorMod", {"x1": x1, "x2": x2})


@register_converter(aten.floor_divide.default, samples=_mod_samples)
def convert_floor_divide(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """floor_divide(Tensor self, Tensor other) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, other)
    return ge.op1("FloorDiv", {"x1": x1, "x2": x2})


# -- bitwise and / or -----------------------------------------------------------------
def _bitwise_samples() -> list[Sample]:
    return [
        Sample((torch.rand(2, 3) > 0.5, torch.rand(2, 3) > 0.5)),
        Sample((torch.randint(0, 64, (5,)), torch.randint(0, 64, (5,)))),
        Sample((torch.randint(0, 64, (5,), dtype=torch.int32), torch.randint(0, 64, (5,)))),
    ]


@register_converter(aten.bitwise_and.Tensor, samples=_bitwise_samples)
def convert_bitwise_and(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, other)
    # TorchAir tests the promoted operand's dtype, which it knows only when no Cast was added.
    op_type = "LogicalAnd" if known_dtype(x1) == DataType.DT_BOOL else "BitwiseAnd"
    return ge.op1(op_type, {"x1": x1, "x2": x2})


@register_converter(aten.bitwise_or.Tensor, samples=_bitwise_samples)
def convert_bitwise_or(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor"""
    target = output_dtype(meta_outputs)
    x1, x2 = dtype_promote(target, self, other)
    return ge.op1("LogicalOr" if target == DataType.DT_BOOL else "BitwiseOr", {"x1": x1, "x2": x2})


# -- unary math -----------------------------------------------------------------------
def _positive() -> list[Sample]:
    return [Sample((torch.rand(2, 3) + 0.1,)), Sample((torch.rand(4).half() + 0.1,))]


def _unary(
    op_type: str,
    target: Any,
    schema: str,
    samples: Callable[[], list[Sample]],
    attrs: dict[str, Any] | None = None,
    out_dtype: DataType | None = None,
) -> None:
    """Register the converter of an overload TorchAir maps to one unary GE op."""

    def convert(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
        return ge.op1(op_type, {"x": self}, dict(attrs or {}), dtypes=out_dtype)

    convert.__doc__ = schema
    convert.__name__ = convert.__qualname__ = f"convert_{schema.split('(')[0]}"
    register_converter(target, samples=samples)(convert)


_unary("Log1p", aten.log1p.default, "log1p(Tensor self) -> Tensor", _positive)
_unary("Expm1", aten.expm1.default, "expm1(Tensor self) -> Tensor", _floats(2, 3))
_unary("Tan", aten.tan.default, "tan(Tensor self) -> Tensor", _floats(2, 3))
_unary("Log", aten.log2.default, "log2(Tensor self) -> Tensor", _positive, {"base": 2.0, "scale": 1.0, "shift": 0.0})
_unary("Log", aten.log10.default, "log10(Tensor self) -> Tensor", _positive, {"base": 10.0, "scale": 1.0, "shift": 0.0})
_unary(
    "IsInf",
    aten.isinf.default,
    "isinf(Tensor self) -> Tensor",
    lambda: [Sample((torch.tensor([1.0, float("inf"), -float("inf"), float("nan")]),))],
    out_dtype=DataType.DT_BOOL,
)
_unary("HardSwish", aten.hardswish.default, "hardswish(Tensor self) -> Tensor", lambda: [Sample((torch.randn(3, 4) * 4,))])
_unary("Mish", aten.mish.default, "mish(Tensor self) -> Tensor", _floats(2, 3))


# -- activations with parameters ------------------------------------------------------
@register_converter(aten.hardsigmoid.default, samples=lambda: [Sample((torch.randn(3, 4) * 4,)), Sample((torch.randn(5).half() * 4,))])
def convert_hardsigmoid(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """hardsigmoid(Tensor self) -> Tensor"""
    attrs = {"alpha": 0.16666666, "beta": 0.5}
    return ge.op("HardSigmoid", {"input_x": self}, attrs, outputs=("output_y",))[0]


@register_converter(
    aten.hardtanh.default,
    samples=lambda: [Sample((torch.randn(3, 4) * 2,)), Sample((torch.randn(3, 4) * 2, -0.5, 0.5)), Sample((torch.randn(4), 1.0, 1.0))],
)
def convert_hardtanh(self: ge.Tensor, min_val: Any = -1, max_val: Any = 1, meta_outputs: Any = None) -> ge.Tensor:
    """hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor"""
    if min_val >= max_val:
        dims = ge.op1("Shape", {"x": self}, {"dtype": 3}, dtypes=DataType.DT_INT32, shapes=[(self.rank,)])
        value = cast_scalar(max_val, self.dtype)
        return ge.op1("Fill", {"dims": dims, "value": value}, dtypes=self.dtype, shapes=[self.shape])
    x, low, high = dtype_promote(output_dtype(meta_outputs), self, min_val, max_val)
    return ge.op1("ClipByValueV2", {"x": x, "clip_value_min": low, "clip_value_max": high})


@register_converter(aten.leaky_relu.default, samples=lambda: [Sample((torch.randn(3, 4),)), Sample((torch.randn(3, 4), 0.2))])
def convert_leaky_relu(self: ge.Tensor, negative_slope: Any = 0.01, meta_outputs: Any = None) -> ge.Tensor:
    """leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor"""
    if isinstance(negative_slope, ge.Tensor):
        raise NotImplementedError("leaky_relu is converted only for a number negative_slope")
    return ge.op1("LeakyRelu", {"x": self}, {"negative_slope": float(negative_slope)})


@register_converter(aten.elu.default, samples=lambda: [Sample((torch.randn(3, 4),)), Sample((torch.randn(3, 4), 0.5, 2.0, 1.5))])
def convert_elu(self: ge.Tensor, alpha: Any = 1, scale: Any = 1, input_scale: Any = 1, meta_outputs: Any = None) -> ge.Tensor:
    """elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor"""
    attrs = {"alpha": float(alpha), "scale": float(scale), "input_scale": float(input_scale)}
    return ge.op1("Elu", {"x": self}, attrs)
