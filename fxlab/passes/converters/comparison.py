"""Comparison and logical converters: eq/ne/lt/le/gt/ge (Tensor and Scalar),
logical_and/or/not, bitwise_not.

TorchAir's converters for these differ in how they type the two operands, and fxlab keeps
each difference: ``eq.Tensor`` refuses mixed dtypes, ``eq``/``ne``/``gt`` promote both
sides to ``torch.result_type`` (``gt`` compares bools as floats), ``le``/``ge.Tensor``
promote to the higher of the two dtypes, ``ge.Scalar`` types the scalar like ``self``,
``lt.Tensor`` does not promote at all and ``lt.Scalar`` casts the scalar to ``self``'s type.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._prims_common import get_higher_dtype

from fxlab.ir import ge
from fxlab.ir.model import DataType, torch_dtype
from fxlab.passes.converters.promotion import cast_scalar, dtype_promote, meta_like, output_dtype
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten
BOOL = DataType.DT_BOOL
_COMPARABLE = frozenset(
    {
        DataType.DT_BOOL,
        DataType.DT_UINT8,
        DataType.DT_INT8,
        DataType.DT_INT16,
        DataType.DT_INT32,
        DataType.DT_INT64,
        DataType.DT_FLOAT16,
        DataType.DT_BF16,
        DataType.DT_FLOAT,
        DataType.DT_DOUBLE,
    }
)


def _compare(op_type: str, x1: ge.Tensor, x2: ge.Tensor) -> ge.Tensor:
    return ge.op1(op_type, {"x1": x1, "x2": x2}, dtypes=BOOL)


def _tensor_samples() -> list[Sample]:
    a = torch.randint(-3, 3, (2, 4)).float()
    return [
        Sample((a, torch.randint(-3, 3, (2, 4)).float())),
        Sample((a, torch.randint(-3, 3, (4,)).float())),
        Sample((torch.randint(-3, 3, (5,)), torch.randint(-3, 3, (5,)))),
    ]


def _mixed_samples() -> list[Sample]:
    return _tensor_samples() + [
        Sample((torch.randint(-3, 3, (5,)), torch.randint(-3, 3, (5,)).float())),
        Sample((torch.randint(-3, 3, (4,)).half(), torch.randint(-3, 3, (4,)).float())),
        Sample((torch.rand(5) > 0.5, torch.rand(5) > 0.5)),
    ]


def _scalar_samples() -> list[Sample]:
    return [
        Sample((torch.randint(-3, 3, (2, 4)).float(), 1.0)),
        Sample((torch.randint(-3, 3, (5,)), 1)),
        Sample((torch.randn(4), 0.25)),
    ]


def _result_type(self: ge.Tensor, other: Any) -> torch.dtype:
    return torch.result_type(meta_like(self), meta_like(other) if isinstance(other, ge.Tensor) else other)


def _python_dtype(value: Any) -> torch.dtype:
    if isinstance(value, bool):
        return torch.bool
    return torch.int64 if isinstance(value, int) else torch.get_default_dtype()


def _higher_dtype_operands(self: ge.Tensor, other: Any) -> tuple[ge.Tensor, ge.Tensor]:
    """le/ge operand typing: mixed dtypes go to the higher one, bools compare as floats."""
    other_dtype = torch_dtype(other.dtype) if isinstance(other, ge.Tensor) else _python_dtype(other)
    self_dtype = torch_dtype(self.dtype)
    if self.dtype not in _COMPARABLE or (isinstance(other, ge.Tensor) and other.dtype not in _COMPARABLE):
        raise TypeError(f"comparison of {self.dtype.name} with {other_dtype} is not supported by the GE converter")
    higher = get_higher_dtype(self_dtype, other_dtype)
    if self_dtype != other_dtype and higher is not None:
        return dtype_promote(higher, self, other)
    if self.dtype == BOOL:
        return dtype_promote(DataType.DT_FLOAT, self, other)
    return self, dtype_promote(self_dtype, other)


# -- eq / ne / gt ---------------------------------------------------------------------
@register_converter(aten.eq.Tensor, samples=_tensor_samples)
def convert_eq_tensor(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """eq.Tensor(Tensor self, Tensor other) -> Tensor"""
    if self.dtype != other.dtype:
        raise TypeError(
            f"eq.Tensor inputs have different dtypes ({self.dtype.name} vs {other.dtype.name}); TorchAir's converter requires equal ones"
        )
    return _compare("Equal", self, other)


def _promoted_to_result_type(op_type: str, self: ge.Tensor, other: Any, bool_as_float: bool = False) -> ge.Tensor:
    target = _result_type(self, other)
    if bool_as_float and target == torch.bool:
        target = torch.float32
    x1, x2 = dtype_promote(target, self, other)
    return _compare(op_type, x1, x2)


@register_converter(aten.eq.Scalar, samples=_scalar_samples)
def convert_eq_scalar(self: ge.Tensor, other: Any, meta_outputs: Any = None) -> ge.Tensor:
    """eq.Scalar(Tensor self, Scalar other) -> Tensor"""
    return _promoted_to_result_type("Equal", self, other)


@register_converter(aten.ne.Tensor, samples=_mixed_samples)
def convert_ne_tensor(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """ne.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _promoted_to_result_type("NotEqual", self, other)


@register_converter(aten.ne.Scalar, samples=_scalar_samples)
def convert_ne_scalar(self: ge.Tensor, other: Any, meta_outputs: Any = None) -> ge.Tensor:
    """ne.Scalar(Tensor self, Scalar other) -> Tensor"""
    return _promoted_to_result_type("NotEqual", self, other)


@register_converter(aten.gt.Tensor, samples=_mixed_samples)
def convert_gt_tensor(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """gt.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _promoted_to_result_type("Greater", self, other, bool_as_float=True)


@register_converter(aten.gt.Scalar, samples=_scalar_samples)
def convert_gt_scalar(self: ge.Tensor, other: Any, meta_outputs: Any = None) -> ge.Tensor:
    """gt.Scalar(Tensor self, Scalar other) -> Tensor"""
    return _promoted_to_result_type("Greater", self, other, bool_as_float=True)


# -- lt / le / ge ---------------------------------------------------------------------
@register_converter(aten.lt.Tensor, samples=_tensor_samples)
def convert_lt_tensor(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """lt.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _compare("Less", self, other)


@register_converter(aten.lt.Scalar, samples=_scalar_samples)
def convert_lt_scalar(self: ge.Tensor, other: Any, meta_outputs: Any = None) -> ge.Tensor:
    """lt.Scalar(Tensor self, Scalar other) -> Tensor"""
    return _compare("Less", self, cast_scalar(other, self.dtype))


@register_converter(aten.le.Tensor, samples=_mixed_samples)
def convert_le_tensor(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """le.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _compare("LessEqual", *_higher_dtype_operands(self, other))


@register_converter(aten.le.Scalar, samples=_scalar_samples)
def convert_le_scalar(self: ge.Tensor, other: Any, meta_outputs: Any = None) -> ge.Tensor:
    """le.Scalar(Tensor self, Scalar other) -> Tensor"""
    return _compare("LessEqual", *_higher_dtype_operands(self, other))


@register_converter(aten.ge.Tensor, samples=_mixed_samples)
def convert_ge_tensor(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """ge.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _compare("GreaterEqual", *_higher_dtype_operands(self, other))


@register_converter(aten.ge.Scalar, samples=_scalar_samples)
def convert_ge_scalar(self: ge.Tensor, other: Any, meta_outputs: Any = None) -> ge.Tensor:
    """ge.Scalar(Tensor self, Scalar other) -> Tensor"""
    return _compare("GreaterEqual", self, dtype_promote(self.dtype, other))


# -- logical / bitwise ----------------------------------------------------------------
def _logical_samples() -> list[Sample]:
    return [
        Sample((torch.rand(2, 3) > 0.5, torch.rand(2, 3) > 0.5)),
        Sample((torch.randint(0, 2, (2, 3)), torch.rand(3) > 0.5)),
        Sample((torch.randn(4), torch.randint(0, 2, (4,)).float())),
    ]


@register_converter(aten.logical_and.default, samples=_logical_samples)
def convert_logical_and(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """logical_and(Tensor self, Tensor other) -> Tensor"""
    x1, x2 = dtype_promote(BOOL, self, other)
    return ge.op1("LogicalAnd", {"x1": x1, "x2": x2})


@register_converter(aten.logical_or.default, samples=_logical_samples)
def convert_logical_or(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """logical_or(Tensor self, Tensor other) -> Tensor"""
    x1, x2 = dtype_promote(output_dtype(meta_outputs), self, other)
    return ge.op1("LogicalOr", {"x1": x1, "x2": x2})


@register_converter(
    aten.logical_not.default,
    samples=lambda: [Sample((torch.rand(2, 3) > 0.5,)), Sample((torch.randint(0, 3, (5,)),)), Sample((torch.randn(4),))],
)
def convert_logical_not(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """logical_not(Tensor self) -> Tensor"""
    result = ge.op1("LogicalNot", {"x": dtype_promote(BOOL, self)})
    target = output_dtype(meta_outputs)
    return result if target == BOOL else dtype_promote(target, result)


@register_converter(
    aten.bitwise_not.default,
    samples=lambda: [
        Sample((torch.rand(2, 3) > 0.5,)),
        Sample((torch.randint(-9, 9, (5,)),)),
        Sample((torch.randint(0, 255, (5,), dtype=torch.uint8),)),
    ],
)
def convert_bitwise_not(self: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """bitwise_not(Tensor self) -> Tensor"""
    if self.dtype == BOOL:
        return ge.op1("LogicalNot", {"x": self})
    return ge.op1("Invert", {"x": self})
