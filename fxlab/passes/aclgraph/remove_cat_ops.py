"""TorchAir's ``remove_cat_ops`` (``debug.aclgraph.remove_cat_ops``, default on): a
``cat`` along dim 0 of results the graph computes becomes one buffer the producers write
into, each through its ``out=`` variant on a slice of it.

``cat([a(x), b(y)], 0)`` is rewritten to ``buf = empty(shape)``, ``a.out(x,
out=buf[0:n])``, ``b.out(y, out=buf[n:n+m])``, and readers of the ``cat`` read ``buf``;
the ``cat`` and its inputs go. TorchAir rewrites a ``cat`` only when: it joins at least two
tensors along dim 0 (the literal ``0``); every input is computed by a call in the graph
whose op has an ``out=`` overload with the same other arguments (names and types); no
input also feeds another ``cat`` being rewritten; the inputs agree on every other dim;
and every input's size along dim 0 is known (a number, or a symbol the graph takes as an
input). The buffer is made just before the earliest input, on the ``cat``'s stream.
"""

from __future__ import annotations

import operator
from typing import Any, cast
from collections.abc import Sequence

import torch
import torch.fx as fx

from fxlab.passes.aclgraph.sym_shapes import SymShapeBuilder, has_symbolic_size, symbol_inputs
from fxlab.passes.infra import PassResult
from fxlab.passes.stream_labels import STREAM_KEY, USER_STREAM_LABEL, annotate_stream_scopes, inherit_source

aten = torch.ops.aten


def out_variant(target: Any) -> Any:
    """The ``out=`` overload of ``target`` whose other arguments match (name and type), or None."""
    schema = getattr(target, "_schema", None)
    packet = getattr(target, "_overloadpacket", None)
    if schema is None or packet is None:
        return None
    wanted = [(a.name, str(a.type)) for a in schema.arguments if a.name != "out"]
    for name in packet.overloads():
        overload = getattr(packet, name)
        arguments = overload._schema.arguments
        if any(a.name == "out" for a in arguments) and [(a.name, str(a.type)) for a in arguments if a.name != "out"] == wanted:
            return overload
    return None


def why_kept(cat: fx.Node, pending: set[fx.Node]) -> str | None:
    """Why TorchAir leaves ``cat`` as it is, or None when it rewrites it."""
    tensors = cat.args[0] if cat.args else None
    if not isinstance(tensors, (list, tuple)) or len(tensors) < 2:
        return "fewer than 2 tensors"
    dim = cat.args[1] if len(cat.args) >= 2 else cat.kwargs.get("dim", 0)
    if not isinstance(dim, int) or dim != 0:
        return f"joins along dim {dim}, not 0"
    if "val" not in cat.meta:
        return "no output metadata"
    for i, tensor in enumerate(tensors):
        if not isinstance(tensor, fx.Node) or tensor.op != "call_function" or "val" not in tensor.meta:
            return f"input {i} is not computed by a call in the graph"
        if out_variant(tensor.target) is None:
            return f"input {i} ({tensor.target}) has no out= variant"
        if any(user is not cat and user in pending for user in tensor.users):
            return f"input {i} also feeds another cat"
        if i > 0:
            before, now = tensors[i - 1].meta["val"].shape, tensor.meta["val"].shape
            if len(before) != len(now) or any(before[d] != now[d] for d in range(1, len(now))):
                return "inputs differ in a dim other than 0"
    return None


def remove_cat_ops(gm: fx.GraphModule, namespace: str = "air", shapes: SymShapeBuilder | None = None) -> PassResult[fx.GraphModule]:
    """Rewrite every ``cat`` TorchAir rewrites; ``namespace`` names the stream markers."""
    cats = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is aten.cat.default]
    if not cats:
        return PassResult(gm, False)
    annotate_stream_scopes(gm, namespace)
    pending = set(cats)
    notes, rewritten = [], []
    for cat in cats:
        reason = why_kept(cat, pending) or _rewrite(gm, cat, namespace, shapes or SymShapeBuilder(gm, symbol_inputs(gm)))
        if reason:
            notes.append(f"{cat.name} kept: {reason}")
            continue
        pending.discard(cat)
        rewritten.append(cat.name)
    if rewritten:
        gm.graph.lint()
        gm.recompile()
    return PassResult(gm, bool(rewritten), notes=[f"{name}: inputs now write into one buffer" for name in rewritten] + notes)


def _rewrite(gm: fx.GraphModule, cat: fx.Node, namespace: str, shapes: SymShapeBuilder) -> str | None:
    """Make the buffer and the ``out=`` calls; a reason when a size cannot be known."""
    graph = gm.graph
    existing = set(graph.nodes)
    source = dict(cat.meta)
    tensors = list(cast(Sequence[Any], cat.args[0]))
    result = cat.meta["val"]
    symbolic = has_symbolic_size(result)
    order = {n: i for i, n in enumerate(graph.nodes)}
    first = min(tensors, key=lambda t: order[t])
    with graph.inserting_before(first):  # TorchAir builds the shape first, then the sizes
        shape = tuple(shapes.shape(result.shape)) if symbolic else result.shape
    sizes = _first_dim_sizes(tensors, shapes if symbolic else None, first)
    if sizes is None:
        return "a size along dim 0 is neither a number nor a graph input"
    buffer = _make_buffer(graph, first, shape, result, cat.meta.get(STREAM_KEY), namespace)
    offsets = _offsets(graph, buffer, sizes)
    replacements = {}
    for tensor, offset, size in zip(tensors, offsets, sizes):
        with graph.inserting_before(tensor):
            view = _slice(graph, buffer, offset, size)
            kwargs = {**tensor.kwargs, "out": view}
            writer = graph.call_function(out_variant(tensor.target) or tensor.target, tensor.args, kwargs)
        writer.meta.update(tensor.meta)
        replacements[tensor] = writer
    for old, new in replacements.items():
        old.replace_all_uses_with(new)
    cat.replace_all_uses_with(buffer)
    for node in reversed([*replacements, cat]):
        if not node.users:
            node.meta.clear()
            graph.erase_node(node)
    inherit_source(source, [n for n in graph.nodes if n not in existing])
    return None


def _first_dim_sizes(tensors: list[fx.Node], shapes: SymShapeBuilder | None, first: fx.Node) -> list[Any] | None:
    sizes: list[Any] = []
    for tensor in tensors:
        size = tensor.meta["val"].shape[0]
        if isinstance(size, (int, float, bool)):
            sizes.append(int(size))
        elif shapes is not None and shapes.symbols:
            with first.graph.inserting_before(first):
                sizes.append(shapes.size(size))
        else:
            return None
    return sizes


def _make_buffer(graph: fx.Graph, first: fx.Node, shape: Any, result: torch.Tensor, stream: str | None, namespace: str) -> fx.Node:
    ops = getattr(torch.ops, namespace)
    with graph.inserting_before(first):
        if stream is not None:
            graph.call_function(ops.scope_enter.default, args=([USER_STREAM_LABEL], [stream]))
        buffer = graph.call_function(
            aten.empty.memory_format,
            args=(shape,),
            kwargs={"dtype": result.dtype, "device": result.device, "pin_memory": False, "memory_format": None},
        )
        if stream is not None:
            graph.call_function(ops.scope_exit.default, args=())
    buffer.meta["val"] = result
    buffer.meta[STREAM_KEY] = stream
    return buffer


def _offsets(graph: fx.Graph, buffer: fx.Node, sizes: list[Any]) -> list[Any]:
    """Where each input starts: numbers, or sums computed after the buffer."""
    offsets: list[Any] = [0]
    last = buffer
    for size in sizes[:-1]:
        previous = offsets[-1]
        if isinstance(previous, int) and isinstance(size, int):
            offsets.append(previous + size)
            continue
        with graph.inserting_after(last):
            last = graph.call_function(operator.add, args=(previous, size))
        offsets.append(last)
    return offsets


def _slice(graph: fx.Graph, buffer: fx.Node, offset: Any, size: Any) -> fx.Node:
    if isinstance(offset, int) and isinstance(size, int):
        return graph.call_function(aten.slice.Tensor, args=(buffer, 0, offset, offset + size))
    end = graph.call_function(operator.add, args=(offset, size))
    return graph.call_function(aten.slice.Tensor, args=(buffer, 0, offset, end))
