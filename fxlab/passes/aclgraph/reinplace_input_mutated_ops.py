"""TorchAir's ``reinplace_input_mutated_ops`` (not when ``debug.aclgraph.
disable_reinplace_input_mutated_ops_pass``): what a trailing ``copy_`` writes back into a
graph input is computed in the input's own memory, and the ``copy_`` goes.

``y = foo(x, ...); ...; copy_(x, y)`` with ``x`` a graph input becomes ``foo_(x, ...)``
when ``foo`` has an in-place variant of matching schema and no alias of ``x`` is read
between ``foo`` and the ``copy_`` (reads that only look at sizes, and the ``copy_`` itself,
do not count); the readers of ``x`` must run on one stream. For custom in-place ops
(``auto_functionalized`` / ``auto_functionalized_v2``) the same test decides which bases
need no clone (``meta["only_clone_these_tensors"]``, read by the decomposition that
follows); torch_npu's functional multi-output operators whose written inputs are all
copied back become their in-place operators. It is Inductor's ``reinplace_inplaceable_ops``
rule for graph inputs, adapted by TorchAir: memory sets come from the graph's own
``meta["val"]``, and only a copy-back of the op's direct result (or of a multi-output
operator's ``getitem``) is removed.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from typing import Any

import torch
import torch.fx as fx
from torch._C._dynamo.guards import compute_overlapping_tensors
from torch._higher_order_ops.auto_functionalize import get_mutable_args
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
from torch.fx.passes.reinplace import _is_view_op, _maybe_get_inplace_op

from fxlab.passes.fx_args import arg_node
from fxlab.passes.aclgraph.stream_users import multi_inplace_ops, readers_allow_writing, readers_of_written_input, writes_are_stream_safe
from fxlab.passes.infra import PassResult
from fxlab.passes.stream_labels import annotate_stream_scopes

aten = torch.ops.aten
_META_ONLY = {aten.sym_size.int, aten.sym_stride.int, aten.sym_numel.default, aten.sym_storage_offset.default}
_INPUT_OPS = ("placeholder", "get_attr")


def node_storage(node: Any) -> int | None:
    """The memory ``meta["val"]`` lives in (None for no tensor, or one without storage)."""
    value = node.meta.get("val") if isinstance(node, fx.Node) else None
    if not isinstance(value, torch.Tensor) or not torch._C._has_storage(value):
        return None
    return value.untyped_storage()._cdata


def _overlaps(a: torch.Tensor, b: torch.Tensor) -> bool:
    try:
        return len(compute_overlapping_tensors([a, b])) != 0
    except GuardOnDataDependentSymNode:
        return True


class _InputReinplacer:
    def __init__(self, gm: fx.GraphModule, namespace: str = "air") -> None:
        self.graph = gm.graph
        self.namespace = namespace
        self.multi = multi_inplace_ops()
        self.copy_of: dict[tuple[fx.Node, fx.Node], fx.Node] = {}  # (input, source) -> copy_
        self.first_copy: dict[fx.Node, fx.Node] = {}  # input -> its first copy_
        self.copied_sources: set[fx.Node] = set()
        self.by_storage: dict[int | None, list[fx.Node]] = defaultdict(list)
        self.order: dict[fx.Node, int] = {}
        nodes = list(self.graph.nodes)
        for index in range(len(nodes) - 1, -1, -1):
            self._index(nodes[index], index)
        self.replace: dict[fx.Node, fx.Node] = {}
        self.notes: list[str] = []

    def _index(self, node: fx.Node, index: int) -> None:
        self.order[node] = index
        self.by_storage[node_storage(node)].append(node)
        if node.target is aten.copy_.default and isinstance(node.args[0], fx.Node) and node.args[0].op in _INPUT_OPS:
            target, source = node.args[0], arg_node(node, 1)
            if source.target is operator.getitem and arg_node(source).target in self.multi:
                source = arg_node(source)
            self.copy_of[(target, source)] = node
            self.first_copy[target] = node
            self.copied_sources.add(arg_node(node, 1))

    def _read_later(self, node: fx.Node, aliases: list[fx.Node], copy: fx.Node | None, written: fx.Node) -> bool:
        def sizes_only(user: fx.Node) -> bool:
            return all(sizes_only(u) for u in user.users) if _is_view_op(user.target) else user.target in _META_ONLY

        start, end = self.order[node], self.order[copy] if copy is not None else None
        for alias in aliases:
            for user in alias.users:
                at = self.order[user]
                if at <= start or (end is not None and end <= at) or sizes_only(user):
                    continue
                if user.target is aten.copy_.default and user.args[0] is written:
                    continue
                return True
        return False

    def can_inplace(self, node: fx.Node, written: Any) -> bool:
        if isinstance(written, (list, tuple)):
            if len({node_storage(a) for a in written}) != len(written):
                return False  # two of them share memory
            return all(self.can_inplace(node, a) for a in written)
        storage = node_storage(written)
        if storage is None:
            return False
        aliases = [v for v in self.by_storage[storage] if _overlaps(written.meta["val"], v.meta["val"])]
        if written.op in _INPUT_OPS:
            copy = self.first_copy.get(written)
            return copy is not None and not self._read_later(node, aliases, copy, written)
        if any(v.op in _INPUT_OPS for v in aliases):
            return False
        return not self._read_later(node, aliases, None, written)

    def run(self) -> None:
        for node in self.graph.nodes:
            if node.target in self.multi:
                self._multi(node)
            elif node in self.copied_sources and node.op not in _INPUT_OPS:
                self._single(node)
            elif node.target is getattr(torch.ops.higher_order, "auto_functionalized_v2", None):
                bases = node.kwargs["_all_bases"]
                node.meta["only_clone_these_tensors"] = self._bases_to_clone(node, list(range(len(bases))), dict(enumerate(bases)), v2=True)
            elif node.target is getattr(torch.ops.higher_order, "auto_functionalized", None):
                names, _ = get_mutable_args(node.args[0])
                names = [n for n in names if node.kwargs[n] is not None]
                node.meta["only_clone_these_tensors"] = self._bases_to_clone(node, names, node.kwargs, v2=False)
        self._apply_replacements()

    def _multi(self, node: fx.Node) -> None:
        entry = self.multi[node.target]
        written = [arg_node(node, i) for i in entry.mutated_args]
        if not all((arg, node) in self.copy_of for arg in written):
            return
        if not (self.can_inplace(node, written) and writes_are_stream_safe(node, entry.mutated_args, self.namespace)):
            return
        for arg in written:
            copy = self.copy_of[(arg, node)]
            self.replace[copy] = arg_node(copy)
            if arg_node(copy, 1).target is operator.getitem:
                self.replace[arg_node(copy, 1)] = arg_node(copy)
        self.notes.append(f"{node.name}: {node.target} -> {entry.inplace_op}")
        node.target = entry.inplace_op

    def _single(self, node: fx.Node) -> None:
        written = arg_node(node)
        inplace = _maybe_get_inplace_op(node.target)
        if inplace is None or not (self.can_inplace(node, written) and writes_are_stream_safe(node, [0], self.namespace)):
            return
        copy = self.copy_of.get((written, node))
        if copy is not None:
            self.replace[copy] = arg_node(copy)
        self.notes.append(f"{node.name}: {node.target} -> {inplace}")
        node.target = inplace

    def _bases_to_clone(self, node: fx.Node, candidates: list[Any], tensors: dict[Any, Any], v2: bool) -> list[Any]:
        """The bases (or mutable arguments) that still need a clone."""
        to_clone, done = [], set()
        for key in candidates:
            written = tensors[key]
            storages = [node_storage(w) for w in written] if isinstance(written, (list, tuple)) else [node_storage(written)]
            fresh = not any(s in done for s in storages)
            readers = readers_of_written_input(written) if isinstance(written, fx.Node) else []
            if fresh and self.can_inplace(node, written) and readers_allow_writing(node, readers, self.namespace):
                copy = self.copy_of.get((written, node))
                if copy is not None:
                    self.replace[copy] = arg_node(copy)
                if not v2:
                    for user in node.users:
                        if user.target is operator.getitem and user.args[1] == key:
                            self.replace[user] = written
                done.update(storages)
            else:
                to_clone.append(key)
        self.notes.append(f"{node.name}: no clone for {[k for k in candidates if k not in to_clone]}, clone {to_clone}")
        return to_clone

    def _apply_replacements(self) -> None:
        for node in list(self.replace):
            target = self.replace[node]
            while target in self.replace:
                target = self.replace[target]
            self.replace[node] = target
            node.replace_all_uses_with(target)
            self.graph.erase_node(node)


def reinplace_input_mutated_ops(gm: fx.GraphModule, namespace: str = "air") -> PassResult[fx.GraphModule]:
    annotate_stream_scopes(gm, namespace)
    before = len(gm.graph.nodes)
    reinplacer = _InputReinplacer(gm, namespace)
    reinplacer.run()
    changed = bool(reinplacer.replace) or any("->" in n for n in reinplacer.notes) or len(gm.graph.nodes) != before
    return PassResult(gm, changed, notes=reinplacer.notes)
