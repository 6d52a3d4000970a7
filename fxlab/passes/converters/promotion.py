"""dtype promotion and scalar constants the way TorchAir's converters do them.

Two facts about TorchAir shape the GE graphs its converters build, and fxlab reproduces
them so its IR shows the same ops:

- A GE tensor's dtype is known to TorchAir only when it is the value of an FX node (a
  ``Data`` op or a converter's result, both stamped with the node's fake value). Any op
  output a converter creates along the way (including ``Const`` and ``Cast``) has an
  *undefined* dtype, so TorchAir's ``dtype_promote`` always puts a ``Cast`` after it,
  even to the type it already has. :func:`dtype_promote` does the same.
- When a GE op builder receives a Python number for a tensor input, it makes a ``Const``:
  index inputs (axes, dims, shapes) become ``DT_INT64``; other numbers take the one
  float (or integer) dtype among the op's *known* tensor inputs, else the default
  (float32 for floats, int64 for ints). :func:`scalar_input` and :func:`index_input`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.builder import current_builder
from fxlab.ir.model import DataType, ge_dtype, torch_dtype
from fxlab.passes.symbolic_lists import pack_sizes

FLOAT_TYPES = (DataType.DT_BF16, DataType.DT_FLOAT16, DataType.DT_FLOAT, DataType.DT_DOUBLE)
INT_TYPES = (DataType.DT_INT8, DataType.DT_UINT8, DataType.DT_INT32, DataType.DT_UINT32, DataType.DT_INT64)


def as_ge_dtype(dtype: DataType | torch.dtype) -> DataType:
    return dtype if isinstance(dtype, DataType) else ge_dtype(dtype)


def known_dtype(value: ge.Tensor) -> DataType:
    """The dtype TorchAir sees for ``value``: its own for FX-node values, undefined for
    tensors the node being converted created itself."""
    if value.op.fx_node is not None and value.op.fx_node == current_builder().provenance.fx_node:
        return DataType.DT_UNDEFINED
    return value.dtype


def dtype_promote(target: DataType | torch.dtype, *values: Any) -> Any:
    """TorchAir's ``dtype_promote``: each graph tensor whose known dtype differs from
    ``target`` gets a ``Cast``; each Python value becomes a ``Const`` of ``target``. One
    value in, one out; several in, a list out."""
    target = as_ge_dtype(target)
    out = []
    for value in values:
        if isinstance(value, ge.Tensor):
            out.append(value if known_dtype(value) == target else ge.cast(value, target))
        else:
            out.append(ge.const(value, target))
    return out[0] if len(out) == 1 else out


def cast_scalar(value: Any, target: DataType | torch.dtype) -> ge.Tensor:
    """``ge.Cast(<python value>, dst_type=target)`` in TorchAir: a default-typed ``Const``
    then a ``Cast`` (a graph tensor is cast directly)."""
    source = value if isinstance(value, ge.Tensor) else ge.const(value)
    return ge.cast(source, as_ge_dtype(target))


INDEX_TYPES = (DataType.DT_INT32, DataType.DT_INT64)


def index_input(value: Any, dtype: DataType = DataType.DT_INT64, *, keep_int32: bool = False) -> ge.Tensor:
    """An index-typed input (axes, dims, shapes, sizes) from an int, an int list (maybe
    holding symbolic sizes: packed by
    :func:`fxlab.passes.symbolic_lists.pack_sizes`) or a graph tensor.

    Python values become a ``Const`` of ``dtype`` (a tuple as the list it stands for);
    a graph tensor is cast to ``dtype`` when it has another type, unless ``keep_int32``
    and it is int32 or int64 (what TorchAir's view converter does).
    """
    if isinstance(value, (list, tuple)) and any(isinstance(v, ge.Tensor) for v in value):
        value = pack_sizes(value)
    if isinstance(value, ge.Tensor):
        if keep_int32 and value.dtype in INDEX_TYPES:
            return value
        return ge.cast_to(value, dtype)
    return ge.const(list(value) if isinstance(value, tuple) else value, dtype)


def scalar_input(value: Any, *tensors: ge.Tensor) -> ge.Tensor:
    """A Python number passed where an op wants a tensor, typed as TorchAir's op builders
    type it from the op's other (known-dtype) tensor inputs."""
    if isinstance(value, ge.Tensor):
        return value
    known = {known_dtype(t) for t in tensors if isinstance(t, ge.Tensor)}
    family = FLOAT_TYPES if isinstance(_first_scalar(value), float) else INT_TYPES
    candidates = [d for d in known if d in family]
    if len(candidates) > 1:
        raise TypeError(f"cannot type constant {value!r}: the op's inputs have several dtypes {sorted(d.name for d in candidates)}")
    return ge.const(value, candidates[0] if candidates else None)


def _first_scalar(value: Any) -> Any:
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return value


def meta_like(value: ge.Tensor) -> torch.Tensor:
    """A meta-device tensor with ``value``'s dtype and shape (TorchAir converters read a
    tensor's fake value for ``torch.result_type``)."""
    shape = [d if d >= 0 else 1 for d in value.shape]
    return torch.empty(shape, dtype=torch_dtype(value.dtype), device="meta")


def output_dtype(meta_outputs: Any) -> DataType:
    """The GE dtype of a node's (single) fake output."""
    return ge_dtype(meta_outputs.dtype)
