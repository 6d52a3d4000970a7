"""npugraph_ex's ``eliminate_self_copy``: a ``copy_(x, x)`` nothing reads goes.

Such copies are what re-inplacing a custom op's base leaves behind: the copy-back of a
base that is now written in place reads the base itself. They do nothing, but a ``copy_``
survives dead-code elimination (it writes memory). TorchAir's ``reduce-overhead`` mode
keeps them; the standalone npugraph_ex backend removes them.
"""

from __future__ import annotations

import torch
import torch.fx as fx

from fxlab.passes.infra import PassResult


def eliminate_self_copy(gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
    copies = [
        n
        for n in gm.graph.nodes
        if n.target is torch.ops.aten.copy_.default and len(n.args) >= 2 and n.args[0] is n.args[1] and not n.users
    ]
    for node in copies:
        node.replace_all_uses_with(node.args[0])
        gm.graph.erase_node(node)
    return PassResult(gm, bool(copies))
