"""Point-wise converters TorchAir maps to one GE op or a short chain: inverse trig and
hyperbolic functions, ``erfinv``, ``sgn``, ``lerp``, ``addcmul``/``addcdiv``,
``nan_to_num``, ``threshold``, ``prelu``, ``glu``, ``log_sigmoid_forward``,
``logsumexp``, ``zero``, ``less``, the ``prims`` binary ops, and the ``out=`` variants
TorchAir converts (it returns the result and leaves ``out`` alone).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.converters.promotion import dtype_promote, output_dtype, scalar_input
from fxlab.passes.converters.registry import Sample, register_converter
from fxlab.passes.converters.shape import identity, squeeze

aten = torch.ops.aten
prims = torch.ops.prims


def _in(low: float, high: float, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return (torch.rand(*shape) * (high - low) + low).to(dtype)


def _one_op(
    op_type: str, schema: str, target: Any, samples: Callable[[], list[Sample]], *, promote: bool = False, io: tuple[str, str] = ("x", "y")
) -> None:
    """Register a converter TorchAir writes as ``ge.<op_type>(self)``; with ``promote`` it
    first brings ``self`` to the output dtype (``dtype_promote``)."""

    def convert(self: ge.Tensor, *, out: Any = None, meta_outputs: Any = None) -> ge.Tensor:
        x = dtype_promote(output_dtype(meta_outputs), self) if promote else self
        return ge.op(op_type, {io[0]: x}, outputs=(io[1],))[0]

    convert.__doc__ = schema
    convert.__name__ = convert.__qualname__ = f"convert_{schema.split('(')[0].replace('.', '_')}"
    register_converter(target, samples=samples)(convert)


def _out(*shape: int) -> dict[str, torch.Tensor]:
    return {"out": torch.empty(*shape)}


_one_op(
    "Acos",
    "acos(Tensor self) -> Tensor",
    aten.acos.default,
    lambda: [Sample((_in(-0.9, 0.9, 2, 3),)), Sample((_in(-0.9, 0.9, 4, dtype=torch.half),))],
)
_one_op("Acosh", "acosh(Tensor self) -> Tensor", aten.acosh.default, lambda: [Sample((_in(1.1, 4.0, 2, 3),))])
_one_op(
    "Asin",
    "asin(Tensor self) -> Tensor",
    aten.asin.default,
    lambda: [Sample((_in(-0.9, 0.9, 2, 3),)), Sample((torch.tensor([0, 1, -1]),))],
    promote=True,
)
_one_op(
    "Asinh",
    "asinh(Tensor self) -> Tensor",
    aten.asinh.default,
    lambda: [Sample((torch.randn(2, 3) * 3,)), Sample((torch.tensor([0, 2, -3]),))],
    promote=True,
)
_one_op("Atan", "atan(Tensor self) -> Tensor", aten.atan.default, lambda: [Sample((torch.randn(2, 3) * 3,))])
_one_op("Atanh", "atanh(Tensor self) -> Tensor", aten.atanh.default, lambda: [Sample((_in(-0.9, 0.9, 2, 3),))])
_one_op("Cosh", "cosh(Tensor self) -> Tensor", aten.cosh.default, lambda: [Sample((torch.randn(2, 3),))])
_one_op("Sinh", "sinh(Tensor self) -> Tensor", aten.sinh.default, lambda: [Sample((torch.randn(2, 3),))])
_one_op("Sign", "sgn(Tensor self) -> Tensor", aten.sgn.default, lambda: [Sample((torch.randn(2, 3),)), Sample((torch.tensor([3, 0, -2]),))])
_one_op(
    "Erfinv", "erfinv(Tensor self) -> Tensor", aten.erfinv.default, lambda: [Sample((_in(-0.9, 0.9, 2, 3),))], io=("input_x", "output_y")
)
_one_op(
    "Erfinv",
    "erfinv.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    aten.erfinv.out,
    lambda: [Sample((_in(-0.9, 0.9, 2, 3),), _out(2, 3))],
    io=("input_x", "output_y"),
)
_one_op(
    "Expm1", "expm1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", aten.expm1.out, lambda: [Sample((torch.randn(2, 3),), _out(2, 3))]
)
_one_op("Mish", "mish.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", aten.mish.out, lambda: [Sample((torch.randn(2, 3),), _out(2, 3))])
_one_op(
    "ZerosLike",
    "zero(Tensor self) -> Tensor",
    aten.zero.default,
    lambda: [Sample((torch.randn(2, 3),)), Sample((torch.randint(0, 5, (4,)),))],
)


# -- binary ---------------------------------------------------------------------------
def _pair(dtype: torch.dtype = torch.float32) -> Sample:
    return Sample((torch.randn(2, 3).to(dtype), torch.randn(2, 3).to(dtype)))


def _prims_binary(op_type: str, name: str, target: Any) -> None:
    def convert(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
        return ge.op1(op_type, {"x1": self, "x2": other}, dtypes=DataType.DT_BOOL if op_type.startswith("Less") else None)

    convert.__doc__ = f"{name}(Tensor self, Tensor other) -> Tensor"
    convert.__name__ = convert.__qualname__ = f"convert_prims_{name}"
    register_converter(target, samples=lambda: [_pair(), Sample((torch.randint(-5, 5, (4,)), torch.randint(-5, 5, (4,))))])(convert)


for _type, _name in (("Add", "add"), ("Mul", "mul"), ("Maximum", "maximum"), ("Minimum", "minimum"), ("LessEqual", "le"), ("Less", "lt")):
    _prims_binary(_type, _name, getattr(prims, _name).default)


@register_converter(aten.less.Tensor, samples=lambda: [_pair(), Sample((torch.randn(4), torch.randint(-2, 2, (4,))))])
def convert_less_tensor(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """less.Tensor(Tensor self, Tensor other) -> Tensor"""
    if self.dtype != other.dtype:
        other = dtype_promote(self.dtype, other)
    return ge.op1("Less", {"x1": self, "x2": other}, dtypes=DataType.DT_BOOL)


# -- with scalars ---------------------------------------------------------------------
@register_converter(
    aten.lerp.Scalar,
    samples=lambda: [Sample((torch.randn(2, 3), torch.randn(2, 3), 0.3)), Sample((torch.randn(4).half(), torch.randn(4).half(), 0.5))],
)
def convert_lerp_scalar(self: ge.Tensor, end: ge.Tensor, weight: Any, meta_outputs: Any = None) -> ge.Tensor:
    """lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor"""
    return ge.op1("Lerp", {"start": self, "end": end, "weight": scalar_input(weight, self, end)})


def _addc_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 3), torch.randn(2, 3), torch.rand(2, 3) + 0.5)),
        Sample((torch.randn(2, 3), torch.randn(3), torch.rand(2, 1) + 0.5), {"value": 0.5}),
        Sample((torch.randn(4).half(), torch.randn(4).half(), torch.rand(4).half() + 0.5), {"value": 2}),
    ]


def _addc(op_type: str, self: ge.Tensor, tensor1: ge.Tensor, tensor2: ge.Tensor, value: Any, meta_outputs: Any) -> ge.Tensor:
    x, t1, t2, v = dtype_promote(output_dtype(meta_outputs), self, tensor1, tensor2, value)
    return ge.op1(op_type, {"input_data": x, "x1": t1, "x2": t2, "value": v})


@register_converter(aten.addcmul.default, samples=_addc_samples)
def convert_addcmul(self: ge.Tensor, tensor1: ge.Tensor, tensor2: ge.Tensor, *, value: Any = 1, meta_outputs: Any = None) -> ge.Tensor:
    """addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor"""
    return _addc("Addcmul", self, tensor1, tensor2, value, meta_outputs)


@register_converter(aten.addcdiv.default, samples=_addc_samples)
def convert_addcdiv(self: ge.Tensor, tensor1: ge.Tensor, tensor2: ge.Tensor, *, value: Any = 1, meta_outputs: Any = None) -> ge.Tensor:
    """addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor"""
    return _addc("Addcdiv", self, tensor1, tensor2, value, meta_outputs)


def _nan_samples() -> list[Sample]:
    x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), -2.5])
    return [Sample((x.clone(), 0.0, 100.0, -100.0)), Sample((x.clone(), 1.5, 9.0, -9.0))]


def _nan_to_num(self: ge.Tensor, nan: float | None, posinf: float | None, neginf: float | None) -> ge.Tensor:
    if nan is None or posinf is None or neginf is None:
        # TorchAir hands the missing values to float attrs, which protobuf refuses.
        raise NotImplementedError(
            "nan_to_num is converted only with nan, posinf and neginf all given (TorchAir's converter sets GE's float attrs from "
            "them and fails on None). Fix: give all three, e.g. torch.nan_to_num(x, nan=0.0, posinf=torch.finfo(x.dtype).max, "
            "neginf=torch.finfo(x.dtype).min), which is what nan_to_num does when they are left out"
        )
    return ge.op1("NanToNum", {"x": self}, {"nan": float(nan), "posinf": float(posinf), "neginf": float(neginf)})


@register_converter(aten.nan_to_num.default, samples=_nan_samples)
def convert_nan_to_num(
    self: ge.Tensor, nan: float | None = None, posinf: float | None = None, neginf: float | None = None, meta_outputs: Any = None
) -> ge.Tensor:
    """nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor"""
    return _nan_to_num(self, nan, posinf, neginf)


@register_converter(aten.nan_to_num.out, samples=lambda: [Sample(s.args, _out(5)) for s in _nan_samples()])
def convert_nan_to_num_out(
    self: ge.Tensor,
    nan: float | None = None,
    posinf: float | None = None,
    neginf: float | None = None,
    *,
    out: Any = None,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """nan_to_num.out(Tensor self, float? nan=None, float? posinf=None, float? neginf=None, *, Tensor(a!) out) -> Tensor(a!)"""
    return _nan_to_num(self, nan, posinf, neginf)


@register_converter(
    aten.threshold.default, samples=lambda: [Sample((torch.randn(3, 4), 0.1, 20.0)), Sample((torch.randint(-5, 5, (6,)), 1, -1))]
)
def convert_threshold(self: ge.Tensor, threshold: Any, value: Any, meta_outputs: Any = None) -> ge.Tensor:
    """threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor"""
    inputs = {"x": self, "threshold": scalar_input(threshold, self), "value": scalar_input(value, self)}
    return ge.op1("ThresholdV2", inputs)


# -- activations ----------------------------------------------------------------------
def _prelu_samples() -> list[Sample]:
    return [Sample((torch.randn(2, 3, 4), torch.rand(3))), Sample((torch.randn(2, 3), torch.rand(1)))]


# ATen's prelu hands its kernel the weight already shaped to broadcast over channels.
@register_converter(
    aten._prelu_kernel.default,
    samples=lambda: [Sample((torch.randn(2, 3, 4), torch.rand(3, 1))), Sample((torch.randn(2, 3), torch.rand(1)))],
)
def convert_prelu_kernel(self: ge.Tensor, weight: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """_prelu_kernel(Tensor self, Tensor weight) -> Tensor"""
    return ge.op1("PRelu", {"x": self, "weight": weight})


@register_converter(aten.prelu.default, samples=_prelu_samples)
def convert_prelu(self: ge.Tensor, weight: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """prelu(Tensor self, Tensor weight) -> Tensor"""
    return ge.op1("PRelu", {"x": self, "weight": weight})


@register_converter(aten.glu.default, samples=lambda: [Sample((torch.randn(2, 6),)), Sample((torch.randn(4, 3), 0))])
def convert_glu(self: ge.Tensor, dim: int = -1, meta_outputs: Any = None) -> ge.Tensor:
    """glu(Tensor self, int dim=-1) -> Tensor"""
    if self.rank < 1:
        raise NotImplementedError("glu of a 0-dimensional tensor has no GE mapping")
    return ge.op1("GLU", {"x": self}, {"dim": dim})


def _log_sigmoid(self: ge.Tensor) -> list[ge.Tensor]:
    # The buffer ATen returns is unused on NPU; TorchAir passes the input through.
    return [ge.op1("LogSigmoid", {"x": self}), identity(self)]


@register_converter(aten.log_sigmoid_forward.default, samples=lambda: [Sample((torch.randn(2, 3),))])
def convert_log_sigmoid_forward(self: ge.Tensor, meta_outputs: Any = None) -> list[ge.Tensor]:
    """log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)"""
    return _log_sigmoid(self)


@register_converter(
    aten.log_sigmoid_forward.output, samples=lambda: [Sample((torch.randn(2, 3),), {"output": torch.empty(2, 3), "buffer": torch.empty(0)})]
)
def convert_log_sigmoid_forward_output(
    self: ge.Tensor, *, output: Any = None, buffer: Any = None, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """log_sigmoid_forward.output(Tensor self, *, Tensor(a!) output, Tensor(b!) buffer) -> (Tensor(a!), Tensor(b!))"""
    return _log_sigmoid(self)


# -- reductions -----------------------------------------------------------------------
def _logsumexp_samples() -> list[Sample]:
    x = torch.randn(2, 3, 4)
    x[0, 0, 0] = float("inf")
    return [Sample((torch.randn(2, 3, 4), [1])), Sample((x, [0, 2], True)), Sample((torch.randn(3, 4).half(), [-1]))]


@register_converter(aten.logsumexp.default, samples=_logsumexp_samples)
def convert_logsumexp(self: ge.Tensor, dim: Any, keepdim: bool = False, meta_outputs: Any = None) -> ge.Tensor:
    """logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor"""
    rank, target = self.rank, output_dtype(meta_outputs)
    x = dtype_promote(target, self)
    axes = dtype_promote(DataType.DT_INT64, list(dim))
    maxes = ge.op1("ReduceMax", {"x": x, "axes": axes}, {"keep_dims": True})
    infinite = ge.op1("Equal", {"x1": ge.op1("Abs", {"x": maxes}), "x2": ge.const(float("inf"), target)}, dtypes=DataType.DT_BOOL)
    # A row whose max is infinite subtracts 0 instead (inf - inf would be NaN).
    maxes = ge.op1("MaskedFill", {"x": maxes, "mask": infinite, "value": ge.const(0.0)})
    kept = maxes if keepdim else squeeze(maxes, _squeeze_dims(list(dim), rank))
    shifted = ge.op1("Sub", {"x1": x, "x2": maxes})
    result = ge.op1("ReduceLogSumExp", {"x": shifted, "axes": axes}, {"keep_dims": keepdim})
    return ge.op1("Add", {"x1": result, "x2": kept})


def _squeeze_dims(dims: list[int], rank: int) -> list[int]:
    return [d + rank if d < 0 else d for d in dims] if dims else list(range(rank))


# -- in-place forms TorchAir converts (they return the result; nothing is written back) --
@register_converter(aten.masked_fill_.Scalar, samples=lambda: [Sample((torch.randn(3, 4), torch.rand(3, 4) > 0.5, -1.5))])
def convert_masked_fill__scalar(self: ge.Tensor, mask: ge.Tensor, value: Any, meta_outputs: Any = None) -> ge.Tensor:
    """masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)"""
    return ge.op1("MaskedFill", {"x": self, "mask": mask, "value": scalar_input(value, self, mask)})


@register_converter(aten.bitwise_right_shift_.Tensor, samples=lambda: [Sample((torch.randint(0, 256, (6,)), torch.randint(0, 4, (6,))))])
def convert_bitwise_right_shift__tensor(self: ge.Tensor, other: ge.Tensor, meta_outputs: Any = None) -> ge.Tensor:
    """bitwise_right_shift_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)"""
    return ge.op1("RightShift", {"x": self, "y": other})
