"""GE ``ModelDef`` protobuf: the IR model written as / read from it, with the schema of
:mod:`fxlab.ir.ge_schema`.

Writing builds the messages and serializes them with protobuf's own serializer
(``SerializeToString(deterministic=True)``: map entries sorted by key); reading parses
with the protobuf runtime and walks the messages.

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
from collections.abc import Mapping
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import DecodeError

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
# Writing: IR model -> messages -> wire bytes (protobuf's own serializer).
# --------------------------------------------------------------------------------------
# The list kinds: the ``ListValue`` field that holds each, and the ``val_type`` it is written with.
_LIST_FIELDS = {
    AttrKind.LIST_STR: "s",
    AttrKind.LIST_INT: "i",
    AttrKind.LIST_FLOAT: "f",
    AttrKind.LIST_BOOL: "b",
    AttrKind.LIST_DTYPE: "dt",
}
_VAL_TYPES = {
    AttrKind.LIST_STR: VT_LIST_STRING,
    AttrKind.LIST_INT: VT_LIST_INT,
    AttrKind.LIST_FLOAT: VT_LIST_FLOAT,
    AttrKind.LIST_BOOL: VT_LIST_BOOL,
    AttrKind.LIST_DTYPE: VT_LIST_DATA_TYPE,
}
_LIST_KINDS = {val_type: kind for kind, val_type in _VAL_TYPES.items()}


def _fill_desc(message: Any, desc: TensorDesc) -> None:
    if desc.name:
        message.name = desc.name
    if desc.dtype:
        message.dtype = desc.dtype
    if desc.shape:
        message.shape.dim.extend(desc.shape)
    if desc.layout:
        message.layout = desc.layout
    for key, attr in desc.attrs.items():
        _fill_attr(message.attr[key], attr)


def _fill_attr(message: Any, attr: Attr) -> None:
    """One ``AttrDef``: the member of its kind (floats as float32, dtypes in GE's C++
    numbering, lists with their ``val_type``)."""
    kind, value = attr.kind, attr.value
    if kind is AttrKind.STR:
        message.s = value.encode()
    elif kind is AttrKind.INT:
        message.i = value
    elif kind is AttrKind.FLOAT:
        message.f = value
    elif kind is AttrKind.BOOL:
        message.b = value
    elif kind is AttrKind.DTYPE:
        message.dt = TORCHAIR_DTYPE_NUMBER[value]
    elif kind is AttrKind.TENSOR:
        _fill_desc(message.t.desc, value.desc)
        if value.data:
            message.t.data = value.data
    elif kind is AttrKind.LIST_LIST_INT:
        message.list_list_int.SetInParent()
        for row in value:
            message.list_list_int.list_list_i.add().list_i.extend(row)
    elif kind is AttrKind.LIST_INDEXED_STR:  # s then i, no val_type: as TorchAir fills it
        message.list.SetInParent()
        message.list.s.extend(layout.encode() for _, layout in value)
        message.list.i.extend(index for index, _ in value)
    else:
        if kind is AttrKind.LIST_STR:
            value = [v.encode() for v in value]
        elif kind is AttrKind.LIST_DTYPE:
            value = [TORCHAIR_DTYPE_NUMBER[v] for v in value]
        getattr(message.list, _LIST_FIELDS[kind]).extend(value)
        message.list.val_type = _VAL_TYPES[kind]


def _fill_op(message: Any, op: IrOp) -> None:
    if op.name:
        message.name = op.name
    if op.type:
        message.type = op.type
    message.input.extend(op.inputs)
    for key, attr in op.attrs.items():
        _fill_attr(message.attr[key], attr)
    if op.fx_node is not None:
        message.attr[PROVENANCE_FX_NODE].s = op.fx_node.encode()
    if op.source is not None:
        message.attr[PROVENANCE_SOURCE].s = op.source.encode()
    for desc in op.input_desc:
        _fill_desc(message.input_desc.add(), desc)
    for desc in op.output_desc:
        _fill_desc(message.output_desc.add(), desc)


def model_def_message(graph: IrGraph) -> Any:
    """``graph`` as a ``ModelDef`` message of :func:`schema` holding one ``GraphDef``."""
    model = schema().ModelDef()
    proto = model.graph.add()
    if graph.name:
        model.name = proto.name = graph.name
    proto.input.extend(graph.inputs)
    proto.output.extend(graph.outputs)
    for op in graph.ops:
        _fill_op(proto.op.add(), op)
    for key, attr in graph.attrs.items():
        _fill_attr(proto.attr[key], attr)
    return model


def encode_model_def(graph: IrGraph) -> bytes:
    """``graph`` as a serialized GE ``ModelDef`` (map entries sorted by key, so the bytes
    are the same from run to run)."""
    return model_def_message(graph).SerializeToString(deterministic=True)


# --------------------------------------------------------------------------------------
# Reading: ModelDef message -> IR model.
# --------------------------------------------------------------------------------------
def decode_model_def(data: bytes) -> IrGraph:
    """The IR graph in a serialized ``ModelDef`` (its first graph)."""
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
    return text_format.MessageToString(message, as_one_line=True)


def _float32(value: float) -> bytes:
    """``value`` as the four bytes of a float32 (beyond its range: infinity, as a C++
    narrowing cast gives and protobuf writes)."""
    try:
        return struct.pack("<f", value)
    except OverflowError:
        return struct.pack("<f", math.copysign(math.inf, value))


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
