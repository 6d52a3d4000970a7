"""Kernels of element-wise GE ops: arithmetic, unary math, activations, comparisons,
logical ops, selection.

They follow GE semantics, not ATen's: binary ops of one type ``T`` refuse inputs of two
different dtypes (GE would reject the graph; a converter must insert the ``Cast``), while
``Mul`` and ``Pow``, whose prototypes type each input on its own (``T1``, ``T2``) and the
output as their promotion (``T3``), compute in the promoted type; ops
whose prototype admits only some dtypes refuse the others, and results keep their input
type (``RealDiv`` of integers truncates).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import IrOp

FLOATS = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})
BOOL = frozenset({torch.bool})
INTEGERS = frozenset({torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8})


def require(op: IrOp, value: torch.Tensor, allowed: Iterable[torch.dtype], what: str = "x") -> None:
    """Refuse an input dtype the GE prototype does not admit."""
    if value.dtype not in allowed:
        raise TypeError(f"{op.type} input {what} has dtype {value.dtype}; the GE prototype admits {sorted(map(str, allowed))}")


def same_type(op: IrOp, *values: torch.Tensor) -> None:
    """Refuse inputs of a single-type-``T`` op that differ in dtype."""
    dtypes = {v.dtype for v in values}
    if len(dtypes) > 1:
        raise TypeError(f"{op.type} inputs have different dtypes {sorted(map(str, dtypes))}; GE needs one type (a Cast is missing)")


def _binary(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Callable[[IrOp, list[Any], dict[str, Any]], list[Any]]:
    def kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
        same_type(op, inputs[0], inputs[1])
        return [fn(inputs[0], inputs[1])]

    return kernel


def _promoting(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Callable[[IrOp, list[Any], dict[str, Any]], list[Any]]:
    """A binary op of types ``T1``, ``T2`` -> ``T3``: both inputs in their promoted type
    (by type alone: a 0-d ``Const`` counts as much as a tensor)."""

    def kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
        x1, x2 = inputs[0], inputs[1]
        common = torch.promote_types(x1.dtype, x2.dtype)
        return [fn(x1.to(common), x2.to(common))]

    return kernel


def _unary(fn: Callable[[torch.Tensor], torch.Tensor], allowed: Iterable[torch.dtype] | None = None) -> Callable[..., list[Any]]:
    def kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
        if allowed is not None:
            require(op, inputs[0], allowed)
        return [fn(inputs[0])]

    return kernel


def _divide(rounding: str | None) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    def divide(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        mode = rounding if rounding is not None or a.is_floating_point() or a.is_complex() else "trunc"
        return torch.div(a, b, rounding_mode=mode)

    return divide


# -- arithmetic ----------------------------------------------------------------------
register_kernel("Add")(_binary(torch.add))
register_kernel("Sub")(_binary(torch.sub))
register_kernel("Mul")(_promoting(torch.mul))
register_kernel("RealDiv")(_binary(_divide(None)))
register_kernel("FloorDiv")(_binary(_divide("floor")))
register_kernel("TruncateDiv")(_binary(_divide("trunc")))
register_kernel("Maximum")(_binary(torch.maximum))
register_kernel("Minimum")(_binary(torch.minimum))


@register_kernel("Sxpy")
def sxpy(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """y = x1 - alpha * x2 (alpha optional, 1 when absent)"""
    x1, x2, alpha = (inputs + [None])[:3]
    return [x1 - x2 if alpha is None else x1 - alpha * x2]


@register_kernel("Muls")
def muls(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x = inputs[0]
    return [(x * attrs["value"]).to(x.dtype)]


register_kernel("Pow")(_promoting(torch.pow))


# -- unary math and activations ------------------------------------------------------
def _exp(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """y = base ** (shift + scale * x); base -1 means e."""
    z = attrs.get("shift", 0.0) + attrs.get("scale", 1.0) * inputs[0]
    base = attrs.get("base", -1.0)
    return [torch.exp(z) if base <= 0 else torch.pow(base, z).to(inputs[0].dtype)]


def _log(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """y = log_base(shift + scale * x); base -1 means e."""
    z = attrs.get("shift", 0.0) + attrs.get("scale", 1.0) * inputs[0]
    base = attrs.get("base", -1.0)
    return [torch.log(z) if base <= 0 else torch.log(z) / math.log(base)]


def _gelu(x: torch.Tensor) -> torch.Tensor:
    # GE's Gelu is the tanh approximation (CANN ops-nn Gelu), not the erf form.
    return torch.nn.functional.gelu(x, approximate="tanh")


_NEG_TYPES = FLOATS | {torch.int32, torch.int64}
_ABS_TYPES = FLOATS | {torch.int8, torch.int16, torch.int32, torch.int64}
_SIGN_TYPES = FLOATS - {torch.bfloat16} | {torch.int32, torch.int64}

register_kernel("Exp")(_exp)
register_kernel("Log")(_log)
register_kernel("Neg")(_unary(torch.neg, _NEG_TYPES))
register_kernel("Abs")(_unary(torch.abs, _ABS_TYPES))
register_kernel("Sqrt")(_unary(torch.sqrt, FLOATS | {torch.complex64, torch.complex128}))  # GE admits complex
register_kernel("Rsqrt")(_unary(torch.rsqrt, FLOATS))
register_kernel("Reciprocal")(_unary(torch.reciprocal, FLOATS))
register_kernel("Sin")(_unary(torch.sin, FLOATS))
register_kernel("Cos")(_unary(torch.cos, FLOATS))
register_kernel("Tanh")(_unary(torch.tanh, FLOATS))
register_kernel("Sigmoid")(_unary(torch.sigmoid, FLOATS))
register_kernel("Erf")(_unary(torch.erf, FLOATS))
register_kernel("Gelu")(_unary(_gelu, FLOATS))
register_kernel("Relu")(_unary(torch.relu))
register_kernel("Sign")(_unary(torch.sign, _SIGN_TYPES))
register_kernel("Floor")(_unary(torch.floor, FLOATS))
register_kernel("Ceil")(_unary(torch.ceil, FLOATS))
register_kernel("Round")(_unary(torch.round, FLOATS | {torch.int32, torch.int64}))


@register_kernel("Swish")
def swish(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """y = x * sigmoid(scale * x), computed in float32 and rounded once: one kernel, not a
    product of two rounded half-precision values."""
    x = inputs[0]
    require(op, x, FLOATS)
    wide = x.to(torch.promote_types(x.dtype, torch.float32))
    return [(wide * torch.sigmoid(attrs.get("scale", 1.0) * wide)).to(x.dtype)]


# -- comparisons and logic -----------------------------------------------------------
register_kernel("Equal")(_binary(torch.eq))
register_kernel("NotEqual")(_binary(torch.ne))
register_kernel("Less")(_binary(torch.lt))
register_kernel("LessEqual")(_binary(torch.le))
register_kernel("Greater")(_binary(torch.gt))
register_kernel("GreaterEqual")(_binary(torch.ge))


def _logical(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Callable[..., list[Any]]:
    def kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
        for i, value in enumerate(inputs):
            require(op, value, BOOL, f"x{i + 1}")
        return [fn(inputs[0], inputs[1])]

    return kernel


register_kernel("LogicalAnd")(_logical(torch.logical_and))
register_kernel("LogicalOr")(_logical(torch.logical_or))
register_kernel("LogicalNot")(_unary(torch.logical_not, BOOL))
register_kernel("Invert")(_unary(torch.bitwise_not, INTEGERS))


# -- selection and clipping ----------------------------------------------------------
@register_kernel("SelectV2")
def select_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    condition, then, other = inputs
    require(op, condition, BOOL, "condition")
    same_type(op, then, other)
    return [torch.where(condition, then, other)]


@register_kernel("MaskedFill")
def masked_fill(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, mask, value = inputs
    require(op, mask, BOOL, "mask")
    return [torch.where(mask, value.to(x.dtype), x)]


@register_kernel("ClipByValueV2")
def clip_by_value_v2(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, low, high = inputs
    same_type(op, x, low, high)
    return [torch.minimum(torch.maximum(x, low), high)]


# -- more unary math and activations -------------------------------------------------
register_kernel("FloorMod")(_binary(torch.remainder))
register_kernel("BitwiseAnd")(_binary(torch.bitwise_and))
register_kernel("BitwiseOr")(_binary(torch.bitwise_or))
register_kernel("Log1p")(_unary(torch.log1p, FLOATS))
register_kernel("Expm1")(_unary(torch.expm1, FLOATS))
register_kernel("Tan")(_unary(torch.tan, FLOATS))
register_kernel("IsInf")(_unary(torch.isinf, FLOATS))
register_kernel("HardSwish")(_unary(torch.nn.functional.hardswish, FLOATS))
register_kernel("Mish")(_unary(torch.nn.functional.mish, FLOATS))


@register_kernel("HardSigmoid")
def hard_sigmoid(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """y = clip(alpha * x + beta, 0, 1)"""
    x = inputs[0]
    return [(attrs.get("alpha", 0.16666666) * x + attrs.get("beta", 0.5)).clamp(0, 1).to(x.dtype)]


@register_kernel("LeakyRelu")
def leaky_relu(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    require(op, inputs[0], FLOATS)
    return [torch.nn.functional.leaky_relu(inputs[0], attrs.get("negative_slope", 0.0))]


@register_kernel("Elu")
def elu(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """y = scale * (x if x > 0 else alpha * (exp(input_scale * x) - 1))"""
    x = inputs[0]
    require(op, x, FLOATS)
    negative = attrs.get("alpha", 1.0) * torch.expm1(attrs.get("input_scale", 1.0) * x)
    return [attrs.get("scale", 1.0) * torch.where(x > 0, x, negative)]
