"""Read a GE ``GraphDef`` message (TorchAir's ``ge_ir_pb2``) into fxlab's :class:`IrGraph`.

Field by field, from the message objects themselves, so any ``ge_ir_pb2`` generation
works. Attr kinds that fxlab's model has no room for (sub-graphs, named attrs, tensor
descriptors as attr values, expressions) are kept as their protobuf text in a string
attr whose key gets the suffix ``:unread`` — they show up in diffs and dumps rather
than vanishing.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from fxlab.ir.model import DTYPE_FROM_TORCHAIR_NUMBER, Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc, TensorValue

UNREAD_SUFFIX = ":unread"
# AttrDef.ListValue.ListValueType numbers -> the list kinds fxlab stores.
_LIST_KINDS = {1: AttrKind.LIST_STR, 2: AttrKind.LIST_INT, 3: AttrKind.LIST_FLOAT, 4: AttrKind.LIST_BOOL, 10: AttrKind.LIST_DTYPE}
_LIST_FIELDS = {
    AttrKind.LIST_STR: "s",
    AttrKind.LIST_INT: "i",
    AttrKind.LIST_FLOAT: "f",
    AttrKind.LIST_BOOL: "b",
    AttrKind.LIST_DTYPE: "dt",
}


def data_type(number: int) -> DataType:
    """GE proto ``DataType`` number -> fxlab's (same numbering); unknown -> undefined."""
    try:
        return DataType(number)
    except ValueError:
        return DataType.DT_UNDEFINED


def attr_data_type(number: int) -> DataType:
    """A ``dt`` attr's number -> fxlab's type. TorchAir writes ``dt`` attrs with its Python
    ``DataType`` numbers (GE's C++ enum: 9 = DT_INT64), not the proto enum of tensor descs
    (where 9 is DT_UINT32); unknown -> undefined."""
    return DTYPE_FROM_TORCHAIR_NUMBER.get(number, DataType.DT_UNDEFINED)


def tensor_desc(desc: Any) -> TensorDesc:
    out = TensorDesc(
        name=desc.name,
        dtype=data_type(desc.dtype),
        shape=tuple(int(d) for d in desc.shape.dim),
        layout=desc.layout or "ND",
    )
    for key in desc.attr:
        _read_attr_into(out.attrs, key, desc.attr[key])
    return out


def _text(message: Any) -> str:
    from google.protobuf import text_format

    return text_format.MessageToString(message, as_one_line=True)


def _list_attr(value: Any) -> Attr | None:
    kind = _LIST_KINDS.get(value.val_type)
    if kind is None and len(value.s) and len(value.i) == len(value.s):  # TorchAir's layout info
        layouts = [s.decode("utf-8", "replace") if isinstance(s, bytes) else s for s in value.s]
        return Attr(AttrKind.LIST_INDEXED_STR, tuple(zip(value.i, layouts)))
    if kind is None:  # no (or an unknown) val_type: the first non-empty field says
        kind = next((k for k, f in _LIST_FIELDS.items() if len(getattr(value, f))), None)
        if kind is None:
            return Attr(AttrKind.LIST_INT, ()) if value.val_type == 0 else None
    items = list(getattr(value, _LIST_FIELDS[kind]))
    if kind is AttrKind.LIST_STR:
        items = [s.decode("utf-8", "replace") if isinstance(s, bytes) else s for s in items]
    elif kind is AttrKind.LIST_DTYPE:
        items = [attr_data_type(d) for d in items]
    return Attr(kind, tuple(items))


def attr_value(attr: Any) -> Attr | None:
    """One ``AttrDef`` -> :class:`Attr`; ``None`` for kinds fxlab does not model."""
    which = attr.WhichOneof("value")
    if which == "s":
        return Attr(AttrKind.STR, attr.s.decode("utf-8", "replace"))
    if which in ("i", "f", "b"):
        kind = {"i": AttrKind.INT, "f": AttrKind.FLOAT, "b": AttrKind.BOOL}[which]
        return Attr(kind, getattr(attr, which))
    if which == "dt":
        return Attr(AttrKind.DTYPE, attr_data_type(attr.dt))
    if which == "t":
        return Attr(AttrKind.TENSOR, TensorValue(tensor_desc(attr.t.desc), bytes(attr.t.data)))
    if which == "list":
        return _list_attr(attr.list)
    if which == "list_list_int":
        return Attr(AttrKind.LIST_LIST_INT, tuple(tuple(v.list_i) for v in attr.list_list_int.list_list_i))
    if which is None:
        return None
    return None


def _read_attr_into(attrs: dict[str, Attr], key: str, attr: Any) -> None:
    value = attr_value(attr)
    if value is not None:
        attrs[key] = value
    elif attr.WhichOneof("value") is not None:
        attrs[key + UNREAD_SUFFIX] = Attr(AttrKind.STR, _text(attr))


def ir_op(op: Any, provenance: Mapping[str, tuple[str | None, str | None]] | None = None) -> IrOp:
    fx_node, source = (provenance or {}).get(op.name, (None, None))
    attrs: dict[str, Attr] = {}
    for key in op.attr:
        _read_attr_into(attrs, key, op.attr[key])
    return IrOp(
        name=op.name,
        type=op.type,
        inputs=list(op.input),
        attrs=attrs,
        input_desc=[tensor_desc(d) for d in op.input_desc],
        output_desc=[tensor_desc(d) for d in op.output_desc],
        fx_node=fx_node,
        source=source,
    )


def ir_graph(graph: Any, provenance: Mapping[str, tuple[str | None, str | None]] | None = None) -> IrGraph:
    """A ``GraphDef`` -> :class:`IrGraph`. ``provenance`` maps GE op names to the FX node
    and source line they came from. Inputs are the ``Data`` ops by ``index``; outputs the
    data inputs of ``NetOutput`` (control edges ``:-1`` excluded)."""
    out = IrGraph(name=graph.name, ops=[ir_op(op, provenance) for op in graph.op])
    data_ops = [op for op in out.ops if op.type == "Data"]
    out.inputs = [op.name for op in sorted(data_ops, key=lambda op: op.attr_value("index", 0))]
    net_output = next((op for op in out.ops if op.type == "NetOutput"), None)
    out.outputs = net_output.data_inputs if net_output is not None else list(graph.output)
    for key in graph.attr:
        _read_attr_into(out.attrs, key, graph.attr[key])
    return out
