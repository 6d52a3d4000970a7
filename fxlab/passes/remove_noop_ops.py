"""TorchAir's no-op removal before conversion: Inductor's ``remove_noop_ops`` rules.

TorchAir runs Inductor's pass first among its own passes when
``experimental_config.remove_noop_ops`` is on (its default). It drops calls that return
their input unchanged — ``repeat`` by ones, ``view`` to the same shape, ``cat`` of one
tensor, ``pow(x, 1)``, casts to the same dtype, zero padding, a full ``slice`` — when the
result has its input's exact metadata, without creating new aliasing between graph
inputs and outputs.

The rules are Inductor's (torch/_inductor/fx_passes/post_grad.py), held here so that a
trace need not import Inductor (most of a second, more than the pass itself); the tests
run both on the same graphs and require the same result.

Neither looks at writes of the source after the no-op: ``copy(x)`` read after a ``copy_``
epilogue wrote ``x`` held ``x``'s value before the write, and ``x`` itself holds the one
after. On the aclgraph path, which runs the graph in order, such a reader then gets the
written value; with ``in_order`` the pass notes it as a hazard (the aclgraph check quotes it
beside a mismatch, and says whose fault it is only from TorchAir's own run).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx

from fxlab.passes.infra import PassResult
from fxlab.passes.torchair_refusals import HAZARD
from torch._prims_common import is_integer_dtype
from torch.fx.experimental.symbolic_shapes import statically_known_true, sym_eq
from torch.utils import _pytree as pytree

aten, prims = torch.ops.aten, torch.ops.prims
_NO_END = 2**63 - 1


@dataclass(frozen=True)
class NoopRule:
    """When a call is a no-op (``is_noop`` of the call's fake arguments), and which
    argument it then returns (``source``: an index into ``args``, or a function of them)."""

    is_noop: Callable[..., bool]
    source: int | Callable[[tuple[Any, ...]], Any] = 0

    def source_of(self, args: tuple[Any, ...]) -> Any:
        return args[self.source] if isinstance(self.source, int) else self.source(args)


def _full_slice(x: Any, dim: int = 0, start: Any = None, end: Any = None, step: Any = 1) -> bool:
    if start is None or end is None:
        return False
    reaches_end = statically_known_true(end >= _NO_END) or statically_known_true(end >= x.shape[dim])
    return statically_known_true(sym_eq(start, 0)) and reaches_end and statically_known_true(sym_eq(step, 1))


def _whole_slice_scatter(x: Any, src: Any, dim: int = 0, start: Any = None, end: Any = None, step: Any = 1) -> bool:
    start = 0 if start is None else start
    end = _NO_END if end is None else end
    reaches_end = statically_known_true(end >= _NO_END) or statically_known_true(end >= x.shape[dim])
    return x.shape == src.shape and start == 0 and reaches_end and step == 1


def _same_device(x: Any, device: Any, non_blocking: bool = True) -> bool:
    return x.device == torch.device(device)


def _always(*args: Any, **kwargs: Any) -> bool:  # the same-metadata check decides
    return True


# Keyed by op packet: Inductor registers every overload of each with a kernel.
_RULES_BY_PACKET: dict[Any, NoopRule] = {
    aten.slice: NoopRule(_full_slice),
    aten.slice_scatter: NoopRule(_whole_slice_scatter, 1),
    aten.repeat: NoopRule(lambda x, repeats: all(r == 1 for r in repeats)),
    aten.constant_pad_nd: NoopRule(lambda x, padding, value=0: all(p == 0 for p in padding)),
    prims.convert_element_type: NoopRule(lambda x, dtype: x.dtype == dtype),
    prims.device_put: NoopRule(_same_device),
    **dict.fromkeys((aten.ceil, aten.floor, aten.round, aten.trunc), NoopRule(lambda x: is_integer_dtype(x.dtype))),
    aten.pow: NoopRule(lambda a, b: isinstance(b, int) and b == 1),
    aten.cat: NoopRule(lambda tensors, dim=0: len(tensors) == 1, lambda args: args[0][0]),
    aten.copy: NoopRule(_always, 1),
    aten.alias: NoopRule(_always),
    aten.clone: NoopRule(_always),
}
_RULES_BY_OVERLOAD: dict[Any, NoopRule] = {
    aten.view.default: NoopRule(lambda x, size: statically_known_true(sym_eq(x.shape, tuple(size)))),
    aten.view.dtype: NoopRule(lambda x, dtype: x.dtype == dtype),
}


def _rules() -> dict[Any, NoopRule]:
    rules = dict(_RULES_BY_OVERLOAD)
    for packet, rule in _RULES_BY_PACKET.items():
        for overload in packet.op_overloads():
            if torch._C._dispatch_has_kernel(overload.name()):
                rules[overload] = rule
    return rules


NOOP_RULES = _rules()


def remove_noop_ops(gm: fx.GraphModule, in_order: bool = False) -> PassResult[fx.GraphModule]:
    """Remove the no-op calls of ``gm`` in place; with ``in_order`` (the graph runs node by
    node, as on the aclgraph path), note readers that then read a value written since."""
    graph = gm.graph
    removed = False
    guard = _AliasGuard(graph)
    stale = _StaleReads(graph) if in_order else None
    for node in list(graph.nodes):
        rule = NOOP_RULES.get(node.target) if node.op == "call_function" else None
        if rule is None:
            continue
        source = rule.source_of(node.args)
        if not isinstance(source, fx.Node) or _copies_into_pinned_memory(node) or guard.would_alias(node, source):
            continue
        if not _same_meta(node, source):  # the cheaper test first; neither has side effects
            continue
        fake = _fake_arguments(node)
        if fake is not None and rule.is_noop(*fake[0], **fake[1]):
            if stale is not None:
                stale.check(node, source)
            node.replace_all_uses_with(source)
            graph.erase_node(node)
            removed = True
    if removed:
        gm.recompile()
    return PassResult(gm, removed, notes=stale.notes if stale is not None else [])


class _StaleReads:
    """Readers of a removed no-op that, reading its source instead, come after an in-place
    write of the source's memory (a ``copy_`` epilogue into a graph input)."""

    def __init__(self, graph: fx.Graph) -> None:
        self.order = {node: i for i, node in enumerate(graph.nodes)}
        self.writes = [n for n in graph.nodes if n.op == "call_function" and n.target is aten.copy_.default]
        self.notes: list[str] = []

    def check(self, node: fx.Node, source: fx.Node) -> None:
        storage = _storage(source)
        if storage is None:
            return
        at = self.order[node]
        writes = [w for w in self.writes if isinstance(w.args[0], fx.Node) and _storage(w.args[0]) == storage and self.order[w] > at]
        for write in writes:
            readers = [u.name for u in node.users if self.order[u] > self.order[write]]
            if readers:
                self.notes.append(
                    f"{HAZARD}: {', '.join(readers)} read {source.name} after {write.name} writes it in place, where they read "
                    f"{node.name} ({node.target}), its value before the write: TorchAir's remove_noop_ops (Inductor's rule) replaces "
                    "a no-op by its input without looking at later writes of it"
                )


class _AliasGuard:
    """Removing a no-op must not make a graph output newly alias a graph input or
    another output (Inductor's rule; see its fx_passes/README.md)."""

    def __init__(self, graph: fx.Graph) -> None:
        self.inputs = [n for n in graph.nodes if n.op == "placeholder"]
        self.input_storages = {_storage(n) for n in self.inputs}
        self.output = next(reversed(graph.nodes))
        outputs = self.output.args[0]
        outputs = outputs if isinstance(outputs, (list, tuple)) else (outputs,)
        self.output_storages = {_storage(out) for out in outputs if isinstance(out, fx.Node)}

    def would_alias(self, node: fx.Node, source: fx.Node) -> bool:
        node_storage, source_storage = _storage(node), _storage(source)
        if node_storage != source_storage:
            return node_storage in self.output_storages and (
                source_storage in self.input_storages or source_storage in self.output_storages
            )
        # A view that is itself an output stays, when its source is an input or an output.
        return node in self.output.args and (source in self.inputs or source in self.output.args)


def _storage(node: fx.Node) -> int | None:
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor) or not torch._C._has_storage(value):
        return None
    return value.untyped_storage()._cdata


def _copies_into_pinned_memory(node: fx.Node) -> bool:
    destination = node.args[0] if node.target is aten.copy.default else None
    return isinstance(destination, fx.Node) and destination.op == "call_function" and destination.kwargs.get("pin_memory") is True


def _fake_arguments(node: fx.Node) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """The call's arguments with each node replaced by its fake value; None when one has none."""
    args, kwargs = pytree.tree_map(_fake_of, (node.args, node.kwargs))
    if any(isinstance(a, fx.Node) for a in pytree.arg_tree_leaves(*args, **kwargs)):
        return None
    return args, kwargs


def _fake_of(value: Any) -> Any:
    if not isinstance(value, fx.Node):
        return value
    meta = value.meta
    return meta["val"] if "val" in meta else meta.get("example_value")


def _same_meta(node: fx.Node, source: fx.Node) -> bool:
    a, b = node.meta.get("val"), source.meta.get("val")
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return False
    return (
        statically_known_true(sym_eq(a.size(), b.size()))
        and a.layout == b.layout
        and a.dtype == b.dtype
        and a.device == b.device
        and (a.layout != torch.strided or statically_known_true(sym_eq(a.stride(), b.stride())))
        and a.is_conj() == b.is_conj()
        and a.is_neg() == b.is_neg()
    )
