"""Lists of sizes that hold symbolic ones, packed before a converter runs, as TorchAir's
walk packs them (its ``parse_symlist``).

A converter argument that is a list of ints and symbolic sizes (``[s0, 4]``: a ``SymInt[]``
argument of a graph with dynamic shapes) reaches TorchAir's converter as one int64
``Pack`` of its items, made before the converter's own ops, marked
``_force_unknown_shape`` (its value is known only at run time) and, when every item is a
size fed from the host (a ``Data`` of a symbolic graph input), ``_inputs_all_sym``, which
TorchAir's ``optimize_sym_pack`` later replaces with one host input of the whole list
(:mod:`fxlab.passes.optimize_sym_pack`). A list whose symbolic items all turned out to be
plain ints (a size known at trace time) stays a list of ints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.fx as fx

from fxlab.ir import ge
from fxlab.ir.builder import Tensor, current_builder
from fxlab.ir.model import DataType

ALL_SYM_ATTR = "_inputs_all_sym"
HOST_TENSOR_ATTR = "_host_tensor"


def is_symbolic_list(items: Any) -> bool:
    """TorchAir's test: a non-empty list of ints and graph values whose fake value is an
    int or a ``SymInt``, with at least one graph value."""
    if not isinstance(items, (list, tuple)) or not items:
        return False
    has_node = False
    for item in items:
        if isinstance(item, fx.Node):
            if not isinstance(item.meta.get("val"), (int, torch.SymInt)):
                return False
            has_node = True
        elif type(item) is not int:
            return False
    return has_node


def pack_symbolic_lists(fx_args: Any, values: Any) -> Any:
    """The converter arguments ``values`` (mapped from a node's ``fx_args``: its args
    tuple or kwargs dict) with every symbolic list among them packed; nested lists are
    looked into, as TorchAir looks into them."""
    if isinstance(fx_args, dict):
        return {key: _pack(fx_args[key], value) for key, value in values.items()}
    return type(values)(_pack(a, v) for a, v in zip(fx_args, values))


def _pack(fx_arg: Any, value: Any) -> Any:
    if not isinstance(fx_arg, (list, tuple)) or not fx_arg:
        return value
    if is_symbolic_list(fx_arg):
        packed = pack_sizes(value)
        if isinstance(packed, Tensor):  # TorchAir gives the Pack the sizes' values
            current_builder().fake_values[packed.tensor] = [a.meta.get("val") if isinstance(a, fx.Node) else a for a in fx_arg]
        return packed
    return type(value)(_pack(a, v) for a, v in zip(fx_arg, value))


def is_host_size(value: Any) -> bool:
    """A size fed from the host: the ``Data`` of a symbolic graph input."""
    return isinstance(value, Tensor) and value.op.type == "Data" and bool(value.op.attr_value(HOST_TENSOR_ATTR, False))


def pack_sizes(items: Sequence[Any]) -> Any:
    """One ``Pack`` of ``items`` (ints and GE scalars); the ints themselves when no GE
    value is among them."""
    if not any(isinstance(v, Tensor) for v in items):
        return list(items)
    parts = [v if isinstance(v, Tensor) else ge.const(int(v), DataType.DT_INT64) for v in items]
    attrs: dict[str, Any] = {"N": len(parts), "axis": 0}
    if all(is_host_size(v) for v in items):
        attrs[ALL_SYM_ATTR] = True
    attrs["_force_unknown_shape"] = True
    packed = ge.op1("Pack", {f"x{i}": t for i, t in enumerate(parts)}, attrs, dtypes=DataType.DT_INT64, shapes=[(len(parts),)])
    return ge.set_dtype(packed, DataType.DT_INT64)  # TorchAir gives the Pack the sizes' fake values
