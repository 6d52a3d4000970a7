"""FX's dead-code elimination, as TorchAir runs it on the aclgraph path (after the events
are in place and before re-inplacing): every node nothing reads goes, except those FX
keeps (graph inputs and output, ops with side effects such as ``copy_`` and the scope
and event markers)."""

from __future__ import annotations

import torch.fx as fx

from fxlab.passes.infra import PassResult


def eliminate_dead_code(gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
    return PassResult(gm, gm.graph.eliminate_dead_code())
