"""Ops of a graph sorted into *shapes*: ops that a dump writes the same way but for
their name, inputs and provenance (FX node, source line).

A converted graph repeats a few hundred shapes thousands of times (every layer of a
decoder emits the same ops with the same attrs and tensor descs), so the dump writers
render each shape once and, per op, only add what differs. The shapes of a graph are
found once and can be shared by all four writers (:func:`fxlab.ir.dumps.write_ir_dumps`).

Two ops have the same shape when they have the same type, the same attr names in the
same order with equal values, equal input and output descs, and provenance present or
absent alike. Values are compared with their types and floats by their bits, so values
that are equal yet print differently (``0.0`` and ``-0.0``, ``1`` and ``True``) are
different shapes. Attrs and descs are first looked up by identity (converters share
them), then by value.

Graph inputs are the exception: a ``Data`` op whose only attr is its int ``index`` has a
shape of its own only because of that number, so its shape leaves the index out
(*indexed* shapes) and writers put each op's index in (:func:`op_pieces`).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter
from typing import Any, Callable, Iterable, TypeVar

from fxlab.ir import speedups
from fxlab.ir.model import Attr, AttrKind, IrGraph, IrOp, TensorDesc, TensorValue

INDEX_ATTR = "index"
INPUTS_END = "\x00"  # closes each op's inputs in OpShapes.inputs (never in a plain string)
_INDEX_SLOT = object()  # an indexed shape's index, in its value key


def is_plain(text: str) -> bool:
    """Whether ``text`` is printable ASCII without quotes or backslashes (written as is
    inside quotes by every text dump). Tested in C: faster than a regular expression."""
    return text.isascii() and text.isprintable() and '"' not in text and "'" not in text and "\\" not in text


@dataclass(frozen=True, slots=True)
class OpShapes:
    """``index[i]`` is the shape number of ``graph.ops[i]``; ``first[n]`` the first op of
    shape ``n`` (the one a writer renders the shape from)."""

    index: list[int]
    first: list[IrOp]
    plain: bool  # no name, input, FX node or source needs an escape in JSON or pbtxt
    inputs: list[str]  # every op's inputs in op order, each op's closed by INPUTS_END
    fx_nodes: frozenset[str | None]  # every op's FX node, once each
    sources: frozenset[str | None]  # every op's source, once each
    indexed: frozenset[int] = frozenset()  # shapes without their ops' ``index`` values
    indexed_ops: list[int] | None = None  # positions of the ops of indexed shapes


def value_key(value: Any) -> Any:
    """A dict key equal for two attr values only if every dump writes them alike."""
    kind = type(value)
    if kind is float:
        return (float, struct.pack("<d", value))  # keeps -0.0 and NaN payloads apart
    if kind is tuple or kind is list:
        return (kind, tuple(map(value_key, value)))
    if kind is TensorValue:
        return (kind, desc_key(value.desc), value.data)
    return (kind, value)


def desc_key(desc: TensorDesc) -> Any:
    """A dict key equal for two tensor descs only if every dump writes them alike."""
    attrs = tuple((k, a.kind, value_key(a.value)) for k, a in desc.attrs.items())
    return (desc.name, desc.dtype, value_key(desc.shape), desc.layout, attrs)


def _attr_key(attr: Attr) -> Any:
    return (attr.kind, value_key(attr.value))


def desc_fast_key(desc: TensorDesc) -> Any:
    """:func:`desc_key`, cheaper for descs without attrs (dims are ints)."""
    if not desc.attrs and type(desc.shape) is tuple:  # the common case; dims are ints
        return (desc.name, desc.dtype, desc.shape, desc.layout)
    return desc_key(desc)


class _ValueKeys:
    """Value keys of attrs and descs, each made once per object (the graph keeps the
    objects alive, so their ids are not reused meanwhile)."""

    def __init__(self) -> None:
        self.attrs: dict[int, Any] = {}
        self.descs: dict[int, Any] = {}

    def attr(self, attr: Attr) -> Any:
        key = self.attrs.get(id(attr))
        if key is None:
            key = self.attrs[id(attr)] = _attr_key(attr)
        return key

    def desc(self, desc: TensorDesc) -> Any:
        key = self.descs.get(id(desc))
        if key is None:
            key = self.descs[id(desc)] = desc_fast_key(desc)
        return key

    def op(self, op: IrOp, indexed: bool = False) -> tuple[Any, ...]:
        """What makes ``op``'s shape, with attrs and descs compared by value (its index
        left out when ``indexed``)."""
        return (
            op.type, not op.name, len(op.inputs), op.fx_node is None, op.source is None, tuple(op.attrs),
            (_INDEX_SLOT,) if indexed else tuple(map(self.attr, op.attrs.values())),
            tuple(map(self.desc, op.input_desc)),
            tuple(map(self.desc, op.output_desc)),
        )


def _identity_groups(ops: list[IrOp]) -> tuple[list[int], int]:
    """Per op, a group number: ops with the same type, presence of a name, input count,
    presence of an FX node and a source, and the same attrs and desc tuples by identity
    (ops never change those in place, and repeated ops share them: see IrOp); and the
    number of groups. One key and one hash per op, made in one comprehension."""
    groups: dict[tuple[Any, ...], int] = {}
    group_of = groups.setdefault
    index = [
        group_of((op.type, not op.name, len(op.inputs), op.fx_node is None, op.source is None, id(op.attrs), id(op.input_desc), id(op.output_desc)), len(groups))
        for op in ops
    ]
    return index, len(groups)


def _all_plain(ops: list[IrOp], inputs: list[str], *distinct: Iterable[str | None]) -> bool:
    """Whether every name and input (``inputs``: as OpShapes has them), and every FX node
    and source (``distinct``: each kind once each) is printable ASCII without quotes or
    backslashes, so that both text formats can write them without escapes."""
    closed_inputs = "".join(inputs)
    if closed_inputs.count(INPUTS_END) != len(ops):  # an input holds the end mark itself
        return False
    texts = ["".join(map(attrgetter("name"), ops)), closed_inputs.replace(INPUTS_END, "")]
    texts += ["".join(filter(None, values)) for values in distinct]
    return is_plain("".join(texts))


def _closed_inputs(ops: list[IrOp]) -> list[str]:
    """Every op's inputs in op order, each op's followed by INPUTS_END."""
    return list(chain.from_iterable(chain.from_iterable(zip(map(attrgetter("inputs"), ops), repeat((INPUTS_END,))))))


def is_indexed(op: IrOp) -> bool:
    """Whether ``op`` is a graph input whose only attr is its int index (see above)."""
    if op.type != "Data" or len(op.attrs) != 1:
        return False
    attr = op.attrs.get(INDEX_ATTR)
    return attr is not None and attr.kind is AttrKind.INT and type(attr.value) is int


def op_shapes(graph: IrGraph) -> OpShapes:
    """The shapes of ``graph``'s ops (the graph must not change while they are used).

    Ops are first grouped by the identity of their attrs and descs (converters share
    them, so this finds most repeats cheaply), then each group is keyed by value."""
    ops = graph.ops
    group_index, group_first = _grouped(ops)
    value_keys = _ValueKeys()
    shapes: dict[tuple[Any, ...], int] = {}
    shape_of_group: list[int] = []
    first: list[IrOp] = []
    indexed: set[int] = set()
    for first_op in group_first:
        op = ops[first_op]
        has_index = is_indexed(op)
        try:
            shape = shapes.setdefault(value_keys.op(op, has_index), len(first))
        except TypeError:  # an unhashable value: a shape of its own
            shape = len(first)
        if shape == len(first):
            first.append(op)
            if has_index:
                indexed.add(shape)
        shape_of_group.append(shape)
    index = list(map(shape_of_group.__getitem__, group_index))
    indexed_ops = [i for i, shape in enumerate(index) if shape in indexed] if indexed else None
    inputs, plain, fx_nodes, sources = _scanned(ops)
    return OpShapes(index, first, plain, inputs, fx_nodes, sources, frozenset(indexed), indexed_ops)


def _grouped(ops: list[IrOp]) -> tuple[list[int], list[int]]:
    """Per op its identity group (:func:`_identity_groups`), and the position of each
    group's first op; by the C loop when it is built."""
    native = speedups.native
    groups = native.identity_groups(ops) if native is not None else None
    if groups is not None:
        return groups
    group_index, group_count = _identity_groups(ops)
    first_of = dict(zip(reversed(group_index), range(len(ops) - 1, -1, -1)))
    return group_index, [first_of[group] for group in range(group_count)]


def _scanned(ops: list[IrOp]) -> tuple[list[str], bool, frozenset[str | None], frozenset[str | None]]:
    """OpShapes' ``inputs``, ``plain``, ``fx_nodes`` and ``sources``; by the C loop when
    it is built."""
    native = speedups.native
    scan = native.scan_ops(ops, INPUTS_END) if native is not None else None
    if scan is not None:
        return scan
    fx_nodes = frozenset(map(attrgetter("fx_node"), ops))
    sources = frozenset(map(attrgetter("source"), ops))
    inputs = _closed_inputs(ops)
    return inputs, _all_plain(ops, inputs, fx_nodes, sources), fx_nodes, sources


Pieces = TypeVar("Pieces")


def op_pieces(graph: IrGraph, shapes: OpShapes, pieces: list[Pieces], fillers: dict[int, Callable[[int], Pieces]]) -> Iterable[Pieces]:
    """Per op of ``graph``, the pieces a writer made for its shape (``pieces``, one per
    shape); an op of an indexed shape gets ``fillers[shape](its index)`` instead."""
    if not shapes.indexed_ops:
        return map(pieces.__getitem__, shapes.index)
    out = list(map(pieces.__getitem__, shapes.index))
    ops, index = graph.ops, shapes.index
    for i in shapes.indexed_ops:
        out[i] = fillers[index[i]](ops[i].attrs[INDEX_ATTR].value)
    return out
