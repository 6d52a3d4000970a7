"""Kernels of GE's ``Foreach*`` ops: one op over a list of tensors.

Inputs arrive flat (each dynamic input's tensors in order, then the single inputs); the
list length is the number of outputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import IrOp

Unary = Callable[[torch.Tensor], torch.Tensor]
Binary = Callable[[torch.Tensor, Any], torch.Tensor]

_UNARY: dict[str, Unary] = {
    "Abs": torch.abs,
    "Acos": torch.acos,
    "Asin": torch.asin,
    "Atan": torch.atan,
    "Cos": torch.cos,
    "Cosh": torch.cosh,
    "Erf": torch.erf,
    "Erfc": torch.erfc,
    "Exp": torch.exp,
    "Expm1": torch.expm1,
    "Log": torch.log,
    "Log10": torch.log10,
    "Log1p": torch.log1p,
    "Log2": torch.log2,
    "Sigmoid": torch.sigmoid,
    "Sin": torch.sin,
    "Sinh": torch.sinh,
    "Tan": torch.tan,
    "Tanh": torch.tanh,
}
_BINARY: dict[str, Binary] = {
    "Add": torch.add,
    "Sub": torch.sub,
    "Mul": torch.mul,
    "Div": torch.div,
    "Maximum": torch.maximum,
    "Minimum": torch.minimum,
    "Pow": torch.pow,
}
_ROUND: dict[int, Unary] = {2: torch.floor, 3: torch.ceil, 4: torch.round, 5: torch.trunc, 7: torch.frac}


def _count(op: IrOp) -> int:
    return len(op.output_desc)


def _as_operand(value: torch.Tensor, like: torch.Tensor) -> Any:
    """A one-element scalar input, in the list tensor's dtype (GE computes in it)."""
    return value.reshape(()).to(like.dtype)


def _unary(fn: Unary) -> Callable[..., list[Any]]:
    return lambda op, inputs, attrs: [fn(x) for x in inputs[: _count(op)]]


def _with_scalar(fn: Binary) -> Callable[..., list[Any]]:
    def kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
        n = _count(op)
        return [fn(x, _as_operand(inputs[n], x)) for x in inputs[:n]]

    return kernel


def _with_scalar_list(fn: Binary) -> Callable[..., list[Any]]:
    def kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
        n = _count(op)
        scalars = inputs[n].reshape(-1)
        return [fn(x, _as_operand(scalars[i], x)) for i, x in enumerate(inputs[:n])]

    return kernel


def _with_list(fn: Binary, alpha: bool) -> Callable[..., list[Any]]:
    def kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
        n = _count(op)
        first, second = inputs[:n], inputs[n : 2 * n]
        scale = inputs[2 * n] if alpha else None
        return [fn(a, b * _as_operand(scale, b) if scale is not None else b) for a, b in zip(first, second)]

    return kernel


for _name, _fn in _UNARY.items():
    register_kernel(f"Foreach{_name}")(_unary(_fn))
for _name, _binary in _BINARY.items():
    register_kernel(f"Foreach{_name}Scalar")(_with_scalar(_binary))
    register_kernel(f"Foreach{_name}ScalarList")(_with_scalar_list(_binary))
    register_kernel(f"Foreach{_name}List")(_with_list(_binary, alpha=_name in ("Add", "Sub")))


@register_kernel("ForeachRoundOffNumber")
def round_off_number(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = _count(op)
    mode = int(inputs[n].reshape(-1)[0])
    return [_ROUND[mode](x) for x in inputs[:n]]


@register_kernel("ForeachPowScalarAndTensor")
def pow_scalar_and_tensor(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    base, exponents = inputs[0], inputs[1:]
    return [torch.pow(_as_operand(base, x), x) for x in exponents]


@register_kernel("ForeachNorm")
def norm(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = _count(op)
    order = float(inputs[n].reshape(()))
    return [torch.linalg.vector_norm(x, math.inf if order == math.inf else order) for x in inputs[:n]]


@register_kernel("ForeachLerpScalar")
def lerp_scalar(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = _count(op)
    weight = inputs[2 * n]
    return [torch.lerp(a, b, _as_operand(weight, a)) for a, b in zip(inputs[:n], inputs[n : 2 * n])]


@register_kernel("ForeachLerpList")
def lerp_list(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = _count(op)
    return [torch.lerp(a, b, w) for a, b, w in zip(inputs[:n], inputs[n : 2 * n], inputs[2 * n : 3 * n])]


def _addc(combine: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], per_tensor: bool) -> Callable[..., list[Any]]:
    def kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
        n = _count(op)
        selves, ones, twos, value = inputs[:n], inputs[n : 2 * n], inputs[2 * n : 3 * n], inputs[3 * n]
        values = value.reshape(-1)
        out = []
        for i, (x, a, b) in enumerate(zip(selves, ones, twos)):
            scale = _as_operand(values[i] if per_tensor else values[0], x)
            out.append(x + scale * combine(a, b))
        return out

    return kernel


for _name, _combine in (("Addcmul", torch.mul), ("Addcdiv", torch.div)):
    register_kernel(f"Foreach{_name}Scalar")(_addc(_combine, per_tensor=False))
    register_kernel(f"Foreach{_name}ScalarList")(_addc(_combine, per_tensor=True))
    register_kernel(f"Foreach{_name}List")(_addc(_combine, per_tensor=True))
