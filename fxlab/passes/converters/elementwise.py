"""Element-wise arithmetic converters: add/sub/mul/div/rsub, pow, clamp, where,
maximum/minimum, masked_fill.

Each follows TorchAir's converter for the same overload: the GE op types, input order,
which operands are promoted (``Cast``) to the node's output dtype, and how Python scalars
become ``Const`` ops (see :mod:`.promotion`).
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType, torch_dtype
from fxlab.passes.converters.promotion import dtype_promote, known_dtype, output_dtype
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten


def _r(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape).to(dtype)


def _binary_samples() -> list[Sample]:
    return [
        Sample((_r(2, 3), _r(2, 3))),
        Sample((_r(2, 3), _r(3))),
        Sample((_r(2, 3), _r(2, 3, dtype=torch.float16))),
        Sample((torch.randint(-5, 5, (4,)), _r(4))),
        Sample((_r(2, 3), 2.5)),
    ]


def _alpha_samples() -> list[Sample]:
    return _binary_samples() + [Sample((_r(2, 3), _r(2, 3)), {"alpha": 2}), Sample((_r(2, 3), _r(3)), {"alpha": 0.5})]


def _scalar_samples() -> list[Sample]:
    return [Sample((_r(2, 3), 3)), Sample((_r(2, 3), -1.5)), Sample((torch.randint(-5, 5, (4,)), 2))]


# -- add / sub / rsub -----------------------------------------------------------------
def _add(self: Any, other: Any, alpha: Any, meta_outputs: Any) -> ge.Tensor:
    target = output_dtype(meta_outputs)
    if isinstance(alpha, ge.Tensor) or alpha != 1:
        x1, x2, scale = dtype_promote(target, self, other, alpha)
        return ge.op1("AxpyV2", {"x1": x1, "x2": x2, "alpha": scale})
    x1, x2 = dtype_promote(target, self, other)
    return ge.op1("Add", {"x1": x1, "x2": x2})


@register_converter(aten.add.Tensor, samples=_alpha_samples)
def convert_add_tensor(self: ge.Tensor, other: Any, *, alpha: Any = 1, meta_outputs: Any = None) -> ge.Tensor:
    """add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    return _add(self, other, alpha, meta_outputs)


@register_converter(aten.add.Scalar, samples=lambda: [Sample((_r(2, 3), 1.5)), Sample((_r(2, 3), 2, 3))])
def convert_add_scalar(self: ge.Tensor, other: Any, alpha: Any = 1, meta_outputs: Any = None) -> ge.Tensor:
    """add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"""
    return _add(self, other, alpha, meta_outputs)


@register_converter(aten.sub.Tensor, samples=_alpha_samples)
def convert_sub_tensor(self: ge.Tensor, other: Any, *, alpha: Any = 1, meta_outputs: Any = None) -> ge.Tensor:
    """sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    if alpha != 1:
        if not isinstance(other, ge.Tensor):
            raise TypeError("sub.Tensor with alpha != 1 needs a tensor 'other' (TorchAir types alpha from it)")
        other = ge.op1("Mul", {"x1": other, "x2": ge.const(alpha, known_dtype(other))})
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, other)
    return ge.op1("Sub", {"x1": x1, "x2": x2})


@register_converter(aten.rsub.Tensor, samples=lambda: [s for s in _alpha_samples() if isinstance(s.args[1], torch.Tensor)])
def convert_rsub_tensor(self: ge.Tensor, other: Any, *, alpha: Any = 1, meta_outputs: Any = None) -> ge.Tensor:
    """rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    target = output_dtype(meta_outputs)
    if isinstance(alpha, ge.Tensor) or alpha != 1:
        x, y, scale = dtype_promote(target, self, other, alpha)
        scaled = ge.op1("Mul", {"x1": x, "x2": scale})
        return ge.op1("Sub", {"x1": y, "x2": scaled})
    x, y = dtype_promote(target, self, other)
    return ge.op1("Sub", {"x1": y, "x2": x})


@register_converter(aten.rsub.Scalar, samples=lambda: [Sample((_r(2, 3), 1.0)), Sample((_r(2, 3), 2, 3))])
def convert_rsub_scalar(self: ge.Tensor, other: Any, alpha: Any = 1, meta_outputs: Any = None) -> ge.Tensor:
    """rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"""
    # TorchAir's path for SoCs before arch35 (Atlas A2/A3): Sxpy(other, self, alpha).
    x, y, scale = dtype_promote(output_dtype(meta_outputs), self, other, alpha)
    return ge.op1("Sxpy", {"x1": y, "x2": x, "alpha": scale})


# -- mul / div ------------------------------------------------------------------------
def _mul_samples() -> list[Sample]:
    return _binary_samples() + [
        Sample((_r(2, 3, dtype=torch.float16), 0.5)),
        Sample((torch.rand(4) > 0.5, torch.rand(4) > 0.5)),
    ]


@register_converter(aten.mul.Tensor, samples=_mul_samples)
def convert_mul_tensor(self: ge.Tensor, other: Any, meta_outputs: Any = None) -> ge.Tensor:
    """mul.Tensor(Tensor self, Tensor other) -> Tensor"""
    target = output_dtype(meta_outputs)
    if not isinstance(other, ge.Tensor) and self.dtype in (DataType.DT_FLOAT16, DataType.DT_BF16):
        scaled = ge.op1("Muls", {"x": self}, {"value": float(other)})
        return dtype_promote(target, scaled)
    both_bool = isinstance(other, ge.Tensor) and self.dtype == other.dtype == DataType.DT_BOOL
    compute = DataType.DT_UINT8 if both_bool else target
    x1, x2 = dtype_promote(compute, self, other)
    return dtype_promote(target, ge.op1("Mul", {"x1": x1, "x2": x2}))


@register_converter(aten.mul.Scalar, samples=_scalar_samples)
def convert_mul_scalar(self: ge.Tensor, other: Any, meta_outputs: Any = None) -> ge.Tensor:
    """mul.Scalar(Tensor self, Scalar other) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, other)
    return ge.op1("Mul", {"x1": x1, "x2": x2})


def _div_samples() -> list[Sample]:
    return [
        Sample((_r(2, 3), _r(2, 3).abs() + 0.5)),
        Sample((torch.randint(-9, 9, (5,)), torch.randint(1, 4, (5,)))),
        Sample((_r(2, 3), 4.0)),
    ]


@register_converter(aten.div.Tensor, samples=_div_samples)
def convert_div_tensor(self: ge.Tensor, other: Any, meta_outputs: Any = None) -> ge.Tensor:
    """div.Tensor(Tensor self, Tensor other) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, other)
    return ge.op1("RealDiv", {"x1": x1, "x2": x2})


@register_converter(aten.div.Scalar, samples=_scalar_samples)
def convert_div_scalar(self: ge.Tensor, other: Any, meta_outputs: Any = None) -> ge.Tensor:
    """div.Scalar(Tensor self, Scalar other) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, other)
    return ge.op1("RealDiv", {"x1": x1, "x2": x2})


def _div_mode_samples() -> list[Sample]:
    ints = (torch.randint(-9, 9, (6,)), torch.tensor([2, -3, 4, 5, -2, 7]))
    floats = (_r(2, 3) * 4, _r(2, 3).abs() + 0.5)
    return [
        Sample(floats, {"rounding_mode": "floor"}),
        Sample(floats, {"rounding_mode": "trunc"}),
        Sample(floats, {"rounding_mode": None}),
        Sample(ints, {"rounding_mode": "floor"}),
        Sample(ints, {"rounding_mode": "trunc"}),
    ]


@register_converter(aten.div.Tensor_mode, samples=_div_mode_samples)
def convert_div_tensor_mode(self: ge.Tensor, other: Any, *, rounding_mode: str | None, meta_outputs: Any = None) -> ge.Tensor:
    """div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, other)
    op_type = {"floor": "FloorDiv", "trunc": "TruncateDiv"}.get(rounding_mode or "", "RealDiv")
    return ge.op1(op_type, {"x1": x1, "x2": x2})


# -- pow ------------------------------------------------------------------------------
@register_converter(
    aten.pow.Tensor_Scalar,
    samples=lambda: [Sample((_r(2, 3), 2)), Sample((_r(2, 3).abs(), 0.5)), Sample((torch.randint(0, 5, (4,)), 3))],
)
def convert_pow_tensor_scalar(self: ge.Tensor, exponent: Any, meta_outputs: Any = None) -> ge.Tensor:
    """pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, exponent)
    return ge.op1("Pow", {"x1": x1, "x2": x2})


@register_converter(
    aten.pow.Tensor_Tensor,
    samples=lambda: [Sample((_r(2, 3).abs() + 0.1, _r(2, 3))), Sample((_r(3).abs(), torch.tensor([1, 2, 3])))],
)
def convert_pow_tensor_tensor(self: ge.Tensor, exponent: Any, meta_outputs: Any = None) -> ge.Tensor:
    """pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, exponent)
    return ge.op1("Pow", {"x1": x1, "x2": x2})


@register_converter(aten.pow.Scalar, samples=lambda: [Sample((2.0, _r(2, 3))), Sample((3, torch.tensor([0, 1, 2])))])
def convert_pow_scalar(self: Any, exponent: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """pow.Scalar(Scalar self, Tensor exponent) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, exponent)
    return ge.op1("Pow", {"x1": x1, "x2": x2})


# -- clamp ----------------------------------------------------------------------------
_INT_TYPES = (DataType.DT_INT32, DataType.DT_INT64, DataType.DT_INT16, DataType.DT_INT8, DataType.DT_UINT8)


def _lowest(dtype: DataType) -> float | int:
    return torch.iinfo(torch_dtype(dtype)).min if dtype in _INT_TYPES else -float("inf")


def _highest(dtype: DataType) -> float | int:
    return torch.iinfo(torch_dtype(dtype)).max if dtype in _INT_TYPES else float("inf")


def _clip(self: ge.Tensor, low: Any, high: Any, meta_outputs: Any) -> ge.Tensor:
    if low is None and high is None:
        raise ValueError("clamp: at least one of 'min' or 'max' must not be None")
    low = _lowest(self.dtype) if low is None else low
    high = _highest(self.dtype) if high is None else high
    target = output_dtype(meta_outputs)
    x = dtype_promote(target, self)
    low = dtype_promote(target, low)
    high = dtype_promote(target, high)
    return ge.op1("ClipByValueV2", {"x": x, "clip_value_min": low, "clip_value_max": high})


def _clamp_samples() -> list[Sample]:
    return [
        Sample((_r(3, 4), -0.5, 0.5)),
        Sample((_r(3, 4), None, 0.2)),
        Sample((_r(3, 4), -0.2)),
        Sample((torch.randint(-9, 9, (6,)), -3, 4)),
        Sample((torch.randint(-9, 9, (6,)), None, 2)),
    ]


@register_converter(aten.clamp.default, samples=_clamp_samples)
def convert_clamp(self: ge.Tensor, min: Any = None, max: Any = None, meta_outputs: Any = None) -> ge.Tensor:  # noqa: A002
    """clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"""
    return _clip(self, min, max, meta_outputs)


@register_converter(
    aten.clamp.Tensor,
    samples=lambda: [Sample((_r(3, 4), _r(3, 4) - 0.5, _r(4) + 0.5)), Sample((_r(3, 4), None, _r(1)))],
)
def convert_clamp_tensor(self: ge.Tensor, min: Any = None, max: Any = None, meta_outputs: Any = None) -> ge.Tensor:  # noqa: A002
    """clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor"""
    return _clip(self, min, max, meta_outputs)


@register_converter(aten.clamp_min.default, samples=lambda: [Sample((_r(3, 4), 0.1)), Sample((torch.randint(-9, 9, (6,)), 0))])
def convert_clamp_min(self: ge.Tensor, min: Any, meta_outputs: Any = None) -> ge.Tensor:  # noqa: A002
    """clamp_min(Tensor self, Scalar min) -> Tensor"""
    high = _highest(self.dtype)
    target = output_dtype(meta_outputs)
    x = dtype_promote(target, self)
    low = dtype_promote(target, min)
    high = dtype_promote(target, high)
    return ge.op1("ClipByValueV2", {"x": x, "clip_value_min": low, "clip_value_max": high})


# -- where / maximum / minimum / masked_fill ------------------------------------------
def _where_samples() -> list[Sample]:
    cond = torch.rand(2, 3) > 0.5
    return [
        Sample((cond, _r(2, 3), _r(2, 3))),
        Sample((cond, _r(2, 3), _r(3, dtype=torch.float16))),
        Sample((cond, torch.randint(0, 9, (2, 3)), _r(1))),
    ]


@register_converter(aten.where.self, samples=_where_samples)
def convert_where_self(condition: ge.Tensor, self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """where.self(Tensor condition, Tensor self, Tensor other) -> Tensor"""
    if self.dtype != other.dtype:
        self, other = dtype_promote(output_dtype(meta_outputs), self, other)
    return ge.op("SelectV2", {"condition": condition, "then": self, "else": other}, outputs=("result",), dtypes=self.dtype)[0]


def _minmax_samples() -> list[Sample]:
    return [
        Sample((_r(2, 3), _r(2, 3))),
        Sample((_r(2, 3), _r(3, dtype=torch.float16))),
        Sample((torch.randint(-9, 9, (5,)), torch.randint(-9, 9, (5,)))),
    ]


@register_converter(aten.maximum.default, samples=_minmax_samples)
def convert_maximum(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """maximum(Tensor self, Tensor other) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, other)
    return ge.op1("Maximum", {"x1": x1, "x2": x2})


def _minimum_samples() -> list[Sample]:
    return _minmax_samples() + [
        Sample((torch.rand(5) > 0.5, torch.rand(5) > 0.5)),
        Sample((torch.randint(0, 200, (5,), dtype=torch.uint8), torch.randint(0, 200, (5,), dtype=torch.uint8))),
    ]


@register_converter(aten.minimum.default, samples=_minimum_samples)
def convert_minimum(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """minimum(Tensor self, Tensor other) -> Tensor"""
    target = output_dtype(meta_outputs)
    if target == DataType.DT_BOOL:
        return ge.op1("Mul", {"x1": self, "x2": other})
    if target in (DataType.DT_UINT8, DataType.DT_INT16):
        x1, x2 = dtype_promote(DataType.DT_INT32, self, other)
        return dtype_promote(target, ge.op1("Minimum", {"x1": x1, "x2": x2}))
    x1, x2 = dtype_promote(target, self, other)
    return ge.op1("Minimum", {"x1": x1, "x2": x2})


def _masked_fill_samples() -> list[Sample]:
    mask = torch.rand(2, 3) > 0.5
    return [Sample((_r(2, 3), mask, -1.5)), Sample((torch.randint(0, 9, (2, 3)), mask, 7)), Sample((_r(2, 3), mask[0], 0))]


@register_converter(aten.masked_fill.Scalar, samples=_masked_fill_samples)
def convert_masked_fill_scalar(self: ge.Tensor, mask: ge.Tensor, value: Any, meta_outputs: Any = None) -> ge.Tensor:
    """masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor"""
    value = dtype_promote(output_dtype(meta_outputs), value)
    return ge.op1("MaskedFill", {"x": self, "mask": mask, "value": value})


@register_converter(
    aten.masked_fill.Tensor,
    samples=lambda: [
        Sample((_r(2, 3), torch.rand(2, 3) > 0.5, torch.tensor(2.5))),
        Sample((_r(2, 3), torch.rand(3) > 0.5, torch.tensor(4))),
    ],
)
def convert_masked_fill_tensor(self: ge.Tensor, mask: ge.Tensor, value: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor"""
    value = dtype_promote(output_dtype(meta_outputs), value)
    return ge.op1("MaskedFill", {"x": self, "mask": mask, "value": value})
