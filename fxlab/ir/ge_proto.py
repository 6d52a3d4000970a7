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

import math
import struct
from collections.abc import Iterable, Mapping
from typing import Any

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

UNREAD_SUFFIX = ":unread"
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
    if kind is AttrKind.LIST_INDEXED_STR:  # s then i, no val_type: as TorchAir fills it
        strings = b"".join(_ld(b"\x12", layout.encode()) for _, layout in value)
        return _ld(b"\x0a", strings + _ld(b"\x1a", b"".join(_varint(index) for index, _ in value)))
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


def encode_model_def(graph: IrGraph) -> bytes:
    """``graph`` as a serialized GE ``ModelDef`` holding one ``GraphDef``."""
    return _WireEncoder().model(graph)


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
    return graph_from_graph_def(model.graph[0])


Provenance = Mapping[str, tuple[str | None, str | None]]


def graph_from_graph_def(proto: Any, provenance: Provenance | None = None, *, strict: bool = True) -> IrGraph:
    """The IR graph of a ``GraphDef`` message (fxlab's own, or TorchAir's ``ge_ir_pb2``:
    read field by field, so any generation of the messages works).

    ``provenance`` maps op names to the FX node and source line they came from (else the
    ops' ``_fxlab_*`` attrs say it). ``strict`` raises :class:`GeProtoError` for what
    fxlab's model has no room for and reads every field as written (fxlab's own files).
    Otherwise (TorchAir's graphs) the graph's empty input and output lists are its ``Data``
    ops by ``index`` and the data inputs of ``NetOutput``, an unknown tensor type reads as
    undefined, an empty layout as GE's default ``ND``, and an attr of
    an unknown kind is kept as its protobuf text, under its key with the suffix
    :data:`UNREAD_SUFFIX`, so it shows in diffs and dumps rather than vanishing.
    """
    reader = _Reader(strict)
    graph = IrGraph(name=proto.name, ops=[reader.op(op, provenance) for op in proto.op])
    graph.attrs = reader.attrs(proto.attr)
    graph.inputs, graph.outputs = list(proto.input), list(proto.output)
    if not strict and not graph.inputs:
        graph.inputs = [op.name for op in sorted(graph.ops_of_type("Data"), key=lambda op: op.attr_value("index", 0))]
    if not strict and not graph.outputs:
        net_output = next((op for op in graph.ops if op.type == "NetOutput"), None)
        graph.outputs = net_output.data_inputs if net_output is not None else []
    return graph


class _Reader:
    """Messages -> IR model pieces, strict or lenient (see :func:`graph_from_graph_def`)."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict

    def op(self, proto: Any, provenance: Provenance | None) -> IrOp:
        attrs = self.attrs(proto.attr)
        fx_node = attrs.pop(PROVENANCE_FX_NODE, None)
        source = attrs.pop(PROVENANCE_SOURCE, None)
        stamped = (None if fx_node is None else fx_node.value, None if source is None else source.value)
        return IrOp(
            name=proto.name,
            type=proto.type,
            inputs=list(proto.input),
            attrs=attrs,
            input_desc=[self.desc(d) for d in proto.input_desc],
            output_desc=[self.desc(d) for d in proto.output_desc],
            fx_node=(provenance or {}).get(proto.name, stamped)[0],
            source=(provenance or {}).get(proto.name, stamped)[1],
        )

    def desc(self, proto: Any) -> TensorDesc:
        return TensorDesc(
            name=proto.name,
            dtype=self.tensor_dtype(proto.dtype),
            shape=tuple(proto.shape.dim),
            layout=proto.layout if self.strict else proto.layout or "ND",  # GE's default layout
            attrs=self.attrs(proto.attr) if proto.attr else {},
        )

    def tensor_dtype(self, number: int) -> DataType:
        """A ``TensorDescriptor.dtype`` (the proto enum's numbering)."""
        try:
            return DataType(number)
        except ValueError:
            if not self.strict:
                return DataType.DT_UNDEFINED
            values = schema().file.enum_type[0].value
            known = next((v.name for v in values if v.number == number), str(number))
            raise GeProtoError(f"tensor type {known} has no counterpart in fxlab's IR model") from None

    def attr_dtype(self, number: int) -> DataType:
        """A ``dt`` attr (GE's C++ numbering, TorchAir's Python ``DataType``)."""
        dtype = DTYPE_FROM_TORCHAIR_NUMBER.get(number)
        if dtype is None:
            if not self.strict:
                return DataType.DT_UNDEFINED
            raise GeProtoError(f"dtype attr value {number} (GE's C++ numbering) has no counterpart in fxlab's IR model")
        return dtype

    def attrs(self, attr_map: Any) -> dict[str, Attr]:
        out: dict[str, Attr] = {}
        for key in attr_map:
            proto = attr_map[key]
            value = self.attr(key, proto)
            if value is not None:
                out[key] = value
            elif proto.WhichOneof("value") is not None:  # lenient: a kind fxlab does not model
                out[key + UNREAD_SUFFIX] = Attr(AttrKind.STR, _one_line_text(proto))
        return out

    def attr(self, key: str, proto: Any) -> Attr | None:
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
            return Attr(AttrKind.DTYPE, self.attr_dtype(proto.dt))
        if which == "t":
            return Attr(AttrKind.TENSOR, TensorValue(self.desc(proto.t.desc), bytes(proto.t.data)))
        if which == "list_list_int":
            return Attr(AttrKind.LIST_LIST_INT, tuple(tuple(row.list_i) for row in proto.list_list_int.list_list_i))
        if which == "list":
            return self.list_attr(proto.list)
        if self.strict:
            raise GeProtoError(f"attr {key!r}: AttrDef member {which!r} has no counterpart in fxlab's IR model")
        return None

    def list_attr(self, proto: Any) -> Attr:
        kind = _LIST_KINDS.get(proto.val_type)
        if kind is None and len(proto.s) and len(proto.i) == len(proto.s):  # TorchAir's layout info
            return Attr(AttrKind.LIST_INDEXED_STR, tuple(zip(proto.i, (s.decode("utf-8", "surrogateescape") for s in proto.s))))
        if kind is None:  # no val_type (TorchAir writes none for string lists): by content
            kind = next((k for k, f in _LIST_FIELDS.items() if len(getattr(proto, f))), AttrKind.LIST_INT)
        if kind is AttrKind.LIST_STR:
            return Attr(kind, tuple(s.decode("utf-8", "surrogateescape") for s in proto.s))
        if kind is AttrKind.LIST_FLOAT:
            return Attr(kind, tuple(shortest_float32(f) for f in proto.f))
        if kind is AttrKind.LIST_DTYPE:
            return Attr(kind, tuple(self.attr_dtype(d) for d in proto.dt))
        return Attr(kind, tuple(getattr(proto, _LIST_FIELDS[kind])))


def _one_line_text(message: Any) -> str:
    from google.protobuf import text_format

    return text_format.MessageToString(message, as_one_line=True)


_LIST_KINDS = {
    VT_LIST_STRING: AttrKind.LIST_STR,
    VT_LIST_INT: AttrKind.LIST_INT,
    VT_LIST_FLOAT: AttrKind.LIST_FLOAT,
    VT_LIST_BOOL: AttrKind.LIST_BOOL,
    VT_LIST_DATA_TYPE: AttrKind.LIST_DTYPE,
}
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
