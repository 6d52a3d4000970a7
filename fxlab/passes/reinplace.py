"""The ``reinplaced`` stage: the functional graph with in-place ops restored where safe.

What the aclgraph path does, on a copy of the functional graph:

1. Inductor's ``reinplace_inplaceable_ops`` marks which ``auto_functionalized*`` bases
   need no clone (and re-inplaces scatter ops), then ``decompose_auto_functionalized``
   puts each custom in-place op back into the graph;
2. an ``op(input, ...)`` whose only use is a trailing ``copy_(input, op)`` into a graph
   input is folded into the in-place form (``mul`` + ``copy_`` -> ``mul_``), as TorchAir's
   aclgraph input-inplace pass does. Folded nodes get ``meta["fxlab.folded_from"]``.

Inductor's passes are the reference for step 1 and run for any graph outside the subset
:mod:`fxlab.passes.reinplace_scatter` covers (view scatters only: the KV-cache writes of a
decoder). That fast path skips importing Inductor (seconds) and its fake-tensor
re-propagation, and its tests prove it gives the same graph as Inductor on every example.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx

from fxlab.passes.graph_copy import copy_graph, lazy_graph_module_class

from fxlab.passes.reinplace_scatter import reinplace_view_scatters

aten = torch.ops.aten


def reinplace(gm: fx.GraphModule, *, inductor_only: bool = False) -> tuple[fx.GraphModule, bool]:
    """Return a re-inplaced copy of ``gm`` and whether anything changed.

    ``inductor_only`` skips fxlab's fast path (the reference the tests compare against)."""
    graph = _copy_graph(gm)
    before = _signature(graph)
    attrs = list(dict.fromkeys(n.target for n in graph.nodes if n.op == "get_attr"))
    out = None
    if _has_reinplace_candidates(graph):
        if inductor_only or not reinplace_view_scatters(graph, gm):
            out = _module(gm, graph, attrs)  # Inductor's passes want the owning module
            _inductor_reinplace(out)
            graph.eliminate_dead_code()
        elif any(not n.users and not _kept_by_dead_code_elimination(n) for n in graph.nodes):
            graph.eliminate_dead_code()
    folded = fold_input_copy_epilogues(graph)
    _remove_self_copies(graph)
    graph.lint()
    if out is None:
        out = _module(gm, graph, attrs)
    else:
        out.recompile()
    return out, folded > 0 or _signature(graph) != before


def _kept_by_dead_code_elimination(node: fx.Node) -> bool:
    """A node ``eliminate_dead_code`` keeps even without users. When every user-less node
    is one, it would remove nothing and need not walk the graph (which checks each node's
    purity: a large part of the fast path's time)."""
    if node.op in ("placeholder", "output"):
        return True
    return node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) and node.target._schema.is_mutable


def _copy_graph(gm: fx.GraphModule) -> fx.Graph:
    """The graph :func:`copy_graph_module` would give, not yet in a module (made by
    :func:`_module` once the graph is final)."""
    return copy_graph(gm.graph)


def _module(gm: fx.GraphModule, graph: fx.Graph, attrs: list[Any]) -> fx.GraphModule:
    """``fx.GraphModule(gm, graph)`` holding every attribute in ``attrs`` (what the copied
    graph's ``get_attr`` nodes named, even those the passes dropped, as a module made
    before the passes holds)."""
    stub = fx.Graph()
    for target in attrs:
        stub.get_attr(target)
    stub.output(None)
    out = lazy_graph_module_class()(gm, stub)  # the module kind copy_graph_module makes
    out.graph = graph
    return out


# What Inductor's reinplacing acts on; a graph without any of these is left as it is, and
# Inductor (seconds to import) is not loaded for it.
_REINPLACE_TARGETS = {
    "auto_functionalized",
    "auto_functionalized_v2",
    "aten.slice_scatter.default",
    "aten.select_scatter.default",
    "aten.as_strided_scatter.default",
    "aten.diagonal_scatter.default",
    "aten.index_put.default",
    "aten._unsafe_index_put.default",
}


def _has_reinplace_candidates(graph: fx.Graph) -> bool:
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        name = target.name() if isinstance(target, torch._ops.HigherOrderOperator) else str(target)
        if name in _REINPLACE_TARGETS:
            return True
    return False


def _signature(graph: fx.Graph) -> list[str]:
    return [str(n.target) for n in graph.nodes]


def _inductor_reinplace(gm: fx.GraphModule) -> None:
    from torch._inductor.fx_passes.post_grad import decompose_auto_functionalized
    from torch._inductor.fx_passes.reinplace import reinplace_inplaceable_ops
    from torch._inductor.fx_utils import FakeTensorUpdater

    from torch._guards import detect_fake_mode
    from torch._inductor.virtualized import V

    try:
        updater = FakeTensorUpdater(gm)
    except (AttributeError, TypeError):  # torch < 2.8 takes the graph
        updater = FakeTensorUpdater(gm.graph)
    # Inductor's passes create nodes under the fake mode the graph's values live in.
    fake_mode = detect_fake_mode([n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"])
    with V.set_fake_mode(fake_mode):
        reinplace_inplaceable_ops(updater, gm.graph)
        decompose_auto_functionalized(gm.graph)


def _remove_self_copies(graph: fx.Graph) -> None:
    """``copy_(x, x)`` is what decomposing a re-inplaced op leaves behind; it is a no-op
    (Inductor's ``remove_noop_ops`` drops it too)."""
    for node in list(graph.nodes):
        if node.target is aten.copy_.default and node.args[0] is node.args[1]:
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)


def _inplace_variant(target: Any) -> Any:
    """``aten.mul_.Tensor`` for ``aten.mul.Tensor``; ``None`` if there is none."""
    if not isinstance(target, torch._ops.OpOverload) or target.namespace != "aten":
        return None
    packet = getattr(aten, target._schema.name.split("::")[1] + "_", None)
    if packet is None:
        return None
    return getattr(packet, target._overloadname, None)


def fold_input_copy_epilogues(graph: fx.Graph) -> int:
    """Fold ``y = op(x, ...); copy_(x, y)`` into ``op_(x, ...)`` when ``x`` is a graph
    input and ``x`` is not read between ``op`` and the ``copy_`` (users of ``y`` then read
    the mutated ``x``, which holds the same value). Returns how many pairs were folded."""
    order = {node: i for i, node in enumerate(graph.nodes)}
    folded = 0
    for copy_node in [n for n in graph.nodes if n.target is aten.copy_.default]:
        dst, src = copy_node.args[0], copy_node.args[1]
        if not _foldable(dst, src, copy_node, order):
            continue
        inplace = _inplace_variant(src.target)
        with graph.inserting_before(src):
            new = graph.call_function(inplace, src.args, src.kwargs)
        new.meta = dict(src.meta)
        new.meta["fxlab.folded_from"] = [src.name, copy_node.name]
        order[new] = order[src]  # it takes src's place; later folds ask where it runs
        src.replace_all_uses_with(new)
        copy_node.replace_all_uses_with(new)
        graph.erase_node(copy_node)
        graph.erase_node(src)
        folded += 1
    return folded


def _foldable(dst: Any, src: Any, copy_node: fx.Node, order: dict[fx.Node, int]) -> bool:
    if not (isinstance(dst, fx.Node) and isinstance(src, fx.Node) and dst.op == "placeholder"):
        return False
    if src.op != "call_function" or not src.args or src.args[0] is not dst or _inplace_variant(src.target) is None:
        return False
    # The input must not be read after ``src`` computes from it (except by the copy_).
    return not any(order[src] < order[user] < order[copy_node] for user in dst.users if user is not copy_node)
