"""GE ModelDef: fxlab's schema, the binary writer and reader."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from tests.ir.ir_fixtures import every_kind_graph, ir_graphs, torchair_pb2

from fxlab.ir.ge_proto import (
    PROVENANCE_FX_NODE,
    PROVENANCE_SOURCE,
    GeProtoError,
    decode_model_def,
    encode_model_def,
    UNREAD_SUFFIX,
    graph_from_graph_def,
    graph_from_model_def,
    model_def_message,
    shortest_float32,
)
from fxlab.ir.ge_schema import file_descriptor_proto, schema
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"

# (message, field name, number), from GE's ge.proto.
GE_FIELD_NUMBERS = [
    ("ModelDef", "name", 1), ("ModelDef", "version", 2), ("ModelDef", "custom_version", 3),
    ("ModelDef", "graph", 7), ("ModelDef", "attr", 11),
    ("GraphDef", "name", 1), ("GraphDef", "input", 4), ("GraphDef", "output", 5), ("GraphDef", "op", 6), ("GraphDef", "attr", 11),
    ("OpDef", "name", 1), ("OpDef", "type", 2), ("OpDef", "input", 5), ("OpDef", "attr", 10),
    ("OpDef", "input_desc", 33), ("OpDef", "output_desc", 34),
    ("TensorDescriptor", "name", 1), ("TensorDescriptor", "dtype", 2), ("TensorDescriptor", "shape", 3),
    ("TensorDescriptor", "layout", 4), ("TensorDescriptor", "attr", 5), ("TensorDescriptor", "device_type", 14),
    ("ShapeDef", "dim", 1), ("TensorDef", "desc", 1), ("TensorDef", "data", 2), ("NamedAttrs", "name", 1), ("NamedAttrs", "attr", 2),
    ("AttrDef", "list", 1), ("AttrDef", "s", 2), ("AttrDef", "i", 3), ("AttrDef", "f", 4), ("AttrDef", "b", 5), ("AttrDef", "bt", 7),
    ("AttrDef", "func", 10), ("AttrDef", "td", 11), ("AttrDef", "t", 12), ("AttrDef", "g", 13), ("AttrDef", "list_list_int", 14),
    ("AttrDef", "dt", 15),
    ("AttrDef.ListValue", "s", 2), ("AttrDef.ListValue", "i", 3), ("AttrDef.ListValue", "f", 4), ("AttrDef.ListValue", "b", 5),
    ("AttrDef.ListValue", "bt", 7), ("AttrDef.ListValue", "td", 8), ("AttrDef.ListValue", "t", 9), ("AttrDef.ListValue", "g", 10),
    ("AttrDef.ListValue", "na", 11), ("AttrDef.ListValue", "dt", 12), ("AttrDef.ListValue", "val_type", 20),
]


@pytest.mark.parametrize("message, field, number", GE_FIELD_NUMBERS)
def test_schema_field_numbers_match_ge_proto(message: str, field: str, number: int) -> None:
    top, *nested = message.split(".")
    descriptor = getattr(schema(), top).DESCRIPTOR
    for name in nested:
        descriptor = descriptor.nested_types_by_name[name]
    assert descriptor.fields_by_name[field].number == number
    assert descriptor.full_name == f"ge.proto.{message}"


def test_schema_data_type_enum_uses_proto_numbering() -> None:
    enum = schema().TensorDescriptor.DESCRIPTOR.fields_by_name["dtype"].enum_type
    assert enum.full_name == "ge.proto.DataType"
    assert {v.name: v.number for v in enum.values if v.name in DataType.__members__} == {d.name: d.value for d in DataType}


def test_proto_parser_resolves_nested_types_and_maps() -> None:
    text = 'syntax = "proto3"; package p; message A { message B { int64 x = 1; } repeated B b = 2; map<string, B> m = 3; oneof v { bytes s = 4; } }'
    proto = file_descriptor_proto(text)
    (a,) = proto.message_type
    assert [(f.name, f.number, f.type_name) for f in a.field] == [("b", 2, ".p.A.B"), ("m", 3, ".p.A.MEntry"), ("s", 4, "")]
    assert a.nested_type[1].options.map_entry and a.field[2].oneof_index == 0


def test_proto_parser_rejects_unknown_types() -> None:
    with pytest.raises(GeProtoError, match="unknown type 'Missing'"):
        file_descriptor_proto('syntax = "proto3"; package p; message A { Missing m = 1; }')


def _map_keys(graph: IrGraph) -> list[list[str]]:
    maps = [list(graph.attrs)]
    for op in graph.ops:
        maps.append(list(op.attrs) + [k for k, v in ((PROVENANCE_FX_NODE, op.fx_node), (PROVENANCE_SOURCE, op.source)) if v is not None])
        maps += [list(d.attrs) for d in op.input_desc + op.output_desc]
    return maps


def _has_prefix_keys(graph: IrGraph) -> bool:
    """upb's deterministic order puts a key after its own extensions ("li_x" before
    "li"); C++ protobuf and text_format put it first, as fxlab does."""
    return any(a != b and b.startswith(a) for keys in _map_keys(graph) for a in keys for b in keys)


def test_encoding_equals_protobuf_deterministic_serialization() -> None:
    assert not _has_prefix_keys(every_kind_graph())
    data = encode_model_def(every_kind_graph())
    assert schema().ModelDef.FromString(data).SerializeToString(deterministic=True) == data


def test_map_entries_are_written_in_one_order_whatever_order_they_were_set_in() -> None:
    attrs = {"li_x": Attr(AttrKind.INT, 2), "li": Attr(AttrKind.INT, 1), "a": Attr(AttrKind.INT, 0)}
    data = encode_model_def(IrGraph("g", [IrOp("op", "T", attrs=attrs)]))
    again = encode_model_def(IrGraph("g", [IrOp("op", "T", attrs=dict(reversed(attrs.items())))]))
    assert data == again  # protobuf's deterministic serialization: saved traces diff cleanly
    assert decode_model_def(data).ops[0].attrs == attrs


@pytest.mark.parametrize("saved", sorted(GOLDEN.rglob("ascend_ir.pb")), ids=lambda p: str(p.relative_to(GOLDEN)))
def test_protobufs_serializer_writes_what_the_saved_traces_hold(saved: Path) -> None:
    """The examples' ``.pb`` files in the saved traces, written before fxlab used
    protobuf's own serializer: the same bytes again, from the graph they hold."""
    old = saved.read_bytes()
    new = encode_model_def(decode_model_def(old))
    assert schema().ModelDef.FromString(new) == schema().ModelDef.FromString(old)  # wire-equal
    assert new == old


def test_round_trip_of_every_attr_kind() -> None:
    graph = every_kind_graph()
    assert decode_model_def(encode_model_def(graph)) == graph


def test_wire_conventions() -> None:
    model = model_def_message(every_kind_graph())
    assert model.name == "graph_0" and len(model.graph) == 1
    proto = model.graph[0]
    assert list(proto.input) == ["arg0_1"] and list(proto.output) == ["MatMulV2:0"]
    mm = proto.op[1]
    assert list(mm.input) == ["arg0_1:0", "arg0_1:0", "", "arg0_1:-1"]
    assert mm.attr[PROVENANCE_FX_NODE].s == b"mm" and mm.attr[PROVENANCE_SOURCE].s == b"/models/m.py:12"
    assert mm.attr["dt"].dt == 27  # GE's C++ numbering in AttrDef.dt
    assert list(mm.attr["ld"].list.dt) == [0, 9] and mm.attr["ld"].list.val_type == 10
    assert mm.attr["nil_li"].list.val_type == 2 and mm.attr["nil_ls"].list.val_type == 1
    assert mm.input_desc[0].dtype == 1 and list(mm.input_desc[1].shape.dim) == [-2]  # proto numbering, unknown rank
    assert struct.pack("<f", mm.attr["f"].f) == struct.pack("<f", 1e-5)
    assert mm.attr["t"].t.data == struct.pack("<2f", 1.5, -2.0) and list(mm.attr["t"].t.desc.shape.dim) == [1, 2]
    assert proto.op[2].attr[PROVENANCE_FX_NODE].s == b"output"
    assert PROVENANCE_SOURCE not in proto.op[0].attr and PROVENANCE_FX_NODE in proto.op[0].attr


def test_provenance_is_stripped_back_on_read() -> None:
    graph = decode_model_def(encode_model_def(every_kind_graph()))
    mm = graph.ops[1]
    assert (mm.fx_node, mm.source) == ("mm", "/models/m.py:12")
    assert PROVENANCE_FX_NODE not in mm.attrs and PROVENANCE_SOURCE not in mm.attrs
    assert graph.ops[0].source is None


@given(ir_graphs())
@settings(max_examples=60, deadline=None)
def test_generated_graphs_round_trip(graph: IrGraph) -> None:
    data = encode_model_def(graph)
    assert decode_model_def(data) == graph
    if not _has_prefix_keys(graph):
        assert schema().ModelDef.FromString(data).SerializeToString(deterministic=True) == data


def test_floats_read_back_as_their_shortest_float32_decimal() -> None:
    assert shortest_float32(struct.unpack("<f", struct.pack("<f", 1e-5))[0]) == 1e-5
    assert shortest_float32(0.1) == 0.1 and shortest_float32(-0.0) == 0.0 and str(shortest_float32(-0.0)) == "-0.0"
    assert shortest_float32(1e300) == float("inf")
    graph = IrGraph("g", [IrOp("op", "LeakyRelu", attrs={"negative_slope": Attr(AttrKind.FLOAT, 0.01)})])
    assert decode_model_def(encode_model_def(graph)).ops[0].attrs["negative_slope"].value == 0.01


def test_reading_rejects_what_the_model_cannot_hold() -> None:
    with pytest.raises(GeProtoError, match="not a GE ModelDef"):
        decode_model_def(b"\x0a\xff")
    with pytest.raises(GeProtoError, match="holds no graph"):
        decode_model_def(schema().ModelDef(name="m").SerializeToString())
    model = schema().ModelDef()
    model.graph.add().op.add(name="q").output_desc.add(dtype=29)  # DT_UINT1
    with pytest.raises(GeProtoError, match="DT_UINT1"):
        graph_from_model_def(model)
    model = schema().ModelDef()
    model.graph.add().op.add(name="q").attr["g"].g.name = "sub"
    with pytest.raises(GeProtoError, match="'g'"):
        graph_from_model_def(model)


def test_string_lists_without_val_type_read_by_content() -> None:
    """TorchAir's ``ge.attr.ListStr`` leaves ``val_type`` at 0; the strings still come back."""
    model = schema().ModelDef()
    model.graph.add().op.add(name="q").attr["names"].list.s.extend([b"a", b"b"])
    assert graph_from_model_def(model).ops[0].attrs["names"] == Attr(AttrKind.LIST_STR, ("a", "b"))


def _torchair_like_graph():  # type: ignore[no-untyped-def]
    """A GraphDef as TorchAir leaves it: no input or output lists, a sub-graph attr, a
    tensor type fxlab's model lacks, a float attr as float32."""
    graph = schema().GraphDef(name="g")
    for index, name in ((1, "y"), (0, "x")):
        data = graph.op.add(name=name, type="Data")
        data.attr["index"].i = index
        data.output_desc.add(name="y", dtype=1)
    cast = graph.op.add(name="Cast", type="Cast", input=["x:0", "y:-1"])
    cast.output_desc.add(name="y", dtype=29)  # DT_UINT1
    cast.attr["sub"].g.name = "sub"
    cast.attr["alpha"].f = 1e-5
    graph.op.add(name="NetOutput", type="NetOutput", input=["Cast:0", "Cast:-1"])
    return graph


def test_a_lenient_read_keeps_what_the_model_cannot_hold_and_finds_inputs_and_outputs() -> None:
    proto = _torchair_like_graph()
    with pytest.raises(GeProtoError, match="no counterpart in fxlab's IR model"):
        graph_from_graph_def(proto)  # strict: fxlab's own files
    graph = graph_from_graph_def(proto, {"Cast": ("to_uint1", "model.py:3")}, strict=False)
    assert graph.inputs == ["x", "y"]  # the Data ops by index
    assert graph.outputs == ["Cast:0"]  # NetOutput's data inputs
    cast = graph.op_by_name()["Cast"]
    assert cast.output_desc[0].dtype is DataType.DT_UNDEFINED and cast.output_desc[0].layout == "ND"
    assert cast.attrs["sub" + UNREAD_SUFFIX] == Attr(AttrKind.STR, 'g { name: "sub" }')
    assert cast.attrs["alpha"] == Attr(AttrKind.FLOAT, 1e-5)
    assert (cast.fx_node, cast.source) == ("to_uint1", "model.py:3")


# -- TorchAir's own generated module ---------------------------------------------------
def test_torchair_pb2_parses_fxlab_files(torchair_path) -> None:
    pb2 = torchair_pb2(torchair_path)
    graph = every_kind_graph()
    theirs = pb2.ModelDef.FromString(encode_model_def(graph))
    op = theirs.graph[0].op[1]
    assert (op.name, op.type, list(op.input)) == ("MatMulV2", "MatMulV2", ["arg0_1:0", "arg0_1:0", "", "arg0_1:-1"])
    assert op.attr["lli"].list_list_int.list_list_i[0].list_i == [1, 2] and op.attr["dt"].dt == 27
    assert pb2.DataType.Name(op.input_desc[0].dtype) == "DT_FLOAT" and list(op.input_desc[1].shape.dim) == [-2]
    assert graph_from_model_def(theirs) == graph  # TorchAir's messages read as fxlab's
    assert decode_model_def(theirs.SerializeToString(deterministic=True)) == graph


def test_torchair_schema_matches_fxlab_schema(torchair_path) -> None:
    pb2 = torchair_pb2(torchair_path)
    for name in ("ModelDef", "GraphDef", "OpDef", "AttrDef", "TensorDescriptor", "ShapeDef", "TensorDef", "NamedAttrs"):
        ours, theirs = getattr(schema(), name).DESCRIPTOR, getattr(pb2, name).DESCRIPTOR
        their_fields = {f.number: (f.name, f.type, f.is_repeated) for f in theirs.fields if f.name != "attr_groups"}
        assert {f.number: (f.name, f.type, f.is_repeated) for f in ours.fields} == their_fields, name
