"""fxlab's fast path for the ``reinplaced`` stage: view-scatter ops re-inplaced exactly as
Inductor's passes would, without importing Inductor.

Inductor's ``reinplace_inplaceable_ops`` + ``decompose_auto_functionalized``
(torch._inductor.fx_passes) are the reference implementation of the stage and stay its
fallback. Importing them costs seconds (they pull in ``torch._inductor.lowering``), and
their ``FakeTensorUpdater`` re-hashes every node; on a graph whose only re-inplacing
candidates are ``slice_scatter`` / ``select_scatter`` ops, this module reproduces their
result node for node (names, targets, args, kwargs, order, ``meta["val"]`` shapes,
strides and dtypes, ``meta["mutation_region_id"]``) at a fraction of the cost.
``tests/passes/test_reinplace_scatter.py`` proves the identity against Inductor on every
example and on crafted graphs. One thing differs, which fxlab never reads: Inductor's
fake-tensor update gives the nodes that view a scatter's result new fake values (same
shapes, strides, offsets and dtypes, a different fake storage); here they keep theirs.

What Inductor does on such a graph, and what this module follows:

1. each scatter becomes a generalized scatter at the same position (no two scatters fuse
   here: a scatter whose source is another scatter is outside the covered subset);
2. a scatter is re-inplaced when ``can_inplace`` holds (no view of the input's storage is
   read after it and before the input's first ``copy_`` epilogue) and the scatter's
   result is copied straight back into that graph input; the epilogue ``copy_`` goes;
3. re-inplaced scatters become ``view(inp, ...)`` + ``copy_(view, src)`` and their users
   read ``inp``; the others become a fresh ``<scatter>_default`` node (functional form);
4. every node gets ``meta["mutation_region_id"]`` and unused ``get_attr`` nodes go (what
   ``decompose_auto_functionalized``'s pattern pass and clean-up leave on any graph).

Anything else (custom ops through ``auto_functionalized*``, ``index_put``, foreach and
collective ops, diagonal / as_strided scatters, fusable scatter chains, symbolic shapes,
a scatter whose re-inplacing hinges on Inductor's lowering tables) returns ``False``
untouched, and the caller runs Inductor.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.fx as fx

aten = torch.ops.aten

# Scatter op -> the view op Inductor's canonical form applies before its ``copy_``.
SCATTER_TO_VIEW = {
    aten.slice_scatter.default: aten.slice.Tensor,
    aten.select_scatter.default: aten.select.int,
}
# Targets Inductor's reinplacing acts on that this module does not cover.
_UNCOVERED_ATEN = {"index_put", "_unsafe_index_put", "diagonal_scatter", "as_strided_scatter"}
_ALL_SCATTERS = {
    aten.slice_scatter.default,
    aten.select_scatter.default,
    aten.diagonal_scatter.default,
    aten.as_strided_scatter.default,
}
_META_ONLY_OPS = {aten.sym_size.int, aten.sym_stride.int, aten.sym_numel.default, aten.sym_storage_offset.default}
_INPUT_OPS = ("placeholder", "get_attr")
# Inductor's pattern matcher's test for a mutating callable (torch._inductor.pattern_matcher).
_MUTATION_NAME = re.compile(r"(?<!_)(_$|_[.]|(\b|_)(set|enter|exit|seed)(\b|_))(?!_)")


class NotCovered(Exception):
    """The graph needs Inductor's passes."""


@dataclass
class _Plan:
    fake_mode: Any
    scatters: list[fx.Node]
    reinplace: set[fx.Node]
    epilogues: dict[fx.Node, fx.Node]  # re-inplaced scatter -> its copy_ epilogue


def reinplace_view_scatters(graph: fx.Graph, root: fx.GraphModule) -> bool:
    """Re-inplace ``graph``'s view scatters as Inductor would; ``False`` (graph untouched)
    when the graph is outside the covered subset. ``root`` holds the graph's attributes."""
    try:
        plan = _plan(graph, root)
    except NotCovered:
        return False
    _apply(graph, plan)
    return True


def _plan(graph: fx.Graph, root: fx.GraphModule) -> _Plan:
    _check_targets(graph, root)
    fake_mode = _fake_mode(graph)
    scatters = [n for n in graph.nodes if n.op == "call_function" and n.target in SCATTER_TO_VIEW]
    for scatter in scatters:
        src = scatter.args[1]
        if isinstance(src, fx.Node) and src.target in _ALL_SCATTERS:
            raise NotCovered("a scatter of a scatter: Inductor fuses these")
        _require_static(scatter, scatter.args[0], src)
    checker = _InplaceChecker(graph)
    reinplace: set[fx.Node] = set()
    epilogues: dict[fx.Node, fx.Node] = {}
    for scatter in scatters:
        inp = scatter.args[0]
        if not checker.can_inplace(scatter, inp):
            continue
        if not (inp.op in _INPUT_OPS and any(_is_copy_into(user, inp) for user in scatter.users)):
            raise NotCovered("whether to re-inplace depends on Inductor's lowering tables")
        reinplace.add(scatter)
        epilogues[scatter] = checker.first_copy_of[(inp, scatter)]
    return _Plan(fake_mode, scatters, reinplace, epilogues)


def _check_targets(graph: fx.Graph, root: fx.GraphModule) -> None:
    for node in graph.nodes:
        if node.op == "call_module":
            raise NotCovered("call_module")
        if node.op == "get_attr" and isinstance(_attr(root, str(node.target)), torch.nn.Module):
            raise NotCovered("a subgraph attribute")
        if node.op != "call_function":
            continue
        target = node.target
        if isinstance(target, torch._ops.HigherOrderOperator):
            raise NotCovered(f"higher-order op {target.name()}")
        if isinstance(target, torch._ops.OpOverload):
            name = target._schema.name.split("::")[-1]
            if (
                target.namespace == "_c10d_functional"
                or name.startswith("_foreach_")
                or (target.namespace == "aten" and name in _UNCOVERED_ATEN)
            ):
                raise NotCovered(str(target))


def _attr(root: fx.GraphModule, target: str) -> Any:
    value: Any = root
    for part in target.split("."):
        value = getattr(value, part, None)
    return value


def _fake_mode(graph: fx.Graph) -> Any:
    from torch._guards import detect_fake_mode

    fake_mode = detect_fake_mode([n.meta.get("val") for n in graph.nodes if n.op == "placeholder"])
    if fake_mode is None:
        raise NotCovered("no fake values")
    return fake_mode


def _require_static(*nodes: Any) -> None:
    for node in nodes:
        val = node.meta.get("val") if isinstance(node, fx.Node) else None
        if not isinstance(val, torch.Tensor):
            raise NotCovered("a scatter operand without a tensor value")
        if any(isinstance(s, torch.SymInt) for s in (*val.shape, *val.stride(), val.storage_offset())):
            raise NotCovered("symbolic shapes")


def _is_copy_into(node: fx.Node, dst: fx.Node) -> bool:
    return node.target is aten.copy_.default and node.args[0] is dst


def _storage(node: fx.Node) -> int | None:
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor) or not torch._C._has_storage(val):
        return None
    return val.untyped_storage()._cdata


def _is_view_op(target: Any) -> bool:
    from torch.fx.passes.reinplace import _is_view_op as is_view

    return bool(is_view(target))


class _InplaceChecker:
    """Inductor's ``can_inplace`` for a scatter into ``inp``. Inductor asks it of the
    canonicalized graph, where each scatter is replaced at its position by a generalized
    scatter with a fresh storage that its views share: the same positions, users and
    storage groups as the scatter has here."""

    def __init__(self, graph: fx.Graph) -> None:
        self.order: dict[fx.Node, int] = {}
        self.storage_to_nodes: dict[int, list[fx.Node]] = defaultdict(list)
        self.first_copy_into: dict[fx.Node, fx.Node] = {}
        self.first_copy_of: dict[tuple[fx.Node, fx.Node], fx.Node] = {}
        for i, node in enumerate(graph.nodes):
            self.order[node] = i
            storage = _storage(node)
            if storage is not None:
                self.storage_to_nodes[storage].append(node)
            if node.target is aten.copy_.default and isinstance(node.args[0], fx.Node) and node.args[0].op in _INPUT_OPS:
                self.first_copy_into.setdefault(node.args[0], node)
                self.first_copy_of.setdefault((node.args[0], node.args[1]), node)

    def can_inplace(self, node: fx.Node, mutated: fx.Node) -> bool:
        storage = _storage(mutated)
        if storage is None:
            return False
        shared = [v for v in self.storage_to_nodes[storage] if _overlap(mutated, v)]
        _require_static(*shared)
        if mutated.op in _INPUT_OPS:
            copy_node = self.first_copy_into.get(mutated)
            return copy_node is not None and not self._use_after(node, shared, copy_node, mutated)
        if any(v.op in _INPUT_OPS for v in shared):
            raise NotCovered("a scatter into a view of a graph input")
        return not self._use_after(node, shared, None, mutated)

    def _use_after(self, node: fx.Node, shared: list[fx.Node], copy_node: fx.Node | None, mutated: fx.Node) -> bool:
        """Inductor's ``any_use_of_views_after_node``."""
        node_loc = self.order[node]
        copy_loc = self.order[copy_node] if copy_node is not None else None
        for view in shared:
            for user in view.users:
                loc = self.order[user]
                if loc <= node_loc or (copy_loc is not None and copy_loc <= loc):
                    continue
                if _is_meta_only_user(user) or _is_copy_into(user, mutated):
                    continue
                return True
        return False


def _is_meta_only_user(node: fx.Node) -> bool:
    if _is_view_op(node.target):
        return all(_is_meta_only_user(u) for u in node.users)
    return node.target in _META_ONLY_OPS


def _overlap(a: fx.Node, b: fx.Node) -> bool:
    from torch._C._dynamo.guards import compute_overlapping_tensors
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    try:
        return len(compute_overlapping_tensors([a.meta["val"], b.meta["val"]])) != 0
    except GuardOnDataDependentSymNode:
        return True


def _apply(graph: fx.Graph, plan: _Plan) -> None:
    from torch._dispatch.python import enable_python_dispatcher

    for copy_node in plan.epilogues.values():
        copy_node.replace_all_uses_with(cast(fx.Node, copy_node.args[0]))
        graph.erase_node(copy_node)
    # New nodes' values are computed as Inductor's ``graph_call_function`` does.
    with enable_python_dispatcher(), plan.fake_mode:
        # Inductor decomposes the scatters it kept functional first, then the re-inplaced ones.
        for scatter in [s for s in plan.scatters if s not in plan.reinplace]:
            with graph.inserting_before(scatter):
                new = _call(graph, scatter.target, (*scatter.args,), dict(scatter.kwargs))
            scatter.replace_all_uses_with(new)
            graph.erase_node(scatter)
        for scatter in [s for s in plan.scatters if s in plan.reinplace]:
            inp, src, view_args = cast(fx.Node, scatter.args[0]), scatter.args[1], scatter.args[2:]
            with graph.inserting_before(scatter):
                view = _call(graph, SCATTER_TO_VIEW[cast(torch._ops.OpOverload, scatter.target)], (inp, *view_args), dict(scatter.kwargs))
                _call(graph, aten.copy_.default, (view, src), {})
            scatter.replace_all_uses_with(inp)
            graph.erase_node(scatter)
    _mark_mutation_regions(graph)
    for node in [n for n in graph.nodes if n.op == "get_attr" and not n.users]:
        graph.erase_node(node)


def _call(graph: fx.Graph, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> fx.Node:
    """A new node and its value, run on its arguments' fake values (under the fake mode)."""

    def fake(a: Any) -> Any:
        return a.meta["val"] if isinstance(a, fx.Node) else a

    value = target(*(fake(a) for a in args), **{k: fake(v) for k, v in kwargs.items()})
    node = graph.call_function(target, args, kwargs)
    node.meta["val"] = value
    return node


def _mark_mutation_regions(graph: fx.Graph) -> None:
    """``meta["mutation_region_id"]`` as Inductor's pattern matcher numbers it."""
    region = 0
    for node in graph.nodes:
        if _is_mutation_op(node):
            region += 1
        node.meta["mutation_region_id"] = region


def _is_mutation_op(node: fx.Node) -> bool:
    target = node.target
    if isinstance(target, torch._ops.OpOverload) and not (
        target.namespace == "inductor" and target is torch.ops.inductor.resize_storage_bytes_.default
    ):
        return target._schema.is_mutable
    if node.op == "call_function":
        if _MUTATION_NAME.search(getattr(target, "__name__", "")):
            return True
    elif node.op == "call_method":
        if _MUTATION_NAME.search(str(target)):
            return True
    return node.kwargs.get("out") is not None
