"""Typed access to FX arguments that the graph's shape guarantees are nodes.

``node.args`` is typed as any FX argument (a node, a number, a list, ...); the passes
read arguments that their ops' schemas make tensors, so nodes. :func:`arg_node` says so
to the type checker without a run-time check (the passes behave as TorchAir's, which
index ``node.args`` directly)."""

from __future__ import annotations

from typing import cast

import torch.fx as fx


def arg_node(node: fx.Node, index: int = 0) -> fx.Node:
    """``node.args[index]``, a node."""
    return cast(fx.Node, node.args[index])
