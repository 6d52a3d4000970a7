"""One GE op as dumped -> :class:`DumpOp`: the attrs GE writes when it fuses, inserts
and cuts ops, read the same way from every format (protobuf messages, OM JSON, ONNX
attributes) once each is reduced to plain values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fxlab.npu_dumps.dump_model import DumpOp, OutputInfo
from fxlab.npu_dumps.names import inserted_by_name

ORIGINAL_NAMES = "_datadump_original_op_names"
ORIGINAL_TYPES = "_datadump_original_op_types"
IS_MULTI_OP = "_datadump_is_multiop"
PASS_NAME = "pass_name"
FUSION_SCOPE = "fusion_scope"
SUPER_KERNEL_SCOPE = "_super_kernel_scope"
SUPER_KERNEL_PARENT = "sk_parent_node_name"
SUPPORT_SUPER_KERNEL = "supportSuperKernel"
STREAM_LABEL = "_user_stream_label"
AICORE_NUM = "_op_aicore_num"
VECTORCORE_NUM = "_op_vectorcore_num"
ORIGIN_NAME = "_datadump_origin_name"
ORIGIN_OUTPUT_INDEX = "_datadump_origin_output_index"
ORIGIN_FORMAT = ("_datadump_origin_format", "origin_format")
ORIGIN_DTYPE = ("_datadump_origin_data_type", "origin_data_type")
FX_TENSOR_NAME = "_fx_tensor_name"


@dataclass
class RawDesc:
    """An output desc reduced to plain values."""

    dtype: str = ""
    layout: str = ""
    attrs: dict[str, Any] = field(default_factory=dict)


class WrongAttr(ValueError):
    """An op's attr holds a value of another kind than GE writes there (the reader names the file)."""


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):  # one string, or a value of another kind: as written
        value = [value]
    return [v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else str(v) for v in value]


def _names(op: DumpOp, attrs: Mapping[str, Any], key: str) -> list[str]:
    """A list of names GE writes as strings (op names, op types, pass names); a value of
    another kind is not GE's, and read as a name it would join the op to no FX node."""
    value = attrs.get(key)
    items = value if isinstance(value, (list, tuple)) else [] if value is None else [value]
    if any(not isinstance(item, (str, bytes)) for item in items):
        raise WrongAttr(f"op {op.name!r} has {key} = {value!r}, where GE writes a list of names")
    return _strings(items)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, list):
        return _text(value[0]) if value else None
    return str(value)


def _int(value: Any) -> int | None:
    if isinstance(value, list):
        value = value[0] if value else None
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def build_op(name: str, op_type: str, inputs: Sequence[str], attrs: Mapping[str, Any], outputs: Sequence[RawDesc]) -> DumpOp:
    """The :class:`DumpOp` of one op, from its plain attrs and output descs."""
    op = DumpOp(name=name, type=op_type, inputs=list(inputs))
    _originals(op, attrs)
    op.passes = _names(op, attrs, PASS_NAME)
    op.fusion_scope = _int(attrs.get(FUSION_SCOPE))
    op.multi_op = bool(_int(attrs.get(IS_MULTI_OP)))
    op.super_kernel_scope = _text(attrs.get(SUPER_KERNEL_SCOPE)) or None
    op.super_kernel_parent = _text(attrs.get(SUPER_KERNEL_PARENT)) or None
    op.supports_super_kernel = _int(attrs.get(SUPPORT_SUPER_KERNEL))
    op.stream_label = _text(attrs.get(STREAM_LABEL))
    op.aicore_num = _text(attrs.get(AICORE_NUM))
    op.vectorcore_num = _text(attrs.get(VECTORCORE_NUM))
    op.outputs = [_output(index, desc) for index, desc in enumerate(outputs)]
    return op


def _originals(op: DumpOp, attrs: Mapping[str, Any]) -> None:
    """GE's original op names where it wrote them; else the op is its own original,
    unless its name is one GE gives ops it inserts."""
    if ORIGINAL_NAMES in attrs:
        op.originals = _names(op, attrs, ORIGINAL_NAMES)
        op.original_types = _names(op, attrs, ORIGINAL_TYPES)
        op.inserted = not op.originals
        return
    if inserted_by_name(op.name, op.type):
        op.inserted = True
        return
    op.originals, op.original_types = [op.name], [op.type]


def _output(index: int, desc: RawDesc) -> OutputInfo:
    attrs = desc.attrs
    return OutputInfo(
        index=index,
        dtype=desc.dtype,
        layout=desc.layout,
        origin_dtype=next((_text(attrs[k]) or "" for k in ORIGIN_DTYPE if k in attrs), ""),
        origin_layout=next((_text(attrs[k]) or "" for k in ORIGIN_FORMAT if k in attrs), ""),
        origin_name=_text(attrs.get(ORIGIN_NAME)),
        origin_output_index=_int(attrs.get(ORIGIN_OUTPUT_INDEX)),
        fx_tensor_name=_text(attrs.get(FX_TENSOR_NAME)),
    )


# -- protobuf messages (ge_ir.proto) ------------------------------------------------------
def attr_def_value(attr: Any) -> Any:
    """A plain value of an ``AttrDef`` message (the kinds the attrs above use)."""
    which = attr.WhichOneof("value")
    if which in ("s", "i", "f", "b", "dt"):
        return getattr(attr, which)
    if which == "list":
        lst = attr.list
        for name in ("s", "i", "f", "b", "dt"):
            values = getattr(lst, name)
            if len(values):
                return list(values)
        return []
    return None


def _dtype_name(desc: Any) -> str:
    """A ``TensorDescriptor.dtype`` as its enum name (``DT_FLOAT16``)."""
    values = desc.DESCRIPTOR.fields_by_name["dtype"].enum_type.values_by_number
    value = values.get(desc.dtype)
    return value.name if value is not None else str(desc.dtype)


def op_from_message(message: Any) -> DumpOp:
    """A GE ``OpDef`` message -> :class:`DumpOp`."""
    attrs = {key: attr_def_value(message.attr[key]) for key in message.attr}
    outputs = [
        RawDesc(_dtype_name(desc), desc.layout, {key: attr_def_value(desc.attr[key]) for key in desc.attr}) for desc in message.output_desc
    ]
    return build_op(message.name, message.type, list(message.input), attrs, outputs)


# -- OM JSON (atc --mode=1): maps as lists of {"key", "value"}, bytes as text ------------------
def json_attr_value(value: Any) -> Any:
    """A plain value of an ``AttrDef`` in OM JSON."""
    if not isinstance(value, Mapping):
        return None
    for name in ("s", "i", "f", "b", "dt"):
        if name in value:
            return value[name]
    lst = value.get("list")
    if isinstance(lst, Mapping):
        for name in ("s", "i", "f", "b", "dt"):
            if isinstance(lst.get(name), list):
                return list(lst[name])
        return []
    return None


def json_attrs(entries: Any) -> dict[str, Any]:
    """OM JSON's ``attr``: a list of ``{"key": ..., "value": ...}`` (or a plain object)."""
    if isinstance(entries, Mapping):
        return {str(k): json_attr_value(v) for k, v in entries.items()}
    out: dict[str, Any] = {}
    for entry in entries or []:
        if isinstance(entry, Mapping) and "key" in entry:
            out[str(entry["key"])] = json_attr_value(entry.get("value"))
    return out


def op_from_json(data: Mapping[str, Any]) -> DumpOp:
    outputs = [
        RawDesc(str(desc.get("dtype", "")), str(desc.get("layout", "")), json_attrs(desc.get("attr")))
        for desc in data.get("output_desc", []) or []
        if isinstance(desc, Mapping)
    ]
    inputs = [str(i) for i in data.get("input", []) or []]
    return build_op(str(data.get("name", "")), str(data.get("type", "")), inputs, json_attrs(data.get("attr")), outputs)
