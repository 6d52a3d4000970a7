"""How TorchAir's torch_npu converters write their GE ops, shared by the npu_* families.

TorchAir generates its op builders from GE's prototypes in two styles. The older one
writes every input of the prototype, an absent optional input as an empty one, and every
attr: that is :func:`fxlab.ir.ge.op` with ``None`` for the absent inputs. The newer one
(``ge_op`` with the op's ``IrDef``) leaves out every absent optional input and every attr
equal to the ``IrDef``'s default: :func:`ir_op`. Which style an op has is a fact of
TorchAir's generated builders; each converter uses its op's.

Also here: torch_npu's dtype codes (``int? dst_type`` arguments carry torch's
ScalarType numbers, and torch_npu's own for its extra types) as GE types, the
``Bitcast`` a converter uses to view a tensor as another type, and the refusal of
arguments TorchAir's converter raises on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from fxlab.ir import ge
from fxlab.ir.builder import current_builder
from fxlab.ir.model import Attr, AttrKind, DataType, TensorDesc, TensorValue
from fxlab.passes.torchair_refusals import RefusedLikeTorchAir

# torch's ScalarType numbers and torch_npu's codes for its extra types -> GE types.
NPU_DTYPE_CODES: dict[int, DataType] = {
    0: DataType.DT_UINT8,
    1: DataType.DT_INT8,
    2: DataType.DT_INT16,
    3: DataType.DT_INT32,
    4: DataType.DT_INT64,
    5: DataType.DT_FLOAT16,
    6: DataType.DT_FLOAT,
    7: DataType.DT_DOUBLE,
    11: DataType.DT_BOOL,
    15: DataType.DT_BF16,
    16: DataType.DT_INT4,  # torch.quint4x2
    23: DataType.DT_FLOAT8_E5M2,
    24: DataType.DT_FLOAT8_E4M3FN,
    285: DataType.DT_INT4,
    290: DataType.DT_HIFLOAT8,
    291: DataType.DT_FLOAT8_E5M2,
    292: DataType.DT_FLOAT8_E4M3FN,
    293: DataType.DT_FLOAT8_E8M0,
    296: DataType.DT_FLOAT4_E2M1,
    297: DataType.DT_FLOAT4_E1M2,
}
# torch_npu's codes of its packed 4-bit float types (two values per byte).
FLOAT4_CODES = (296, 297)
HIFLOAT8_CODE = 290
FLOAT8_E8M0_CODE = 293


def npu_dtype(code: int) -> DataType:
    """The GE type of a dtype code; an unknown code fails as TorchAir's mapping does."""
    found = NPU_DTYPE_CODES.get(int(code))
    if found is None:
        raise RuntimeError(f"Unsupported torch dtype value {code} by ge")
    return found


def ir_op(
    op_type: str,
    inputs: Mapping[str, ge.Tensor | None],
    attrs: Mapping[str, Any],
    defaults: Mapping[str, Any],
    outputs: Sequence[str] = ("y",),
    dependencies: Sequence[ge.Tensor] = (),
) -> list[ge.Tensor]:
    """An op as TorchAir's ``IrDef`` builders write it: absent inputs left out, attrs
    equal to their ``defaults`` (the ``IrDef``'s) left out."""
    kept_inputs = {name: tensor for name, tensor in inputs.items() if tensor is not None}
    kept_attrs = {name: value for name, value in attrs.items() if name not in defaults or not _same(value, defaults[name])}
    return ge.op(op_type, kept_inputs, kept_attrs, outputs=outputs, dependencies=dependencies)


def _same(value: Any, default: Any) -> bool:
    if isinstance(default, (list, tuple)):
        return isinstance(value, (list, tuple)) and list(value) == list(default)
    return value == default


def bitcast(x: ge.Tensor, dtype: DataType, *, keep_dim: bool = False) -> ge.Tensor:
    """``Bitcast`` (an ``IrDef`` builder: ``keep_dim`` written only when set)."""
    return ir_op("Bitcast", {"x": x}, {"type": dtype, "keep_dim": keep_dim}, {"keep_dim": False})[0]


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
