"""GE ``ModelDef`` protobuf: the IR model written as / read from it, with the schema of
:mod:`fxlab.ir.ge_schema`.

Writing does not go through message objects: :func:`encode_model_def` emits the wire
bytes directly, reusing the bytes of repeated pieces (tensor descs and attrs repeat a
lot), which is many times faster than building one message per field. The bytes are
those ``SerializeToString(deterministic=True)`` would give (map entries sorted by key).
Reading parses with the protobuf runtime and walks the messages.

Conventions on the wire, as GE and TorchAir use them:

- ``AttrDef.dt`` and ``ListValue.dt`` carry GE's C++ type numbers (TorchAir's Python
  ``DataType``, e.g. ``DT_FLOAT=0``); ``TensorDescriptor.dtype`` uses the proto enum.
- Lists set ``val_type`` so an empty list keeps its kind.
- Floats are 32-bit on the wire; reading gives back the shortest decimal that has the
  same 32-bit value, so ``1e-05`` reads back as ``1e-05``. A double that is not such a
  decimal (e.g. ``0.1 + 0.2``) reads back as its nearest short decimal.
- An op's provenance is kept as string attrs ``_fxlab_fx_node`` / ``_fxlab_source``;
  reading strips them back into :attr:`IrOp.fx_node` / :attr:`IrOp.source`.
"""
from __future__ import annotations

import abc
import math
import struct
from itertools import chain
from typing import Any, Callable, Iterable

from fxlab.ir import speedups
from fxlab.ir.ge_schema import GeProtoError, schema
from fxlab.ir.model import (
    DTYPE_FROM_TORCHAIR_NUMBER,
    TORCHAIR_DTYPE_NUMBER,
    Attr,
    AttrKind,
    DataType,
    IrGraph,
    IrOp,
    TensorDesc,
    TensorValue,
)
from fxlab.ir.op_shapes import INDEX_ATTR, OpShapes, op_pieces, op_shapes

PROVENANCE_FX_NODE = "_fxlab_fx_node"
PROVENANCE_SOURCE = "_fxlab_source"

# ``AttrDef.ListValue.ListValueType`` numbers.
VT_LIST_NONE, VT_LIST_STRING, VT_LIST_INT, VT_LIST_FLOAT, VT_LIST_BOOL = 0, 1, 2, 3, 4
VT_LIST_DATA_TYPE = 10


# --------------------------------------------------------------------------------------
# Writing: IR model -> wire bytes.
# --------------------------------------------------------------------------------------
def _make_small_varints(limit: int) -> list[bytes]:
    out = []
    for n in range(limit):
        out.append(bytes([n]) if n < 0x80 else bytes([(n & 0x7F) | 0x80, n >> 7]))
    return out


_SMALL_VARINTS = _make_small_varints(1 << 14)


def _varint(n: int) -> bytes:
    if 0 <= n < 16384:
        return _SMALL_VARINTS[n]
    if n < 0:
        n += 1 << 64  # int64 two's complement, ten bytes on the wire
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _ld(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: tag, length, payload."""
    return tag + _varint(len(payload)) + payload


def _float32(value: float) -> bytes:
    try:
        return struct.pack("<f", value)
    except OverflowError:  # beyond float32 range: what a C++ narrowing cast gives
        return struct.pack("<f", math.copysign(math.inf, value))


_LIST_TAGS = {  # kind -> (ListValue field tag, val_type bytes)
    AttrKind.LIST_STR: (b"\x12", b"\xa0\x01" + _varint(VT_LIST_STRING)),
    AttrKind.LIST_INT: (b"\x1a", b"\xa0\x01" + _varint(VT_LIST_INT)),
    AttrKind.LIST_FLOAT: (b"\x22", b"\xa0\x01" + _varint(VT_LIST_FLOAT)),
    AttrKind.LIST_BOOL: (b"\x2a", b"\xa0\x01" + _varint(VT_LIST_BOOL)),
    AttrKind.LIST_DTYPE: (b"\x62", b"\xa0\x01" + _varint(VT_LIST_DATA_TYPE)),
}
_UNCACHED_KINDS = frozenset({AttrKind.FLOAT, AttrKind.LIST_FLOAT, AttrKind.TENSOR})  # -0.0 == 0.0; tensors unhashable


def _attr_payload(attr: Attr) -> bytes:
    """The bytes of one ``AttrDef``."""
    kind, value = attr.kind, attr.value
    if kind is AttrKind.STR:
        return _ld(b"\x12", value.encode())
    if kind is AttrKind.INT:
        return b"\x18" + _varint(value)
    if kind is AttrKind.FLOAT:
        return b"\x25" + _float32(value)
    if kind is AttrKind.BOOL:
        return b"\x28\x01" if value else b"\x28\x00"
    if kind is AttrKind.DTYPE:
        return b"\x78" + _varint(TORCHAIR_DTYPE_NUMBER[value])
    if kind is AttrKind.TENSOR:
        return _ld(b"\x62", _tensor_payload(value))
    if kind is AttrKind.LIST_LIST_INT:
        rows = (_ld(b"\x0a", _ld(b"\x0a", b"".join(map(_varint, row))) if row else b"") for row in value)
        return _ld(b"\x72", b"".join(rows))
    return _ld(b"\x0a", _list_payload(kind, value))


def _list_payload(kind: AttrKind, values: Iterable[Any]) -> bytes:
    tag, val_type = _LIST_TAGS[kind]
    values = tuple(values)
    if not values:
        return val_type
    if kind is AttrKind.LIST_STR:
        return b"".join(_ld(tag, v.encode()) for v in values) + val_type
    if kind is AttrKind.LIST_INT:
        packed = b"".join(map(_varint, values))
    elif kind is AttrKind.LIST_FLOAT:
        packed = b"".join(_float32(v) for v in values)
    elif kind is AttrKind.LIST_BOOL:
        packed = bytes(1 if v else 0 for v in values)
    else:
        packed = b"".join(_varint(TORCHAIR_DTYPE_NUMBER[v]) for v in values)
    return _ld(tag, packed) + val_type


def _tensor_payload(value: TensorValue) -> bytes:
    payload = _ld(b"\x0a", _desc_payload(value.desc))
    return payload + _ld(b"\x12", value.data) if value.data else payload


def _desc_payload(desc: TensorDesc) -> bytes:
    parts = []
    if desc.name:
        parts.append(_ld(b"\x0a", desc.name.encode()))
    if desc.dtype:
        parts.append(b"\x10" + _varint(desc.dtype))
    if desc.shape:
        parts.append(_ld(b"\x1a", _ld(b"\x0a", b"".join(map(_varint, desc.shape)))))
    if desc.layout:
        parts.append(_ld(b"\x22", desc.layout.encode()))
    for key in sorted(desc.attrs):
        parts.append(_map_entry(b"\x2a", key, _attr_payload(desc.attrs[key])))
    return b"".join(parts)


def _map_entry(tag: bytes, key: str, value_payload: bytes) -> bytes:
    return _ld(tag, _ld(b"\x0a", key.encode()) + _ld(b"\x12", value_payload))


def desc_cache_key(tag: Any, desc: TensorDesc) -> tuple[Any, ...] | None:
    """A dict key for a desc's encoding, or ``None`` when it cannot be cached."""
    if not desc.attrs:
        return (tag, desc.name, desc.dtype, desc.shape, desc.layout)
    if any(a.kind in _UNCACHED_KINDS for a in desc.attrs.values()):
        return None
    key = (tag, desc.name, desc.dtype, desc.shape, desc.layout, tuple(desc.attrs.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


class _WireEncoder:
    """Encodes one graph; remembers the bytes of tensor descs and attrs it has seen
    (graphs repeat them a lot), so most ops are a few dict lookups and one join."""

    def __init__(self) -> None:
        self.desc_fields: dict[tuple[Any, ...], bytes] = {}
        self.attr_entries: dict[tuple[Any, ...], bytes] = {}
        self.provenance_entries: dict[tuple[str, str], bytes] = {}
        # Attrs that cannot be keyed by value (tensors, floats) by identity instead: a
        # graph shares one attr object among the ops that have the same constant, and it
        # keeps every attr alive while it is encoded, so an id is never reused meanwhile.
        self.shared_attr_entries: dict[tuple[bytes, str, int], bytes] = {}

    def model(self, graph: IrGraph) -> bytes:
        head = _ld(b"\x0a", graph.name.encode()) if graph.name else b""
        return head + _ld(b"\x3a", self.graph(graph))

    def graph(self, graph: IrGraph) -> bytes:
        parts = [_ld(b"\x0a", graph.name.encode())] if graph.name else []
        parts += [_ld(b"\x22", s.encode()) for s in graph.inputs]
        parts += [_ld(b"\x2a", s.encode()) for s in graph.outputs]
        parts += [self.op(op) for op in graph.ops]
        parts += [self.attr_entry(b"\x5a", k, graph.attrs[k]) for k in sorted(graph.attrs)]
        return b"".join(parts)

    def op(self, op: IrOp) -> bytes:
        name, op_type = op.name.encode(), op.type.encode()
        parts = [b"\x0a", _varint(len(name)), name] if name else []
        if op_type:
            parts += (b"\x12", _varint(len(op_type)), op_type)
        for producer in op.inputs:
            encoded = producer.encode()
            parts += (b"\x2a", _varint(len(encoded)), encoded)
        parts += self.op_attrs(op)
        desc_field = self.desc_field
        parts += [desc_field(b"\x8a\x02", d) for d in op.input_desc]
        parts += [desc_field(b"\x92\x02", d) for d in op.output_desc]
        payload = b"".join(parts)
        return b"\x32" + _varint(len(payload)) + payload

    def op_attrs(self, op: IrOp) -> list[bytes]:
        """The ``OpDef.attr`` map entries, provenance included, sorted by key."""
        attrs, entry = op.attrs, self.attr_entry
        if op.fx_node is None and op.source is None:
            return [entry(b"\x52", key, attrs[key]) for key in sorted(attrs)]
        items = [(key, entry(b"\x52", key, attr)) for key, attr in attrs.items()]
        for key, value in ((PROVENANCE_FX_NODE, op.fx_node), (PROVENANCE_SOURCE, op.source)):
            if value is not None:
                encoded = self.provenance_entries.get((key, value))
                if encoded is None:
                    encoded = _map_entry(b"\x52", key, _ld(b"\x12", value.encode()))
                    self.provenance_entries[(key, value)] = encoded
                items.append((key, encoded))
        items.sort()  # keys are unique, so only keys are compared
        return [encoded for _, encoded in items]

    def desc_field(self, tag: bytes, desc: TensorDesc) -> bytes:
        key = desc_cache_key(tag, desc)
        if key is None:
            return _ld(tag, _desc_payload(desc))
        encoded = self.desc_fields.get(key)
        if encoded is None:
            encoded = self.desc_fields[key] = _ld(tag, _desc_payload(desc))
        return encoded

    def attr_entry(self, tag: bytes, key: str, attr: Attr) -> bytes:
        if attr.kind in _UNCACHED_KINDS:
            encoded = self.shared_attr_entries.get((tag, key, id(attr)))
            if encoded is None:
                encoded = self.shared_attr_entries[(tag, key, id(attr))] = _map_entry(tag, key, _attr_payload(attr))
            return encoded
        try:
            cache_key = (tag, key, attr.kind, attr.value)
            encoded = self.attr_entries.get(cache_key)
        except TypeError:  # an unhashable value (a list where a tuple was expected)
            return _map_entry(tag, key, _attr_payload(attr))
        if encoded is None:
            encoded = self.attr_entries[cache_key] = _map_entry(tag, key, _attr_payload(attr))
        return encoded


# The fast path builds the bytes as a latin-1 string (one code point per byte), so
# that each op is one f-string; it is taken when every name, input, FX node and source
# is ASCII (then its UTF-8 bytes are its characters).
_VARINT_TEXT = [v.decode("latin-1") for v in _SMALL_VARINTS]
_OP_FIELD_HEADS = ["2" + v for v in _VARINT_TEXT]  # GraphDef.op's tag and a length


def _varint_text(n: int) -> str:
    return _VARINT_TEXT[n] if n < 16384 else _varint(n).decode("latin-1")


def _provenance_text(key: str, value: str) -> str:
    return _map_entry(b"\x52", key, _ld(b"\x12", value.encode())).decode("latin-1")


def _provenance_texts(key: str, values: Iterable[str | None]) -> dict[str | None, str]:
    """An op's provenance attr entry (as latin-1 text) per value (``""`` for ``None``);
    around the value, the bytes depend only on its length, so they are made once per
    length."""
    present = [value for value in values if value is not None]
    heads = {}
    for length in set(map(len, present)):
        sample = "x" * length
        heads[length] = _provenance_text(key, sample)[:-length or None]
    texts: dict[str | None, str] = {value: heads[len(value)] + value for value in present}
    texts[None] = ""
    return texts


ShapePieces = tuple[str, str, str, str]


class ShapePieceWriter(abc.ABC):
    """The serialized text of each op shape, in the four pieces that go after an op's
    name, inputs, FX node entry and source entry (attrs sort around the two provenance
    entries). The protobuf and text writers each fill in how an op's pieces and one
    attr entry are made."""

    def pieces(self, op: IrOp) -> ShapePieces | None:
        """``None`` when the fast path cannot write the op's shape: an attr named like a
        provenance entry, or an op without a name."""
        if PROVENANCE_FX_NODE in op.attrs or PROVENANCE_SOURCE in op.attrs or not op.name:
            return None
        if len(op.attrs) == 1:  # graph inputs (Data: ``index``): many, alike but for it
            ((key, attr),) = op.attrs.items()
            return _with_entry(self._bare_pieces(op, key), self._attr_entry(key, attr))
        return self._pieces(op)

    def op_pieces(self, graph: IrGraph, shapes: OpShapes) -> Iterable[ShapePieces] | None:
        """Per op of ``graph``, its pieces (:func:`op_pieces`); ``None`` when a shape needs
        the general writer."""
        pieces = [self.pieces(op) for op in shapes.first]
        if None in pieces:
            return None
        fillers = {n: self.index_filler(shapes.first[n]) for n in shapes.indexed}
        return op_pieces(graph, shapes, pieces, fillers)  # type: ignore[arg-type]

    def index_filler(self, op: IrOp) -> Callable[[int], ShapePieces]:
        """The pieces of an op of ``op``'s indexed shape (see op_shapes), given its index."""
        bare = self._bare_pieces(op, INDEX_ATTR)
        int_entry = self._int_entry
        return lambda index: _with_entry(bare, int_entry(INDEX_ATTR, index))

    @abc.abstractmethod
    def _bare_pieces(self, op: IrOp, key: str) -> tuple[ShapePieces, int, int]:
        """The pieces of ``op`` without its attrs, and where an entry for ``key`` goes
        in them: (pieces, piece number, offset in that piece)."""

    @abc.abstractmethod
    def _attr_entry(self, key: str, attr: Attr) -> str:
        """The ``OpDef.attr`` entry of one attr."""

    @abc.abstractmethod
    def _int_entry(self, key: str, value: int) -> str:
        """The ``OpDef.attr`` entry of an int attr."""

    @abc.abstractmethod
    def _pieces(self, op: IrOp) -> ShapePieces:
        """The pieces of any op."""


def _with_entry(bare: tuple[ShapePieces, int, int], entry: str) -> ShapePieces:
    pieces, at, offset = bare
    out = list(pieces)
    out[at] = f"{out[at][:offset]}{entry}{out[at][offset:]}"
    return tuple(out)  # type: ignore[return-value]


def split_at_provenance(entries: list[tuple[str, Any]]) -> tuple[list[Any], list[Any], list[Any]]:
    """Attr entries ``(key, text)`` sorted by key, as those before the FX node entry,
    between it and the source entry, and after it."""
    return (
        [e for key, e in entries if key < PROVENANCE_FX_NODE],
        [e for key, e in entries if PROVENANCE_FX_NODE < key < PROVENANCE_SOURCE],
        [e for key, e in entries if key > PROVENANCE_SOURCE],
    )


class _ShapeBytes(ShapePieceWriter):
    """The bytes of each op shape, as latin-1 text."""

    def __init__(self) -> None:
        self.encoder = _WireEncoder()
        self.one_attr: dict[tuple[str, str, bytes], ShapePieces] = {}

    def _bare_pieces(self, op: IrOp, key: str) -> tuple[ShapePieces, int, int]:
        """Made once per type, attr name and descs; the entry starts the piece its name
        sorts into."""
        desc_field = self.encoder.desc_field
        descs = b"".join([desc_field(b"\x8a\x02", d) for d in op.input_desc] + [desc_field(b"\x92\x02", d) for d in op.output_desc])
        bare = self.one_attr.get((op.type, key, descs))
        if bare is None:
            bare = self.one_attr[(op.type, key, descs)] = self._pieces(IrOp(op.name, op.type, [], {}, op.input_desc, op.output_desc))
        return bare, 1 if key < PROVENANCE_FX_NODE else 2 if key < PROVENANCE_SOURCE else 3, 0

    def _attr_entry(self, key: str, attr: Attr) -> str:
        return self.encoder.attr_entry(b"\x52", key, attr).decode("latin-1")

    def _int_entry(self, key: str, value: int) -> str:
        return _map_entry(b"\x52", key, b"\x18" + _varint(value)).decode("latin-1")

    def _pieces(self, op: IrOp) -> ShapePieces:
        entry, desc_field = self.encoder.attr_entry, self.encoder.desc_field
        before_fx, between, after = map(b"".join, split_at_provenance(sorted((key, entry(b"\x52", key, attr)) for key, attr in op.attrs.items())))
        descs = [desc_field(b"\x8a\x02", d) for d in op.input_desc] + [desc_field(b"\x92\x02", d) for d in op.output_desc]
        type_field = _ld(b"\x12", op.type.encode()) if op.type else b""
        return (
            type_field.decode("latin-1"),
            before_fx.decode("latin-1"),
            between.decode("latin-1"),
            (after + b"".join(descs)).decode("latin-1"),
        )


def _ascii_op_fields(graph: IrGraph, shapes: OpShapes) -> bytes | None:
    """The ``GraphDef.op`` fields (tag and length, then payload, per op); ``None`` when
    a shape needs the general encoder. Made as latin-1 text, one code point per byte."""
    shape_pieces = _ShapeBytes().op_pieces(graph, shapes)
    if shape_pieces is None:
        return None
    pieces = list(shape_pieces)  # read twice when the C loop hands the ops back
    varint = _VARINT_TEXT
    fx_entries = _provenance_texts(PROVENANCE_FX_NODE, shapes.fx_nodes)
    source_entries = _provenance_texts(PROVENANCE_SOURCE, shapes.sources)
    native = speedups.native
    if native is not None:
        fields = native.pb_ops(graph.ops, pieces, fx_entries, source_entries)
        if fields is not None:
            return fields
    join = "".join
    # Each input's ``OpDef.input`` field is made where it is used: nearly every input
    # string is read by one op only, so a table of them would cost more than it saves.
    # Ops without inputs (Const: almost half) skip the comprehension's call.
    payloads = [
        f"\n{varint[len(op.name)]}{op.name}{type_field}{join([f'*{varint[len(t)]}{t}' for t in op.inputs]) if op.inputs else ''}"
        f"{before_fx}{fx_entries[op.fx_node]}{between}{source_entries[op.source]}{end}"
        for op, (type_field, before_fx, between, end) in zip(graph.ops, pieces)
    ]
    heads = map(_OP_FIELD_HEADS.__getitem__, map(len, payloads))  # IndexError from 16 KiB on
    return "".join(chain.from_iterable(zip(heads, payloads))).encode("latin-1")


def encode_model_def(graph: IrGraph, shapes: OpShapes | None = None) -> bytes:
    """``graph`` as a serialized GE ``ModelDef`` holding one ``GraphDef``. ``shapes``:
    the graph's :func:`op_shapes`, when the caller has them already."""
    if not graph.ops:
        return _WireEncoder().model(graph)
    shapes = shapes or op_shapes(graph)
    try:
        op_fields = _ascii_op_fields(graph, shapes) if shapes.plain else None
    except IndexError:  # a name or input of 16 KiB or more: the general encoder
        op_fields = None
    if op_fields is None:
        return _WireEncoder().model(graph)
    encoder = _WireEncoder()
    head = [_ld(b"\x0a", graph.name.encode())] if graph.name else []
    head += [_ld(b"\x22", s.encode()) for s in graph.inputs]
    head += [_ld(b"\x2a", s.encode()) for s in graph.outputs]
    tail = [encoder.attr_entry(b"\x5a", k, graph.attrs[k]) for k in sorted(graph.attrs)]
    graph_def = b"".join([*head, op_fields, *tail])
    model_head = _ld(b"\x0a", graph.name.encode()) if graph.name else b""
    return b"".join([model_head, b"\x3a", _varint(len(graph_def)), graph_def])


def model_def_message(graph: IrGraph) -> Any:
    """``graph`` as a ``ModelDef`` message object of :func:`schema`."""
    return schema().ModelDef.FromString(encode_model_def(graph))


# --------------------------------------------------------------------------------------
# Reading: ModelDef message -> IR model.
# --------------------------------------------------------------------------------------
def decode_model_def(data: bytes) -> IrGraph:
    """The IR graph in a serialized ``ModelDef`` (its first graph)."""
    from google.protobuf.message import DecodeError

    model = schema().ModelDef()
    try:
        model.ParseFromString(data)
    except DecodeError as exc:
        raise GeProtoError(f"not a GE ModelDef: {exc}") from exc
    return graph_from_model_def(model)


def graph_from_model_def(model: Any) -> IrGraph:
    """The IR graph of a ``ModelDef`` message (its first graph)."""
    if not model.graph:
        raise GeProtoError(f"ModelDef {model.name!r} holds no graph")
    proto = model.graph[0]
    graph = IrGraph(name=proto.name, inputs=list(proto.input), outputs=list(proto.output))
    graph.attrs = _attrs_from_map(proto.attr)
    graph.ops = [_op_from_proto(op) for op in proto.op]
    return graph


def _op_from_proto(proto: Any) -> IrOp:
    attrs = _attrs_from_map(proto.attr)
    fx_node = attrs.pop(PROVENANCE_FX_NODE, None)
    source = attrs.pop(PROVENANCE_SOURCE, None)
    return IrOp(
        name=proto.name,
        type=proto.type,
        inputs=list(proto.input),
        attrs=attrs,
        input_desc=[_desc_from_proto(d) for d in proto.input_desc],
        output_desc=[_desc_from_proto(d) for d in proto.output_desc],
        fx_node=None if fx_node is None else fx_node.value,
        source=None if source is None else source.value,
    )


def _desc_from_proto(proto: Any) -> TensorDesc:
    return TensorDesc(
        name=proto.name,
        dtype=_proto_dtype(proto.dtype),
        shape=tuple(proto.shape.dim),
        layout=proto.layout,
        attrs=_attrs_from_map(proto.attr) if proto.attr else {},
    )


def _proto_dtype(number: int) -> DataType:
    try:
        return DataType(number)
    except ValueError:
        values = schema().file.enum_type[0].value
        known = next((v.name for v in values if v.number == number), str(number))
        raise GeProtoError(f"tensor type {known} has no counterpart in fxlab's IR model") from None


def _torchair_dtype(number: int) -> DataType:
    dtype = DTYPE_FROM_TORCHAIR_NUMBER.get(number)
    if dtype is None:
        raise GeProtoError(f"dtype attr value {number} (GE's C++ numbering) has no counterpart in fxlab's IR model")
    return dtype


def _attrs_from_map(attr_map: Any) -> dict[str, Attr]:
    return {key: _attr_from_proto(key, attr_map[key]) for key in attr_map}


def _attr_from_proto(key: str, proto: Any) -> Attr:
    which = proto.WhichOneof("value")
    if which == "s":
        return Attr(AttrKind.STR, proto.s.decode("utf-8", "surrogateescape"))
    if which == "i":
        return Attr(AttrKind.INT, proto.i)
    if which == "f":
        return Attr(AttrKind.FLOAT, shortest_float32(proto.f))
    if which == "b":
        return Attr(AttrKind.BOOL, proto.b)
    if which == "dt":
        return Attr(AttrKind.DTYPE, _torchair_dtype(proto.dt))
    if which == "t":
        return Attr(AttrKind.TENSOR, TensorValue(_desc_from_proto(proto.t.desc), proto.t.data))
    if which == "list_list_int":
        return Attr(AttrKind.LIST_LIST_INT, tuple(tuple(row.list_i) for row in proto.list_list_int.list_list_i))
    if which == "list":
        return _list_attr_from_proto(proto.list)
    raise GeProtoError(f"attr {key!r}: AttrDef member {which!r} has no counterpart in fxlab's IR model")


def _list_attr_from_proto(proto: Any) -> Attr:
    kind = {
        VT_LIST_STRING: AttrKind.LIST_STR,
        VT_LIST_INT: AttrKind.LIST_INT,
        VT_LIST_FLOAT: AttrKind.LIST_FLOAT,
        VT_LIST_BOOL: AttrKind.LIST_BOOL,
        VT_LIST_DATA_TYPE: AttrKind.LIST_DTYPE,
    }.get(proto.val_type)
    if kind is None:  # no val_type (TorchAir writes none for string lists): by content
        kind = next((k for k, f in _LIST_FIELDS.items() if len(getattr(proto, f))), AttrKind.LIST_INT)
    if kind is AttrKind.LIST_STR:
        return Attr(kind, tuple(s.decode("utf-8", "surrogateescape") for s in proto.s))
    if kind is AttrKind.LIST_FLOAT:
        return Attr(kind, tuple(shortest_float32(f) for f in proto.f))
    if kind is AttrKind.LIST_DTYPE:
        return Attr(kind, tuple(_torchair_dtype(d) for d in proto.dt))
    return Attr(kind, tuple(getattr(proto, _LIST_FIELDS[kind])))


_LIST_FIELDS = {
    AttrKind.LIST_STR: "s",
    AttrKind.LIST_INT: "i",
    AttrKind.LIST_FLOAT: "f",
    AttrKind.LIST_BOOL: "b",
    AttrKind.LIST_DTYPE: "dt",
}


def shortest_float32(value: float) -> float:
    """The shortest decimal with the same float32 as ``value`` (``1e-05``, not
    ``9.99999974737875e-06``): what a 32-bit float field most likely held. Gives the
    number protobuf's text format prints for a float field."""
    if math.isnan(value) or math.isinf(value):
        return value
    target = _float32(value)
    as_float32 = struct.unpack("<f", target)[0]
    if math.isinf(as_float32):
        return as_float32
    for digits in range(6, 10):  # every float32 is told apart by 9 significant digits
        candidate = float(f"{as_float32:.{digits}g}")
        if _float32(candidate) == target:
            return candidate
    return as_float32
