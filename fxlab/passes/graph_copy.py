"""Copying FX graphs cheaply: the same nodes, names and arguments, each node with a
shallow copy of its meta (fake values are shared, never deep-copied)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch.fx as fx


def copy_graph_module(gm: fx.GraphModule) -> fx.GraphModule:
    """A structural copy of ``gm`` whose nodes share the original's meta values (fake
    tensors are not copied, which ``copy.deepcopy`` would do at great cost)."""
    return lazy_graph_module_class()(gm, copy_graph(gm.graph))


def copy_graph(source: fx.Graph) -> fx.Graph:
    """What ``graph.graph_copy(source)`` followed by ``graph.output(...)`` gives: the same
    nodes, names, types and arguments, each with a shallow copy of its meta (the output
    node's meta is not copied).

    Nodes are made by :func:`create_node_args_after` (the argument scan is most of what
    ``graph_copy`` costs)."""
    graph = fx.Graph()
    remap: dict[fx.Node, fx.Node] = {}
    read = remap.__getitem__
    map_arg = fx.node.map_arg
    create = graph.create_node
    for node in source.nodes:
        if node.op == "output":
            graph.output(map_arg(node.args[0], read))
            break
        kwargs = map_arg(node.kwargs, read) if node.kwargs else {}
        copy = create_node_args_after(create, node.op, node.target, map_arg(node.args, read), kwargs, node.name, node.type)
        copy.meta = dict(node.meta)
        remap[node] = copy
    else:  # no output node: graph_copy returns None, which becomes the output
        graph.output(None)
    return graph


def create_node_args_after(
    create: Callable[..., fx.Node],
    op: str,
    target: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    name: str | None = None,
    type_expr: Any = None,
) -> fx.Node:
    """``create(op, target, args, kwargs, name, type_expr)`` (a graph's or a tracer's
    ``create_node``) with the node made without arguments and given them after: recent
    torch scans a new call node's arguments for raw symbolic values, to warn about them,
    and graphs that FX traced or recorded never hold any. The node is the same."""
    node = create(op, target, (), {}, name, type_expr)
    if args:
        node.args = args
    if kwargs:
        node.kwargs = kwargs
    return node


def lazy_graph_module_class() -> type[fx.GraphModule]:
    """A GraphModule that generates its Python code on first use: stage copies are read
    (nodes, readable code) far more often than run, and generating and compiling the
    code of a large graph costs more than copying it."""
    try:
        from torch.fx._lazy_graph_module import _LazyGraphModule  # optional: a torch build may lack it
    except ImportError:  # a torch without lazy graph modules
        return fx.GraphModule
    return _LazyGraphModule
