"""TorchAir's no-op removal before conversion: Inductor's ``remove_noop_ops``.

TorchAir runs it first among its own passes when ``experimental_config.remove_noop_ops``
is on (its default). It drops calls that return their input unchanged — ``repeat`` by
ones, ``expand``/``view`` to the same shape, ``cat`` of one tensor, ``pow(x, 1)``,
casts to the same dtype, zero padding, full ``slice`` — without creating new aliasing
between graph inputs and outputs. The pass is Inductor's own, run as TorchAir runs it.
"""
from __future__ import annotations

import torch.fx as fx


def remove_noop_ops(gm: fx.GraphModule) -> bool:
    """Remove the no-op calls of ``gm`` in place; return whether any was removed."""
    from torch._inductor.fx_passes.post_grad import remove_noop_ops as inductor_remove_noop_ops

    before = len(gm.graph.nodes)
    inductor_remove_noop_ops(gm.graph)
    changed = len(gm.graph.nodes) != before
    if changed:
        gm.recompile()
    return changed
