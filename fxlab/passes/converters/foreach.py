"""``_foreach_*`` converters: one GE ``Foreach*`` op over the whole tensor list, as TorchAir
converts the optimizer steps of training graphs.

A list input becomes GE dynamic inputs (``x0``, ``x1``, ... or ``x10``, ``x11``, ... for an
input named ``x1``), the results the dynamic outputs ``y0``, ``y1``, .... A Python scalar
takes the dtype of the first tensor (float for bfloat16), as TorchAir's
``dtype_promote`` gives it; ceil, floor, round, trunc and frac share
``ForeachRoundOffNumber`` with a rounding-mode input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.converters.promotion import cast_scalar, dtype_promote, scalar_input
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten
# ForeachRoundOffNumber's rounding modes.
ROUND_MODES = {"floor": 2, "ceil": 3, "round": 4, "trunc": 5, "frac": 7}


def _tensors(count: int = 3, low: float = -2.0, high: float = 2.0, dtype: torch.dtype = torch.float32) -> list[torch.Tensor]:
    shapes = [(2, 3), (4,), (1, 2, 2)][:count]
    return [(torch.rand(*s) * (high - low) + low).to(dtype) for s in shapes]


def _dynamic(name: str, tensors: Sequence[ge.Tensor]) -> dict[str, ge.Tensor]:
    return {f"{name}{i}": t for i, t in enumerate(tensors)}


def foreach(op_type: str, *lists: tuple[str, Sequence[ge.Tensor]], count: int, **single: ge.Tensor) -> list[ge.Tensor]:
    """One ``Foreach*`` op: the dynamic ``lists``, then the ``single`` inputs; one output
    per tensor of the list."""
    inputs: dict[str, ge.Tensor] = {}
    for name, tensors in lists:
        inputs.update(_dynamic(name, tensors))
    inputs.update(single)
    return ge.op(op_type, inputs, outputs=[f"y{i}" for i in range(count)])


def _scalar_dtype(tensors: Sequence[ge.Tensor]) -> DataType:
    return DataType.DT_FLOAT if tensors[0].dtype == DataType.DT_BF16 else tensors[0].dtype


def _typed_scalar(value: Any, tensors: Sequence[ge.Tensor]) -> ge.Tensor:
    return dtype_promote(_scalar_dtype(tensors), value) if tensors else value


def _scalar_list(scalars: Any, tensors: Sequence[ge.Tensor], int64_for_ints: bool) -> ge.Tensor:
    if isinstance(scalars, ge.Tensor):
        return scalars
    if int64_for_ints and scalars and isinstance(scalars[0], int):
        return dtype_promote(DataType.DT_INT64, list(scalars))
    return scalar_input(list(scalars), *tensors)


def _register(target: Any, schema: str, samples: Callable[[], list[Sample]]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` for ``target``; its docstring is the overload's schema (``schema``
    names it)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__doc__ = str(target._schema).removeprefix("aten::")
        fn.__name__ = fn.__qualname__ = f"convert_{schema.split('(')[0].replace('.', '_')}"
        return register_converter(target, samples=samples)(fn)

    return decorate


# -- one list in ----------------------------------------------------------------------
_UNARY = {
    "abs": "ForeachAbs",
    "acos": "ForeachAcos",
    "asin": "ForeachAsin",
    "atan": "ForeachAtan",
    "cos": "ForeachCos",
    "cosh": "ForeachCosh",
    "erf": "ForeachErf",
    "erfc": "ForeachErfc",
    "exp": "ForeachExp",
    "expm1": "ForeachExpm1",
    "log": "ForeachLog",
    "log10": "ForeachLog10",
    "log1p": "ForeachLog1p",
    "log2": "ForeachLog2",
    "sigmoid": "ForeachSigmoid",
    "sin": "ForeachSin",
    "sinh": "ForeachSinh",
    "tan": "ForeachTan",
    "tanh": "ForeachTanh",
}
_POSITIVE = {"log", "log10", "log1p", "log2"}
_UNIT = {"acos", "asin"}


def _unary_samples(name: str) -> Callable[[], list[Sample]]:
    low, high = (0.1, 3.0) if name in _POSITIVE else (-0.9, 0.9) if name in _UNIT else (-2.0, 2.0)
    return lambda: [Sample((_tensors(3, low, high),)), Sample((_tensors(2, low, high, torch.half),))]


def _unary(name: str, op_type: str) -> None:
    def convert(self: Sequence[ge.Tensor], meta_outputs: Any = None) -> list[ge.Tensor]:
        # TorchAir's builders of ForeachAcos/Asin/Atan are named ForeachACos/ASin/ATan: it
        # takes those ops for custom ones and gives them an ``_inference_rule``.
        return foreach(op_type, ("x", self), count=len(self))

    _register(getattr(aten, f"_foreach_{name}").default, f"_foreach_{name}(Tensor[] self) -> Tensor[]", _unary_samples(name))(convert)


for _name, _type in _UNARY.items():
    _unary(_name, _type)


def _round_mode(mode: int) -> ge.Tensor:
    value = cast_scalar(mode, DataType.DT_INT8)  # made before the dims Const, as in TorchAir
    return ge.op1("Fill", {"dims": ge.const(1), "value": value}, dtypes=DataType.DT_INT8)


def _round_samples() -> list[Sample]:
    return [Sample(([t * 3 for t in _tensors(3)],))]


def _rounding(name: str, split_ints: bool) -> None:
    def convert(self: Sequence[ge.Tensor], meta_outputs: Any = None) -> list[ge.Tensor]:
        mode = _round_mode(ROUND_MODES[name])
        if not split_ints:
            return foreach("ForeachRoundOffNumber", ("x", self), count=len(self), roundMode=mode)
        floats = [t for t in self if t.dtype in (DataType.DT_FLOAT, DataType.DT_FLOAT16, DataType.DT_BF16, DataType.DT_DOUBLE)]
        if not floats:
            return list(self)
        rounded = iter(foreach("ForeachRoundOffNumber", ("x", floats), count=len(floats), roundMode=mode))
        # Integers are already whole: floor and round keep them, frac gives zeros.
        return [next(rounded) if t in floats else (ge.op1("ZerosLike", {"x": t}) if name == "frac" else t) for t in self]

    _register(getattr(aten, f"_foreach_{name}").default, f"_foreach_{name}(Tensor[] self) -> Tensor[]", _round_samples)(convert)


for _name in ("ceil", "trunc"):
    _rounding(_name, split_ints=False)
for _name in ("floor", "round", "frac"):
    _rounding(_name, split_ints=True)


# -- list and scalar ------------------------------------------------------------------
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "maximum": "Maximum", "minimum": "Minimum", "pow": "Pow"}


def _scalar(name: str, op_type: str) -> None:
    def convert(self: Sequence[ge.Tensor], scalar: Any, meta_outputs: Any = None) -> list[ge.Tensor]:
        return foreach(f"Foreach{op_type}Scalar", ("x", self), count=len(self), scalar=_typed_scalar(scalar, self))

    value = 2 if name == "pow" else 0.5
    samples = lambda: [Sample((_tensors(3, 0.5, 2.0), value)), Sample((_tensors(2, 0.5, 2.0, torch.half), 2))]  # noqa: E731
    arg = "exponent" if name == "pow" else "scalar"
    _register(getattr(aten, f"_foreach_{name}").Scalar, f"_foreach_{name}.Scalar(Tensor[] self, Scalar {arg}) -> Tensor[]", samples)(
        convert
    )


def _scalar_list_op(name: str, op_type: str) -> None:
    # TorchAir types integer scalar lists as int64 for add, sub, mul, maximum and minimum only.
    int64_for_ints = name in ("add", "sub", "mul", "maximum", "minimum")

    def convert(self: Sequence[ge.Tensor], scalars: Any, meta_outputs: Any = None) -> list[ge.Tensor]:
        return foreach(f"Foreach{op_type}ScalarList", ("x", self), count=len(self), scalars=_scalar_list(scalars, self, int64_for_ints))

    samples = lambda: [Sample((_tensors(3, 0.5, 2.0), [0.5, 1.5, 2.0]))]  # noqa: E731
    arg = "exponent" if name == "pow" else "scalars"
    _register(
        getattr(aten, f"_foreach_{name}").ScalarList, f"_foreach_{name}.ScalarList(Tensor[] self, Scalar[] {arg}) -> Tensor[]", samples
    )(convert)


def _list(name: str, op_type: str) -> None:
    with_alpha = name in ("add", "sub")

    def convert(self: Sequence[ge.Tensor], other: Sequence[ge.Tensor], *, alpha: Any = 1, meta_outputs: Any = None) -> list[ge.Tensor]:
        extra = {"alpha": _typed_scalar(alpha, self)} if with_alpha else {}
        return foreach(f"Foreach{op_type}List", ("x1", self), ("x2", other), count=len(self), **extra)

    def samples() -> list[Sample]:
        pairs = [Sample((_tensors(3, 0.5, 2.0), _tensors(3, 0.5, 2.0)))]
        return pairs + ([Sample((_tensors(2), _tensors(2)), {"alpha": 2})] if with_alpha else [])

    arg = "exponent" if name == "pow" else "other"
    tail = ", *, Scalar alpha=1" if with_alpha else ""
    _register(getattr(aten, f"_foreach_{name}").List, f"_foreach_{name}.List(Tensor[] self, Tensor[] {arg}{tail}) -> Tensor[]", samples)(
        convert
    )


for _name, _type in _BINARY.items():
    _scalar(_name, _type)
    _scalar_list_op(_name, _type)
    _list(_name, _type)


@_register(
    aten._foreach_pow.ScalarAndTensor,
    "_foreach_pow.ScalarAndTensor(Scalar self, Tensor[] exponent) -> Tensor[]",
    lambda: [Sample((2.0, _tensors(3)))],
)
def _convert_pow_scalar_and_tensor(self: Any, exponent: Sequence[ge.Tensor], meta_outputs: Any = None) -> list[ge.Tensor]:
    if isinstance(self, float):
        value = cast_scalar(self, DataType.DT_FLOAT)
        self = ge.op1("Fill", {"dims": ge.const([1]), "value": value}, dtypes=DataType.DT_FLOAT)
    base = scalar_input(self, *exponent)
    inputs = {"scalar": base, **_dynamic("x", exponent)}
    return ge.op("ForeachPowScalarAndTensor", inputs, outputs=[f"y{i}" for i in range(len(exponent))])


@_register(
    aten._foreach_norm.Scalar,
    "_foreach_norm.Scalar(Tensor[] self, Scalar ord=2, ScalarType? dtype=None) -> Tensor[]",
    lambda: [Sample((_tensors(3),)), Sample((_tensors(2), 1))],
)
def _convert_norm(self: Sequence[ge.Tensor], scalar: Any = 2, dtype: Any = None, meta_outputs: Any = None) -> list[ge.Tensor]:
    return foreach("ForeachNorm", ("x1", self), count=len(self), scalar=scalar_input(scalar, *self))


# -- lerp, addcmul, addcdiv -----------------------------------------------------------
@_register(
    aten._foreach_lerp.Scalar,
    "_foreach_lerp.Scalar(Tensor[] self, Tensor[] tensors1, Scalar weight) -> Tensor[]",
    lambda: [Sample((_tensors(3), _tensors(3), 0.3))],
)
def _convert_lerp_scalar(
    self: Sequence[ge.Tensor], tensors1: Sequence[ge.Tensor], weight: Any, meta_outputs: Any = None
) -> list[ge.Tensor]:
    return foreach("ForeachLerpScalar", ("x1", self), ("x2", tensors1), count=len(self), weight=scalar_input(weight, *self))


@_register(
    aten._foreach_lerp.List,
    "_foreach_lerp.List(Tensor[] self, Tensor[] tensors1, Tensor[] weights) -> Tensor[]",
    lambda: [Sample((_tensors(3), _tensors(3), _tensors(3, 0.0, 1.0)))],
)
def _convert_lerp_list(
    self: Sequence[ge.Tensor], tensors1: Sequence[ge.Tensor], weights: Sequence[ge.Tensor], meta_outputs: Any = None
) -> list[ge.Tensor]:
    return foreach("ForeachLerpList", ("x1", self), ("x2", tensors1), ("weight", weights), count=len(self))


def _addc_names(op: str, kind: str) -> tuple[str, str, str]:
    # ForeachAddcmulScalar(List) name their lists x1, x2, x3; the other variants x, x1, x2.
    return ("x1", "x2", "x3") if op == "Addcmul" and kind != "List" else ("x", "x1", "x2")


def _addc(op: str) -> None:
    name = op.lower()
    packet = getattr(aten, f"_foreach_{name}")
    divisor = lambda: _tensors(3, 0.5, 2.0)  # noqa: E731

    def scalar(
        self: Sequence[ge.Tensor], tensor1: Sequence[ge.Tensor], tensor2: Sequence[ge.Tensor], value: Any = 1, meta_outputs: Any = None
    ) -> list[ge.Tensor]:
        a, b, c = _addc_names(op, "Scalar")
        return foreach(f"Foreach{op}Scalar", (a, self), (b, tensor1), (c, tensor2), count=len(self), scalar=_typed_scalar(value, self))

    def scalar_list(
        self: Sequence[ge.Tensor], tensor1: Sequence[ge.Tensor], tensor2: Sequence[ge.Tensor], scalars: Any, meta_outputs: Any = None
    ) -> list[ge.Tensor]:
        a, b, c = _addc_names(op, "ScalarList")
        return foreach(
            f"Foreach{op}ScalarList", (a, self), (b, tensor1), (c, tensor2), count=len(self), scalar=_scalar_list(scalars, self, False)
        )

    def tensor(
        self: Sequence[ge.Tensor], tensor1: Sequence[ge.Tensor], tensor2: Sequence[ge.Tensor], scalars: ge.Tensor, meta_outputs: Any = None
    ) -> list[ge.Tensor]:
        a, b, c = _addc_names(op, "List")
        return foreach(f"Foreach{op}List", (a, self), (b, tensor1), (c, tensor2), count=len(self), scalar=scalars)

    head = f"_foreach_{name}.%s(Tensor[] self, Tensor[] tensor1, Tensor[] tensor2, %s) -> Tensor[]"
    _register(packet.Scalar, head % ("Scalar", "Scalar value=1"), lambda: [Sample((_tensors(3), _tensors(3), divisor(), 0.5))])(scalar)
    _register(
        packet.ScalarList,
        head % ("ScalarList", "Scalar[] scalars"),
        lambda: [Sample((_tensors(3), _tensors(3), divisor(), [0.5, 2.0, -1.0]))],
    )(scalar_list)
    _register(
        packet.Tensor,
        head % ("Tensor", "Tensor scalars"),
        lambda: [Sample((_tensors(3), _tensors(3), divisor(), torch.tensor([0.5, 2.0, -1.0])))],
    )(tensor)


_addc("Addcmul")
_addc("Addcdiv")
