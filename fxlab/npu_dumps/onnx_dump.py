"""GE's ONNX-text phase dumps (``ge_onnx_<index>_graph_<id>_<Phase>.pbtxt``): an ONNX
``ModelProto`` whose nodes are GE ops (``op_type: "ge:<Type>"``) with the op's attrs as
node attributes and each desc flattened into attributes
(``output_desc_<field>:<i>``, ``output_desc_attr_<attr>:<i>``; a node with many descs
has one JSON string per desc, ``output_desc_<i>``). String attrs are written only at
``DUMP_GE_GRAPH=1``; subgraphs are nodes of type ``subgraph`` holding the graph."""

from __future__ import annotations

import json
import re
from typing import Any

from google.protobuf import text_format

from fxlab.npu_dumps.ge_ops import RawDesc, attr_def_value, build_op
from fxlab.npu_dumps.dump_model import GE_ONNX, DumpGraph, DumpOp
from fxlab.npu_dumps.names import DumpName
from fxlab.npu_dumps.proto_text import DumpReadError, Progress, TextReader, read_text
from fxlab.npu_dumps.schemas import ge_attr_def, message_class

PROTO = "ge_onnx.proto"
# AttributeProto.AttributeType numbers (onnx.proto)
_FLOAT, _INT, _STRING, _GRAPH, _FLOATS, _INTS, _STRINGS = 1, 2, 3, 5, 6, 7, 8
_DESC_FIELD = re.compile(r"^output_desc_(?P<field>dtype|layout|origin_dtype|origin_layout):(?P<i>\d+)$")
_DESC_ATTR = re.compile(r"^output_desc_attr_(?P<attr>.+):(?P<i>\d+)$")
_DESC_JSON = re.compile(r"^output_desc_(?P<i>\d+)$")


def read_ge_onnx(
    path: str, text: str, name: DumpName | None, progress: Progress | None = None, notes: list[str] | None = None
) -> list[DumpGraph]:
    """The graphs of one ONNX dump; ``notes`` hears, once, that the dump keeps no op's string
    attrs (GE's original op names among them)."""
    reader = TextReader(path, text, progress)
    model = read_text(reader, message_class(PROTO, "ModelProto"), lambda r, m: r.parse_whole(m))
    if not model.HasField("graph"):
        raise DumpReadError(
            f"{path}: holds no graph (an empty ModelProto). Copy the dump again from the NPU machine, or leave this file out."
        )
    graphs: list[DumpGraph] = []
    _add_graph(graphs, model.graph, path, name, None)
    if notes is not None and ONNX_WITHOUT_STRINGS not in notes and not _op_strings(model.graph):
        notes.append(ONNX_WITHOUT_STRINGS)
    return graphs


ONNX_WITHOUT_STRINGS = (
    "the ge_onnx_*.pbtxt dumps keep no op's string attrs (GE writes them only at DUMP_GE_GRAPH=1): without GE's original op "
    "names, an op GE fused or renamed shows as ops removed and one added; dump at DUMP_GE_GRAPH=1, or give the same run's "
    "ge_proto_*.txt files, which keep them"
)


def _op_strings(graph: Any) -> bool:
    """Whether any op of ``graph`` keeps a string attr of its own (the flattened descs are strings at every level)."""
    return any(
        attribute.type in (_STRING, _STRINGS) and not attribute.name.startswith(("output_desc_", "input_desc_"))
        for node in graph.node
        for attribute in node.attribute
    )


def _add_graph(graphs: list[DumpGraph], proto: Any, path: str, name: DumpName | None, parent: str | None) -> None:
    graph = DumpGraph(
        path, GE_ONNX, name.graph_id if name else None, name.phase if name else "", proto.name, name.index if name else None, parent=parent
    )
    graphs.append(graph)
    for node in proto.node:
        if node.op_type == "subgraph":
            for attribute in node.attribute:
                if attribute.type == _GRAPH or attribute.HasField("g"):
                    _add_graph(graphs, attribute.g, path, name, proto.name)
            continue
        graph.ops.append(_op(node))


def _op(node: Any) -> DumpOp:
    attrs: dict[str, Any] = {}
    outputs: dict[int, RawDesc] = {}
    for attribute in node.attribute:
        value = _value(attribute)
        key = attribute.name
        if match := _DESC_FIELD.match(key):
            _set_desc_field(outputs.setdefault(int(match.group("i")), RawDesc()), match.group("field"), value)
        elif match := _DESC_ATTR.match(key):
            outputs.setdefault(int(match.group("i")), RawDesc()).attrs[match.group("attr")] = value
        elif match := _DESC_JSON.match(key):
            outputs[int(match.group("i"))] = _json_desc(value)
        elif not key.startswith("input_desc_"):
            attrs[key] = value
    op_type = node.op_type[3:] if node.op_type.startswith("ge:") else node.op_type
    inputs = [i for i in node.input]
    descs = [outputs[i] for i in sorted(outputs)]
    return build_op(node.name, op_type, inputs, attrs, descs)


def _set_desc_field(desc: RawDesc, field: str, value: Any) -> None:
    text = value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else str(value)
    if field == "dtype":
        desc.dtype = text
    elif field == "layout":
        desc.layout = text
    elif field == "origin_dtype":
        desc.attrs["origin_data_type"] = text
    else:
        desc.attrs["origin_format"] = text


def _json_desc(value: Any) -> RawDesc:
    """A desc written as one JSON string: its fields, and its attrs as ``AttrDef`` text."""
    text = value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else str(value)
    try:
        data = json.loads(text)
    except ValueError:
        return RawDesc()
    if not isinstance(data, dict):  # not a desc GE wrote: nothing to read from it
        return RawDesc()
    desc = RawDesc(str(data.get("dtype", "")), str(data.get("layout", "")))
    for field in ("origin_dtype", "origin_layout"):
        if field in data:
            _set_desc_field(desc, field, data[field])
    for key, attr_text in data.items():
        if isinstance(attr_text, str) and key not in ("dtype", "layout", "origin_dtype", "origin_layout", "device_type", "cmps_tab"):
            attr = ge_attr_def()()
            try:
                text_format.Parse(attr_text, attr)
            except text_format.ParseError:
                continue
            desc.attrs[key] = attr_def_value(attr)
    return desc


def _value(attribute: Any) -> Any:
    kind = attribute.type
    if kind == _INT:
        return attribute.i
    if kind == _FLOAT:
        return attribute.f
    if kind == _STRING:
        return attribute.s
    if kind == _INTS:
        return list(attribute.ints)
    if kind == _FLOATS:
        return list(attribute.floats)
    if kind == _STRINGS:
        return list(attribute.strings)
    return None
