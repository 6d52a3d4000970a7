"""Which of the caller's inputs each ``Data`` op reads.

A conversion numbers its ``Data`` ops by graph input (the ``index`` attr). TorchAir then
drops the ``Data`` ops nothing reads and renumbers the rest; it keeps, beside its GE
graph, the list of inputs the remaining ones stand for, and feeds GE only those. fxlab
keeps that list on the graph as the attr ``_fxlab_input_indices`` (``Data`` index ->
graph input index), so whoever runs the graph (the reference executor, the IR check)
passes the caller's inputs as they are and each ``Data`` still reads its own. A ``Data``
that stands for several size inputs at once (TorchAir's ``optimize_sym_pack``) says which
in ``_fxlab_sym_pack``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from fxlab.ir.model import Attr, AttrKind, IrGraph, IrOp

INPUT_INDICES_ATTR = "_fxlab_input_indices"
# On a ``Data`` TorchAir's ``optimize_sym_pack`` made: the graph inputs (sizes) the host
# packs into it.
SYM_PACK_ATTR = "_fxlab_sym_pack"


def record_input_indices(graph: IrGraph, indices: Sequence[int]) -> None:
    """Keep on ``graph`` the graph input each ``Data`` index reads (``indices[data_index]``)."""
    graph.attrs[INPUT_INDICES_ATTR] = Attr(AttrKind.LIST_INT, tuple(indices))


def graph_input_index(graph: IrGraph, data_index: int) -> int:
    """The graph input a ``Data`` op with ``index`` ``data_index`` reads."""
    attr = graph.attrs.get(INPUT_INDICES_ATTR)
    return data_index if attr is None else attr.value[data_index]


def sym_pack_value(op: IrOp, inputs: Sequence[Any]) -> torch.Tensor | None:
    """What the host feeds a ``Data`` made of several size inputs (``None`` for any other
    ``Data``): the sizes, as one int64 tensor."""
    items = op.attr_value(SYM_PACK_ATTR)
    if items is None:
        return None
    return torch.tensor([int(inputs[i]) for i in items], dtype=torch.int64)
