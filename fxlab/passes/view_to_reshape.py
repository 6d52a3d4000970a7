"""TorchAir's ``view_to_reshape``: every ``aten.view.default`` becomes
``aten.reshape.default`` before conversion (the last of its own FX passes; GE has no
views, and ``reshape`` takes the same arguments)."""

from __future__ import annotations

import torch
import torch.fx as fx

from fxlab.passes.infra import PassResult


def view_to_reshape(gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
    """Retarget ``view`` calls to ``reshape`` in place (the nodes keep their names)."""
    views = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is torch.ops.aten.view.default]
    for node in views:
        node.target = torch.ops.aten.reshape.default
    if views:
        gm.recompile()
    return PassResult(gm, bool(views), changed_nodes=[n.name for n in views])
