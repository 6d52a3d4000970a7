"""Unary math and activation converters: neg, abs, exp, log, sqrt, rsqrt, reciprocal,
sin, cos, tanh, sigmoid, silu (``Swish``), gelu, relu, erf, sign, floor, ceil, round.

Mapped as TorchAir maps them, including its quirks: ``gelu`` becomes ``Gelu`` whatever
``approximate`` says (GE's ``Gelu`` is the tanh approximation, so exact-gelu graphs
differ from eager by up to ~5e-4), ``floor``/``ceil`` always end in a ``Cast`` to the
output dtype, and ``abs`` of a uint8 tensor is the tensor itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.converters.promotion import dtype_promote, output_dtype
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten

_INTEGRAL = (DataType.DT_BOOL, DataType.DT_INT8, DataType.DT_UINT8, DataType.DT_INT16, DataType.DT_INT32, DataType.DT_INT64)
# Exp and Log carry these attrs with their prototype defaults (y = log_base(shift + scale * x)).
_EXP_LOG_ATTRS = {"base": -1.0, "scale": 1.0, "shift": 0.0}


def _floats(*shape: int) -> Callable[[], list[Sample]]:
    return lambda: [Sample((torch.randn(*shape),)), Sample((torch.randn(*shape).half(),))]


def _positive() -> list[Sample]:
    return [Sample((torch.rand(2, 3) + 0.1,)), Sample((torch.rand(4).half() + 0.1,))]


@register_converter(aten.neg.default, samples=lambda: _floats(2, 3)() + [Sample((torch.randint(-9, 9, (5,)),))])
def convert_neg(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """neg(Tensor self) -> Tensor"""
    return ge.op1("Neg", {"x": self})


@register_converter(
    aten.abs.default,
    samples=lambda: _floats(2, 3)() + [Sample((torch.randint(-9, 9, (5,)),)), Sample((torch.randint(0, 200, (5,), dtype=torch.uint8),))],
)
def convert_abs(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """abs(Tensor self) -> Tensor"""
    if self.dtype == DataType.DT_UINT8:
        return self
    return ge.op1("Abs", {"x": self})


@register_converter(aten.exp.default, samples=lambda: _floats(2, 3)() + [Sample((torch.rand(4) > 0.5,))])
def convert_exp(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """exp(Tensor self) -> Tensor"""
    if self.dtype == DataType.DT_BOOL:
        self = dtype_promote(output_dtype(meta_outputs), self)
    return ge.op1("Exp", {"x": self}, dict(_EXP_LOG_ATTRS))


@register_converter(aten.log.default, samples=_positive)
def convert_log(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """log(Tensor self) -> Tensor"""
    return ge.op1("Log", {"x": self}, dict(_EXP_LOG_ATTRS))


@register_converter(aten.sqrt.default, samples=lambda: _positive() + [Sample((torch.randint(0, 50, (5,)),))])
def convert_sqrt(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """sqrt(Tensor self) -> Tensor"""
    return ge.op1("Sqrt", {"x": dtype_promote(output_dtype(meta_outputs), self)})


@register_converter(aten.rsqrt.default, samples=_positive)
def convert_rsqrt(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """rsqrt(Tensor self) -> Tensor"""
    return ge.op1("Rsqrt", {"x": self})


@register_converter(aten.reciprocal.default, samples=lambda: _positive() + [Sample((torch.randint(1, 9, (5,)),))])
def convert_reciprocal(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """reciprocal(Tensor self) -> Tensor"""
    if self.dtype in _INTEGRAL:
        return ge.op1("Reciprocal", {"x": ge.cast(self, DataType.DT_FLOAT)})
    return ge.op1("Reciprocal", {"x": self})


def _same_type_unary(
    op_type: str, target: Any, schema: str, samples: Callable[[], list[Sample]], attrs: dict[str, Any] | None = None
) -> None:
    """Register the converter of an overload that TorchAir maps to one unary GE op."""

    def convert(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
        return ge.op1(op_type, {"x": self}, dict(attrs or {}))

    convert.__doc__ = schema
    convert.__name__ = convert.__qualname__ = f"convert_{schema.split('(')[0].replace('.', '_')}"
    register_converter(target, samples=samples)(convert)


_same_type_unary("Sin", aten.sin.default, "sin(Tensor self) -> Tensor", _floats(2, 3))
_same_type_unary("Cos", aten.cos.default, "cos(Tensor self) -> Tensor", _floats(2, 3))
_same_type_unary("Tanh", aten.tanh.default, "tanh(Tensor self) -> Tensor", _floats(2, 3))
_same_type_unary("Sigmoid", aten.sigmoid.default, "sigmoid(Tensor self) -> Tensor", _floats(2, 3))
_same_type_unary("Swish", aten.silu.default, "silu(Tensor self) -> Tensor", _floats(2, 3), {"scale": 1.0})
_same_type_unary(
    "Relu", aten.relu.default, "relu(Tensor self) -> Tensor", lambda: _floats(2, 3)() + [Sample((torch.randint(-9, 9, (5,)),))]
)
_same_type_unary("Erf", aten.erf.default, "erf(Tensor self) -> Tensor", _floats(2, 3))
_same_type_unary(
    "Sign", aten.sign.default, "sign(Tensor self) -> Tensor", lambda: _floats(2, 3)() + [Sample((torch.randint(-9, 9, (5,)),))]
)
_same_type_unary(
    "Round",
    aten.round.default,
    "round(Tensor self) -> Tensor",
    lambda: [Sample((torch.randn(3, 4) * 5,)), Sample((torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5]),))],
)


def _gelu_samples() -> list[Sample]:
    # GE's Gelu is the tanh approximation: only approximate="tanh" can match eager exactly.
    return [Sample((torch.randn(2, 3),), {"approximate": "tanh"}), Sample((torch.randn(4).half(),), {"approximate": "tanh"})]


@register_converter(aten.gelu.default, samples=_gelu_samples)
def convert_gelu(self: ge.Tensor, *, approximate: str = "none", meta_outputs: Any = None) -> ge.Tensor:
    """gelu(Tensor self, *, str approximate="none") -> Tensor"""
    return ge.op1("Gelu", {"x": self})


# GE's Floor and Ceil take floating types only; TorchAir passes integer inputs through as
# they are, so graphs flooring integers fail in GE, and have no sample here.
@register_converter(aten.floor.default, samples=lambda: [Sample((torch.randn(3, 4) * 5,)), Sample((torch.randn(5).half() * 5,))])
def convert_floor(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """floor(Tensor self) -> Tensor"""
    return dtype_promote(output_dtype(meta_outputs), ge.op1("Floor", {"x": self}))


@register_converter(aten.ceil.default, samples=lambda: [Sample((torch.randn(3, 4) * 5,)), Sample((torch.randn(5).half() * 5,))])
def convert_ceil(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """ceil(Tensor self) -> Tensor"""
    return dtype_promote(output_dtype(meta_outputs), ge.op1("Ceil", {"x": self}))
