"""TorchAir's ``view_to_reshape``: every ``aten.view.default`` becomes
``aten.reshape.default`` before conversion (the last of its own FX passes; GE has no
views, and ``reshape`` takes the same arguments)."""

from __future__ import annotations

import torch
import torch.fx as fx


def view_to_reshape(gm: fx.GraphModule) -> bool:
    """Retarget ``view`` calls to ``reshape`` in place; return whether any changed."""
    views = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is torch.ops.aten.view.default]
    for node in views:
        node.target = torch.ops.aten.reshape.default
    if views:
        gm.recompile()
    return bool(views)
