"""How TorchAir's torch_npu converters write their GE ops, shared by the npu_* families.

TorchAir generates one Python wrapper per GE op, from GE's prototypes, in two styles.
The older one writes every attr and an empty input for every absent optional input
(some inputs, added to a prototype later, are left out when absent): that is
:func:`fxlab.ir.ge.op` with ``None`` for the absent inputs. The newer one (``ge_op`` with
the op's ``IrDef``) leaves out every absent optional input and every attr equal to the
``IrDef``'s default: :func:`compact_op`. Which style an op has is a fact of TorchAir's
generated wrappers; each converter uses its op's.

Also here: torch_npu's dtype arguments (torch's ScalarType numbers, and torch_npu's own
values for its extra types; :mod:`fxlab.ir.npu_dtypes`) as GE types, lengths as int64
inputs, the ``Bitcast`` and int4/float4 repacking a converter uses to view a tensor as
another type, and the refusal of arguments TorchAir's converter raises on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from fxlab.ir import ge
from fxlab.ir.builder import current_builder
from fxlab.ir.model import Attr, AttrKind, DataType, TensorDesc, TensorValue
from fxlab.ir.npu_dtypes import ge_dtype_of_code
from fxlab.passes.torchair_refusals import RefusedLikeTorchAir


def npu_dtype(code: int) -> DataType:
    """The GE type of a dtype argument's value; an unknown value fails as TorchAir's
    mapping does."""
    found = ge_dtype_of_code(int(code))
    if found is None:
        raise RuntimeError(f"Unsupported torch dtype value {code} by ge")
    return found


def compact_op(
    op_type: str,
    inputs: Mapping[str, ge.Tensor | Sequence[ge.Tensor] | None],
    attrs: Mapping[str, Any],
    defaults: Mapping[str, Any],
    outputs: Sequence[str] | int = ("y",),
    **kwargs: Any,
) -> list[ge.Tensor]:
    """``op_type`` as TorchAir's ``ge_op`` wrappers make it: absent inputs left out, a
    list input spread as ``name0, name1, ...``, attrs equal to ``defaults`` left out."""
    named: dict[str, Any] = {}
    for name, value in inputs.items():
        if isinstance(value, (list, tuple)):
            named.update({f"{name}{i}": t for i, t in enumerate(value)})
        elif value is not None:
            named[name] = value
    written = {k: v for k, v in attrs.items() if k not in defaults or not _same(v, defaults[k])}
    return ge.op(op_type, named, written, outputs=outputs, **kwargs)


def _same(value: Any, default: Any) -> bool:
    """Whether an attr equals its prototype default, as TorchAir compares its attr
    wrappers (the value, and the attr's type: ``True`` is no Int ``1``)."""
    if isinstance(default, (list, tuple)) or isinstance(value, (list, tuple)):
        return isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)) and list(value) == list(default)
    if isinstance(default, float) or isinstance(value, float):
        return float(value) == float(default)
    return bool(value == default) and type(value) is type(default)


def int64_input(value: Any) -> ge.Tensor | None:
    """A length list or tensor as TorchAir's ``dtype_promote(..., DT_INT64)`` gives it: a
    list becomes an int64 ``Const``, a tensor of another type a ``Cast``."""
    if value is None:
        return None
    if isinstance(value, ge.Tensor):
        return ge.cast_to(value, DataType.DT_INT64)
    return ge.const([int(v) for v in value], DataType.DT_INT64)


def tensor_move(x: ge.Tensor) -> ge.Tensor:
    """A copy of ``x`` into new memory: TorchAir's guard before an op that writes its input."""
    return ge.op1("TensorMove", {"x": x})


def bitcast(x: ge.Tensor, dtype: DataType, *, keep_dim: bool = False) -> ge.Tensor:
    """``Bitcast`` (an ``IrDef`` builder: ``keep_dim`` written only when set)."""
    return compact_op("Bitcast", {"x": x}, {"type": dtype, "keep_dim": keep_dim}, {"keep_dim": False})[0]


def viewed_as(x: ge.Tensor, code: int, *, cast: bool = True) -> ge.Tensor:
    """``x`` read as torch_npu dtype ``code``: a ``Bitcast`` (unless ``cast`` is off, for
    the packed 4-bit types TorchAir only relabels) and the output desc's type set by hand,
    as TorchAir's converters do for a ``x_dtype=``-style argument."""
    if cast:
        x = bitcast(x, npu_dtype(code))
    return ge.set_dtype(x, npu_dtype(code))


def packed(
    y: ge.Tensor,
    rank: int,
    per_item: int,
    dtype: DataType,
    *,
    cast_consts: bool = False,
    shape_first: bool = False,
    divisor: ge.Tensor | None = None,
) -> ge.Tensor:
    """TorchAir's repacking of a rank-``rank`` int4/float4 result into ``dtype`` items
    of ``per_item`` values each: its shape with the last dim divided by ``per_item``, a
    trailing ``per_item`` dim, a ``Bitcast`` and the divided shape. Some converters make
    the int32 shape constants directly, others as a ``Cast`` of int64 ones
    (``cast_consts``); one takes the ``Shape`` before making the divisor (``shape_first``),
    one shares a ``divisor`` between two results."""

    def int32_const(value: list[int]) -> ge.Tensor:
        return ge.cast(ge.const(value), DataType.DT_INT32) if cast_consts else ge.const(value, DataType.DT_INT32)

    shape = ge.op1("Shape", {"x": y}, {"dtype": 3}) if shape_first else None
    divisor = divisor if divisor is not None else int32_const([1] * (rank - 1) + [per_item])
    shape = shape if shape is not None else ge.op1("Shape", {"x": y}, {"dtype": 3})
    packed_shape = ge.op1("Div", {"x1": shape, "x2": divisor})
    pieces = {"x0": packed_shape, "x1": int32_const([per_item]), "concat_dim": ge.const(0)}
    split = ge.op1("ConcatV2", pieces, {"N": 2})
    return _reshape(bitcast(_reshape(y, split), dtype), packed_shape)


def widened(x: ge.Tensor, factor: int, dtype: DataType, *, labelled: bool = False, cast_consts: bool = False) -> ge.Tensor:
    """TorchAir's view of packed values as ``dtype``: the shape's last dim times
    ``factor`` (a ``Mul`` of the ``Shape`` by an int64 constant, or by an int32 ``Cast`` of
    it with ``cast_consts``), a ``Bitcast`` (its output desc typed by hand when
    ``labelled``) and a ``Reshape``."""
    multiplier = ge.const([1] * (x.rank - 1) + [factor])
    if cast_consts:
        multiplier = ge.cast(multiplier, DataType.DT_INT32)
    wide_shape = ge.op1("Mul", {"x1": ge.op1("Shape", {"x": x}, {"dtype": 3}), "x2": multiplier})
    cast = bitcast(x, dtype)
    return _reshape(ge.set_dtype(cast, dtype) if labelled else cast, wide_shape)


def _reshape(x: ge.Tensor, shape: ge.Tensor) -> ge.Tensor:
    return ge.op1("Reshape", {"x": x, "shape": shape}, {"axis": 0, "num_axes": -1})


def empty_const(dtype: DataType) -> ge.Tensor:
    """An empty ``Const`` of ``dtype``, also of types torch has no counterpart for (int4)."""
    if dtype in (DataType.DT_INT4,):
        value = TensorValue(TensorDesc("", dtype, (0,)), b"")
        attrs = {"value": Attr(AttrKind.TENSOR, value), "_readable_value": Attr(AttrKind.STR, "[]")}
        return current_builder().add_constant_op("Const", attrs, dtype, (0,))
    return ge.const([], dtype)


def refuse(reason: str, where: str) -> NoReturn:
    """Refuse the node as TorchAir's converter does for these arguments: ``reason`` is
    its exception and message, ``where`` its file (and line) under ``ge_converter/``."""
    raise RefusedLikeTorchAir(reason, where)
