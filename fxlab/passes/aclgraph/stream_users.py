"""The stream rule of TorchAir's re-inplacing, and the torch_npu operators it re-inplaces
as a whole.

Writing a tensor in place is safe across streams only when everything that reads it runs
on one stream. Before re-inplacing an op, TorchAir collects the readers of each tensor the
op would write — the other users of the input, and when the input is copied back by a
trailing ``copy_`` also the readers of the value copied and of the ``copy_`` itself (they
will read the input once the ``copy_`` goes) — and re-inplaces only when they all carry
one stream label (:func:`fxlab.passes.stream_labels.on_one_stream`). The standalone
npugraph_ex backend also allows readers on other streams that events order against the
write (:func:`fxlab.passes.aclgraph.event_protection.event_protected`).

Three torch_npu operators have a functional form that returns its written inputs last
(``npu_kv_rmsnorm_rope_cache_v2_functional`` and friends); TorchAir swaps such a call for
the in-place operator when the written inputs allow it. They are known only where
torch_npu's operators are defined.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx
from torch.utils import _pytree as pytree

from fxlab.passes.aclgraph.event_protection import event_protected
from fxlab.passes.stream_labels import on_one_stream
from fxlab.passes.fx_args import arg_node

aten = torch.ops.aten

# (functional operator, in-place operator, indices of the arguments it writes): TorchAir's list.
_NPU_MULTI_INPLACE = (
    ("npu_kv_rmsnorm_rope_cache_v2_functional", "npu_kv_rmsnorm_rope_cache_v2", (5, 6)),
    ("npu_mla_prolog_v3_functional", "npu_mla_prolog_v3", (9, 10)),
    ("npu_add_rms_norm_v2_functional", "npu_add_rms_norm_v2", (0, 1)),
)


@dataclass(frozen=True)
class MultiInplaceOp:
    inplace_op: Any
    mutated_args: tuple[int, ...]


def multi_inplace_ops() -> dict[Any, MultiInplaceOp]:
    """The functional operators TorchAir re-inplaces as a whole, where torch_npu defines them."""
    found = {}
    for functional, inplace, mutated in _NPU_MULTI_INPLACE:
        if not hasattr(torch.ops.npu, inplace):
            continue
        f_packet, i_packet = getattr(torch.ops.npu, functional, None), getattr(torch.ops.npu, inplace, None)
        if f_packet is not None and i_packet is not None:
            found[getattr(f_packet, "default", f_packet)] = MultiInplaceOp(getattr(i_packet, "default", i_packet), mutated)
    return found


def _is_copy(node: fx.Node) -> bool:
    return node.op == "call_function" and node.target is aten.copy_.default


def readers_of_written_input(tensor: fx.Node) -> list[fx.Node]:
    """Who reads ``tensor`` once an op writes it in place (TorchAir's collection)."""
    readers = []
    copy = None
    for user in tensor.users:
        if _is_copy(user):
            copy = user  # the copy_ goes when the op is re-inplaced
            continue
        readers.append(user)
    if copy is not None:
        source = copy.args[1] if len(copy.args) > 1 else None
        if isinstance(source, fx.Node) and source.target is operator.getitem:
            readers.extend(u for u in source.users if u is not copy)
        readers.extend(copy.users)
    return readers


def _getitem_readers(node: fx.Node, index: int) -> list[fx.Node]:
    readers: list[fx.Node] = []
    for user in node.users:
        if user.target is operator.getitem and len(user.args) > 1 and user.args[1] == index:
            readers.extend(u for u in user.users if not _is_copy(u))
    return readers


def readers_per_written_arg(node: fx.Node, indices: tuple[int, ...] | list[int]) -> list[list[fx.Node]]:
    """For each written argument of ``node``: its readers, and for an operator that returns
    its written inputs last, the readers of the matching outputs too."""
    outputs = pytree.tree_leaves(node.meta.get("fake_result", []))
    first = len(outputs) - len(indices)
    per_arg = []
    for position, index in enumerate(indices):
        if index >= len(node.args):
            continue
        readers = readers_of_written_input(arg_node(node, index))
        readers.extend(_getitem_readers(node, first + position))
        per_arg.append(readers)
    return per_arg


def readers_allow_writing(node: fx.Node, readers: list[fx.Node], namespace: str = "air") -> bool:
    """The stream rule for ``node`` writing memory that ``readers`` read: TorchAir's (one
    stream), or npugraph_ex's (other streams ordered by events)."""
    if namespace == "npugraph_ex":
        return event_protected(node, readers, namespace)
    return on_one_stream(readers)


def writes_are_stream_safe(node: fx.Node, indices: tuple[int, ...] | list[int], namespace: str = "air") -> bool:
    """The stream rule for each argument of ``node`` at ``indices``."""
    return all(readers_allow_writing(node, readers, namespace) for readers in readers_per_written_arg(node, indices))
