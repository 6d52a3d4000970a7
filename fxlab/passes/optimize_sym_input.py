"""TorchAir's ``optimize_sym_input``: a symbolic size read from a tensor input's shape.

In its default GE graph mode (``mode="max-autotune"``), TorchAir replaces every use of a
symbolic-size graph input (``Sym(s0)``) by ``aten.sym_size(t, i)`` of the first tensor
input whose dim ``i`` is that same symbol, placed right after that tensor's placeholder:
the size is then read from the tensor (``Shape`` + ``Gather`` in GE) and the symbol's own
``Data`` is read by nothing (TorchAir's dead-data pass drops it). A symbol no tensor
input carries stays an input. Graphs with static shapes are left as they are.
"""

from __future__ import annotations

import torch
import torch.fx as fx

from fxlab.passes.infra import PassResult


def optimize_sym_input(gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
    """Apply the pass to ``gm`` in place."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    symbols = [n for n in placeholders if isinstance(n.meta.get("val"), torch.SymInt)]
    tensors = [n for n in placeholders if isinstance(n.meta.get("val"), torch.Tensor)]
    changed = False
    for symbol in symbols:
        if not symbol.users:
            continue
        found = _first_dim_holding(str(symbol.meta["val"]), tensors)
        if found is None:
            continue
        tensor, dim = found
        with gm.graph.inserting_after(tensor):
            size = gm.graph.create_node("call_function", torch.ops.aten.sym_size, (tensor, dim))
        symbol.replace_all_uses_with(size, propagate_meta=True)
        changed = True
    if changed:
        gm.graph.lint()
        gm.recompile()
    return PassResult(gm, changed)


def _first_dim_holding(symbol: str, tensors: list[fx.Node]) -> tuple[fx.Node, int] | None:
    # TorchAir compares the printed forms, as here.
    for tensor in tensors:
        for dim, size in enumerate(tensor.meta["val"].size()):
            if str(size) == symbol:
                return tensor, dim
    return None
