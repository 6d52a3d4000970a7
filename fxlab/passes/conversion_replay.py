"""Template replay for the conversion pass: convert a repeated FX node once, copy after.

LLM graphs repeat the same layer many times, so most ``call_function`` nodes are
converted with inputs that look exactly like an earlier node's: same target, same
tensor descs, same Python arguments, same fake output dtype and shape. A converter that
is a pure function of those (most are) then creates the same ops, except for names and
wiring.
:class:`ReplayCache` records the ops a node's conversion created as a
:class:`Template` keyed by that signature (:func:`node_signature`), and later nodes with
the same key get fresh copies of them: names from the builder's own naming (same types
in the same order give the names the converter would have got), inputs rewired to the
node's own arguments, provenance and scope attrs applied as for a converted node.

The cache lives in one conversion run (an ``AscendIrConverter``): nothing carries over
between runs. What the key cannot see makes a converter unfit for replay: reading the
producer ops of its inputs (``x.op.type``), the strides, storage offset or device of its
fake outputs, builder or graph state, or anything global.
Such converters are registered with ``replayable=False``; converters fxlab does not ship
(user and TorchAir plugins, auto converters) are not replayed unless they say so. A
template is also refused when the recording shows something the replay could not
reproduce (an op reading a tensor that is not an argument, a name taken without an op,
an explicit op name, other provenance): that node is then converted every time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from operator import add
from typing import Any, Callable, Iterator, Sequence

import torch
import torch.fx as fx
from torch._subclasses.fake_tensor import FakeTensor
from torch.fx.immutable_collections import immutable_list

from fxlab.ir import speedups
from fxlab.ir.builder import GraphBuilder, Tensor
from fxlab.ir.model import FrozenAttrs, IrOp, TensorDesc

@dataclass(slots=True)
class Template:
    """What one conversion created, relative to its external tensor arguments: one row
    per op, in order, ``(type, inputs, attrs, input descs, output descs)``.

    Inputs are positions in the replay's table of input strings: the external tensors'
    ``"op:index"``, then ``""`` (an absent optional input), then, per ``exports`` entry
    (op, suffix), that op's new name + suffix: the outputs (``":0"``) and control edges
    (``":-1"``) later ops of the template read. Attrs are before scope attrs. Copies
    share the attrs and desc tuples: ops never change them in place (see IrOp).
    """

    rows: tuple[tuple[str, tuple[int, ...], FrozenAttrs, tuple[TensorDesc, ...], tuple[TensorDesc, ...]], ...]
    # The builder's name candidates per op (a template lives in one run, with one builder).
    name_sources: tuple[Iterator[str], ...]
    export_ops: tuple[int, ...]
    export_suffixes: tuple[str, ...]
    result: Any  # see _result_spec
    result_tensors: tuple[tuple[int, int], ...]  # (template op, output index) per distinct result Tensor
    result_has_external: bool  # the result hands back an argument: its desc is re-set from meta
    single: tuple[int, int] | None  # the result is this one new tensor


class Unkeyable(Exception):
    """A node whose conversion inputs the key cannot describe exactly."""


class Unreplayable(Exception):
    """A recording the replay could not reproduce."""


# -- the key -----------------------------------------------------------------------------
_BARE = frozenset({int, str, type(None)})  # types that cannot compare equal to each other
_INTS = frozenset({int})
_SEQUENCES = frozenset({list, tuple, immutable_list})
_OPAQUE = frozenset({torch.dtype, torch.device, torch.memory_format, torch.layout, torch._ops.OpOverload})
_FAKE_TENSOR = FakeTensor
_NODE = fx.Node
_KWARGS = object()  # in a key, between the positional and the keyword arguments
_new_op = object.__new__  # an IrOp without its __init__ (replay sets every field)


def _plain_key(value: Any, kind: type) -> Any:
    """Python values by value and type (``1``, ``True`` and ``1.0`` differ; so do ``0.0``
    and ``-0.0``; NaN never equals another NaN object, so it only misses)."""
    if kind in _BARE:
        return value
    if kind is float:
        return (float, value, math.copysign(1.0, value))
    if kind is bool:
        return (bool, value)
    if kind in _SEQUENCES:
        if _INTS.issuperset(map(type, value)):
            return (kind, tuple(value))
        return (kind, tuple([_plain_key(v, type(v)) for v in value]))
    if kind in _OPAQUE:
        return (kind, value)
    raise Unkeyable


def _tensor_key(tensor: Tensor, tensors: list[Tensor]) -> tuple[int, int]:
    """A graph tensor by which argument it is, in first-seen order (by identity:
    converters may test ``a is b``), and by its desc. Descs are never mutated, so the
    desc object stands for its content; the cache keeps the descs of recorded keys alive
    (see ReplayCache.pin), so no other desc can take over the id of one in a stored key."""
    for slot, seen in enumerate(tensors):
        if seen is tensor:
            break
    else:
        slot = len(tensors)
        tensors.append(tensor)
    return (slot, id(tensor.op.output_desc[tensor.index]))


def _arg_key(arg: Any, value_of: Callable[[fx.Node], Any], tensors: list[Tensor]) -> Any:
    kind = type(arg)
    if kind is _NODE:
        return _value_key(value_of(arg), tensors)
    if kind in _SEQUENCES and not _INTS.issuperset(map(type, arg)):
        return (kind, tuple([_arg_key(a, value_of, tensors) for a in arg]))
    return _plain_key(arg, kind)


def _value_key(value: Any, tensors: list[Tensor]) -> Any:
    """The key of an FX node's converted value: a graph tensor, or what a node with
    several outputs or a non-tensor placeholder holds."""
    kind = type(value)
    if kind is Tensor:
        return _tensor_key(value, tensors)
    if kind is list or kind is tuple:
        return (kind, "value", tuple([_value_key(v, tensors) for v in value]))
    return _plain_key(value, kind)


def _meta_key(val: Any) -> Any:
    """The node's fake output as replayable converters may read it: dtype and shape.
    Symbolic sizes stay SymInts, which refuse to be hashed: the lookup then fails."""
    if isinstance(val, torch.Tensor):
        return (val.dtype, val.shape)
    kind = type(val)
    if kind is list or kind is tuple:
        return (kind, "meta", tuple([_meta_key(v) for v in val]))
    return _plain_key(val, kind)


def node_signature(node: fx.Node, target_name: str, value_of: Callable[[fx.Node], Any]) -> tuple[tuple[Any, ...], list[Tensor]] | None:
    """The replay key of ``node`` (target, arguments, fake output) and its distinct
    graph-tensor arguments (``value_of`` gives an FX node's converted value); ``None``
    when the key cannot describe them. The key may still be unhashable (symbolic sizes
    in the fake output)."""
    tensors: list[Tensor] = []
    key: list[Any] = [target_name]
    append = key.append
    try:
        # node._args/_kwargs: the public properties return them through a Python call.
        for arg in node._args:  # the common kinds inline: this runs for nearly every node
            kind = type(arg)
            if kind is _NODE:
                value = value_of(arg)
                if type(value) is Tensor and value not in tensors:  # a new tensor (no __eq__: identity)
                    append((len(tensors), id(value.op.output_desc[value.index])))
                    tensors.append(value)
                else:
                    append(_value_key(value, tensors))
            elif kind is int:
                append(arg)
            elif kind is immutable_list and _INTS.issuperset(map(type, arg)):
                append((kind, tuple(arg)))
            else:
                append(_arg_key(arg, value_of, tensors))
        kwargs = node._kwargs
        if kwargs:
            append(_KWARGS)
            for name, arg in kwargs.items():
                append(name)
                append(_arg_key(arg, value_of, tensors))
        val = node.meta.get("val")
        if type(val) is _FAKE_TENSOR:  # read with subclass torch functions off (AscendIrConverter.run)
            append((val.dtype, val.shape))
        else:
            append(_meta_key(val))
    except Unkeyable:
        return None
    return tuple(key), tensors


# -- recording ---------------------------------------------------------------------------
@dataclass(slots=True)
class BuilderMark:
    """Builder state before a conversion, to check what the converter did to it."""

    ops: int
    names: int
    explicit_names: int
    inputs: int
    outputs: int

    @classmethod
    def of(cls, builder: GraphBuilder) -> "BuilderMark":
        graph = builder.graph
        return cls(len(graph.ops), builder.names_taken, builder.explicit_names, len(graph.inputs), len(graph.outputs))


def record_template(
    builder: GraphBuilder,
    mark: BuilderMark,
    externals: Sequence[Tensor],
    attrs_before_scopes: Sequence[FrozenAttrs],
    result: Any,
    fx_node: str,
    source: str | None,
) -> Template:
    """The template of the ops created since ``mark`` (their descs as they are now, after
    the pass set the result's descs from the fake output); raises :class:`Unreplayable`."""
    new_ops = builder.graph.ops[mark.ops:]
    _check_builder(builder, mark, new_ops, fx_node, source)
    exports = _internal_reads(new_ops)
    table = _external_table(externals)
    for j, suffix in exports:  # the positions the replay will give them
        table[new_ops[j].name + suffix] = len(table)
    inputs = tuple(tuple(_position(text, table) for text in op.inputs) for op in new_ops)
    positions = {id(op): j for j, op in enumerate(new_ops)}
    slots = {id(t): k for k, t in enumerate(externals)}
    order: list[tuple[int, int]] = []
    spec = _result_spec(result, positions, slots, {}, order)
    types = tuple(op.type for op in new_ops)
    return Template(
        rows=tuple(zip(types, inputs, attrs_before_scopes, (op.input_desc for op in new_ops), (op.output_desc for op in new_ops))),
        name_sources=tuple(builder.name_source(t) for t in types),
        export_ops=tuple(j for j, _ in exports),
        export_suffixes=tuple(suffix for _, suffix in exports),
        result=spec,
        result_tensors=tuple(order),
        result_has_external=_has_external(spec),
        single=order[0] if spec == ("new", 0) else None,
    )


def _check_builder(builder: GraphBuilder, mark: BuilderMark, new_ops: list[IrOp], fx_node: str, source: str | None) -> None:
    graph = builder.graph
    if builder.names_taken - mark.names != len(new_ops) or builder.explicit_names != mark.explicit_names:
        raise Unreplayable("names taken without an op, or given explicitly")
    if len(graph.inputs) != mark.inputs or len(graph.outputs) != mark.outputs:
        raise Unreplayable("graph inputs or outputs changed")
    for op in new_ops:
        if op.fx_node != fx_node or op.source != source:
            raise Unreplayable("an op with other provenance")


def _internal_reads(new_ops: list[IrOp]) -> list[tuple[int, str]]:
    """(op, suffix) for each output (``":0"``) or control edge (``":-1"``) of a new op
    that a later new op reads, in op order."""
    index = {op.name: j for j, op in enumerate(new_ops)}
    reads: set[tuple[int, str]] = set()
    for j, op in enumerate(new_ops):
        for text in op.inputs:
            name, sep, suffix = text.rpartition(":")
            producer = index.get(name) if sep else None
            if producer is not None and producer < j:
                reads.add((producer, sep + suffix))
    return sorted(reads)


def _external_table(externals: Sequence[Tensor]) -> dict[str, int]:
    """Input string -> position in the replay's table: the external tensors first
    (``"op:index"``), then ``""`` (an absent optional input); the template's ops' outputs
    follow."""
    table: dict[str, int] = {}
    for k, tensor in enumerate(externals):
        text = tensor.tensor
        if text in table:  # two argument objects for one tensor: wiring would be ambiguous
            raise Unreplayable("two arguments name the same tensor")
        table[text] = k
    table[""] = len(externals)
    return table


def _position(text: str, table: dict[str, int]) -> int:
    position = table.get(text)
    if position is None:
        raise Unreplayable(f"an op reads {text!r}, which is neither an argument nor made by the node")
    return position


def _result_spec(result: Any, positions: dict[int, int], slots: dict[int, int], tensors: dict[int, int], order: list[tuple[int, int]]) -> Any:
    """``("ext", slot)`` for an argument handed back, ``("new", k)`` for the k-th
    distinct result tensor, ``("val", v)`` for a plain value, ``(type, [specs])`` for a
    list or tuple."""
    kind = type(result)
    if kind is Tensor:
        slot = slots.get(id(result))
        if slot is not None:
            return ("ext", slot)
        k = tensors.get(id(result))
        if k is None:
            j = positions.get(id(result.op))
            if j is None:
                raise Unreplayable("the result is a tensor the node neither made nor received")
            k = tensors[id(result)] = len(order)
            order.append((j, result.index))
        return ("new", k)
    if kind is list or kind is tuple:
        return (kind, [_result_spec(r, positions, slots, tensors, order) for r in result])
    if kind in (int, float, bool, str, type(None)):
        return ("val", result)
    raise Unreplayable(f"a result of type {kind.__name__}")


def _has_external(spec: Any) -> bool:
    head = spec[0]
    if head == "ext":
        return True
    if head is list or head is tuple:
        return any(_has_external(s) for s in spec[1])
    return False


# -- replay ------------------------------------------------------------------------------
def replay_template(template: Template, builder: GraphBuilder, externals: Sequence[Tensor], fx_node: str, source: str | None) -> tuple[Any, list[str]]:
    """Append fresh copies of the template's ops; the node's result and its op names."""
    # All names drawn, then taken: the same as one at a time. The recording drew each
    # type's own name (or passed it), so every candidate now is ``Type_n``, and no two
    # types share one (``Add_1_2`` is only ``Add_1``'s).
    names = list(map(next, template.name_sources))
    builder.taken_names.update(names)
    if len(externals) == 1:  # most nodes: written out, a comprehension costs a call
        t = externals[0]
        table = [f"{t.op.name}:{t.index}", ""]
    else:
        table = [f"{t.op.name}:{t.index}" for t in externals]
        table.append("")
    exports = template.export_ops
    if exports:
        if len(exports) == 1:  # a Const and the op reading it: most templates
            table.append(names[exports[0]] + template.export_suffixes[0])
        else:
            table += map(add, map(names.__getitem__, exports), template.export_suffixes)
    ops = builder.graph.ops
    start = len(ops)
    native = speedups.native
    if native is None or native.copy_ops(ops, template.rows, names, table, fx_node, source) is None:
        _copy_ops(ops, template.rows, names, table, fx_node, source)
    if builder.scope_stack:
        builder.apply_scopes(ops[start:])
    single = template.single
    if single is not None:  # one new tensor: the common case
        return Tensor(ops[start + single[0]], single[1]), names
    tensors = [Tensor(ops[start + j], index) for j, index in template.result_tensors]
    return _build_result(template.result, tensors, externals), names


def _copy_ops(ops: list[IrOp], rows: tuple[Any, ...], names: list[str], table: list[str], fx_node: str, source: str | None) -> None:
    """Append one new op per template row to ``ops`` (the C loop's Python twin)."""
    read = table.__getitem__
    append = ops.append
    # A plain loop: templates are a few ops, and a chain of maps costs more to set up.
    # The op's fields are set here rather than by IrOp(...): its __init__ costs as much
    # as the rest of a copy (test_conversion_replay compares every field).
    for name, (op_type, inputs, attrs, input_descs, output_descs) in zip(names, rows):
        op = _new_op(IrOp)
        op.name = name
        op.type = op_type
        op.inputs = [*map(read, inputs)]
        op.attrs = attrs  # attrs and descs are read-only and shared (see IrOp)
        op.input_desc = input_descs
        op.output_desc = output_descs
        op.fx_node = fx_node
        op.source = source
        append(op)


def _build_result(spec: Any, tensors: list[Tensor], externals: Sequence[Tensor]) -> Any:
    head = spec[0]
    if head == "new":
        return tensors[spec[1]]
    if head == "ext":
        return externals[spec[1]]
    if head == "val":
        return spec[1]
    return head(_build_result(s, tensors, externals) for s in spec[1])


class ReplayCache:
    """Templates of one conversion run, by :func:`node_signature` key. A key whose
    recording was refused maps to ``None`` (convert every time)."""

    def __init__(self) -> None:
        self.templates: dict[tuple[Any, ...], Template | None] = {}
        self._pinned: list[TensorDesc] = []
        # Descs made from fake values, one object per distinct (name, dtype, shape), so
        # that equal descs are the same object and keys by desc identity match.
        self.descs: dict[tuple[Any, ...], TensorDesc] = {}

    def pin(self, externals: Sequence[Tensor]) -> None:
        """Keep the descs of a key about to be recorded alive for the run: their ids are
        in the key (the pass may replace an argument's desc after its conversion)."""
        self._pinned += [t.op.output_desc[t.index] for t in externals]
