"""``ge.*``: the calls converters use to create GE ops in the current graph.

Kept small on purpose: ``op`` creates any op type, and the helpers below are the few
patterns TorchAir's converters share (scalars as ``Const``, dtype promotion as ``Cast``).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping, Sequence

import torch

from fxlab.ir.builder import SYMBOLIC_SHAPE_ATTR, InputSpec, Tensor, current_builder
from fxlab.ir.model import TORCHAIR_DTYPE_NUMBER, Attr, AttrKind, DataType, TensorDesc, TensorValue, ge_dtype, torch_dtype

__all__ = [
    "Tensor",
    "DataType",
    "op",
    "op1",
    "const",
    "cast",
    "cast_to",
    "promote",
    "dtype_of",
    "set_dtype",
    "desc_from_meta",
    "keep_to_the_end",
]


def op(
    op_type: str,
    inputs: InputSpec = (),
    attrs: Mapping[str, Any] | None = None,
    outputs: Sequence[str] | int = ("y",),
    **kwargs: Any,
) -> list[Tensor]:
    """Create one op of ``op_type`` in the current graph; a handle per output."""
    return current_builder().add_op(op_type, inputs, attrs, outputs, **kwargs)


def op1(op_type: str, inputs: InputSpec = (), attrs: Mapping[str, Any] | None = None, **kwargs: Any) -> Tensor:
    """Create a single-output op and return its output."""
    return current_builder().add_op(op_type, inputs, attrs, ("y",), **kwargs)[0]


def keep_to_the_end(tensor: Tensor) -> Tensor:
    """Keep ``tensor``'s op in the graph although nothing may read it (a collective that
    must meet its peers): a control edge into the graph's ``NetOutput``, as TorchAir's
    ``dont_prune_me`` makes."""
    current_builder().must_keep.append(tensor)
    return tensor


def set_dtype(tensor: Tensor, dtype: DataType | torch.dtype) -> Tensor:
    """Write ``dtype`` on a helper output's desc for good, where TorchAir's converter sets
    it itself (``set_meta``/``desc.dtype``); helper outputs are otherwise left unset."""
    return current_builder().set_dtype(tensor, ge_dtype(dtype) if isinstance(dtype, torch.dtype) else dtype)


def const(value: Any, dtype: DataType | torch.dtype | None = None) -> Tensor:
    """A ``Const`` op holding ``value`` (a Python scalar, list, or tensor).

    Every ``Const`` keeps a ``_readable_value`` attr (the value's ``repr``) as TorchAir
    writes it, so dumps show the number and not only its bytes.
    """
    if isinstance(dtype, torch.dtype):
        dtype = ge_dtype(dtype)
    key = _const_key(value, dtype)
    entry = _CONST_ATTRS.get(key) if key is not None else None
    if entry is None:
        entry = _const_attrs(value, dtype)
        if key is not None:
            if len(_CONST_ATTRS) >= _CONST_CACHE_LIMIT:
                _CONST_ATTRS.clear()
            _CONST_ATTRS[key] = entry
    attrs, out_dtype, shape = entry
    return current_builder().add_constant_op("Const", attrs, out_dtype, shape)


# The attrs of Python-valued constants, built once per distinct value: making a tensor
# and copying its bytes costs far more than the op itself, and converters ask for the
# same few constants (axes, perms, shapes, 1.0) over and over. The attrs are immutable
# and shared; every op still gets its own attrs dict.
_ConstEntry = tuple[dict[str, Attr], DataType, tuple[int, ...]]
_CONST_ATTRS: dict[tuple[Any, ...], _ConstEntry] = {}
_CONST_CACHE_LIMIT = 4096
_PLAIN_SCALARS = frozenset({int, float, bool})


def _const_key(value: Any, dtype: DataType | None) -> tuple[Any, ...] | None:
    """A cache key for plain scalars and flat lists of them; ``repr`` tells ``1``,
    ``1.0``, ``True`` and ``-0.0`` apart. NaNs (whose sign ``repr`` hides) and every
    other value are not cached."""
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        if value != value:
            return None
    elif isinstance(value, (list, tuple)):  # FX hands lists over as immutable_list
        kinds = set(map(type, value))
        if not _PLAIN_SCALARS.issuperset(kinds) or (float in kinds and any(v != v for v in value)):
            return None
    else:
        return None
    return (dtype, repr(value))


def _const_attrs(value: Any, dtype: DataType | None) -> _ConstEntry:
    tensor = _as_tensor(value, dtype)
    # TorchAir's ``Const`` writes the repr of the value it was given, tensors included.
    attrs = {"value": Attr(AttrKind.TENSOR, TensorValue.from_torch(tensor)), "_readable_value": Attr(AttrKind.STR, repr(value))}
    return attrs, ge_dtype(tensor.dtype), tuple(tensor.shape)


def _as_tensor(value: Any, dtype: DataType | None) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value if dtype is None else value.to(torch_dtype(dtype))
    target = torch_dtype(dtype) if dtype is not None else None
    if target is None:
        target = _default_scalar_dtype(value)
    return torch.tensor(value, dtype=target)


def _default_scalar_dtype(value: Any) -> torch.dtype:
    probe = value
    while isinstance(probe, (list, tuple)) and probe:
        probe = probe[0]
    if isinstance(probe, bool):
        return torch.bool
    if isinstance(probe, int):
        return torch.int64
    return torch.float32


def cast(x: Tensor, dst: DataType) -> Tensor:
    """``Cast(x)`` to ``dst``; ``dst_type`` carries TorchAir's dtype number."""
    return op1("Cast", {"x": x}, {"dst_type": TORCHAIR_DTYPE_NUMBER[dst]}, dtypes=dst, shapes=[x.shape])


def cast_to(x: Tensor, dst: DataType) -> Tensor:
    """``x`` itself when it already has type ``dst``, else a ``Cast``."""
    return x if x.dtype == dst else cast(x, dst)


def dtype_of(value: Any) -> DataType:
    if isinstance(value, Tensor):
        return value.dtype
    if isinstance(value, torch.Tensor):
        return ge_dtype(value.dtype)
    return ge_dtype(_default_scalar_dtype(value))


def promote(target: DataType, *values: Any) -> list[Tensor]:
    """Bring every operand to ``target``: tensors are cast when their type differs,
    Python scalars become ``Const`` ops of that type (TorchAir's dtype promotion)."""
    out = []
    for value in values:
        if isinstance(value, Tensor):
            out.append(cast_to(value, target))
        else:
            out.append(const(value, target))
    return out


_ONLY_INT = frozenset({int})


def static_dim(d: Any) -> int | None:
    """A size as TorchAir's Data descs take it: an int, or a symbolic size that reads as
    one (a symbol the shape environment has since fixed); ``None`` when it is symbolic."""
    if isinstance(d, int):
        return d
    try:
        return int(str(d))
    except ValueError:
        return None


def desc_from_meta(val: Any, name: str = "y") -> TensorDesc:
    """A tensor desc from an FX node's fake value; symbolic dims become ``-1`` and the
    symbols are kept in ``_fxlab_symbolic_shape``."""
    if not isinstance(val, torch.Tensor):
        if isinstance(val, (torch.SymInt, int)):
            return TensorDesc(name, DataType.DT_INT64, ())
        if isinstance(val, (torch.SymFloat, float)):
            return TensorDesc(name, DataType.DT_FLOAT, ())
        return TensorDesc(name)
    shape = tuple(val.shape)
    if _ONLY_INT.issuperset(map(type, shape)):  # static: the common case
        return TensorDesc(name, ge_dtype(val.dtype), shape)
    dims = [static_dim(d) for d in shape]
    desc = TensorDesc(name, ge_dtype(val.dtype), tuple(-1 if d is None else d for d in dims))
    if None in dims:
        desc.attrs[SYMBOLIC_SHAPE_ATTR] = Attr(AttrKind.STR, str(list(val.shape)))
    return desc
