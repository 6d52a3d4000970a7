"""The dump writers against independent references (protobuf's message API, json.dumps):
on graphs whose ops repeat (shared attr and desc objects, and equal copies of them, with
values that are equal yet print apart; the writers cache text by value and by identity),
each writer's output equals the reference byte for byte."""
from __future__ import annotations

import json
import math
from typing import Any

import torch
from google.protobuf import text_format
from hypothesis import given, settings
from hypothesis import strategies as st

from fxlab.ir.dump_py import graph_to_py
from fxlab.ir.dumps import graph_to_json_text
from fxlab.ir.ge_proto import (
    PROVENANCE_FX_NODE,
    PROVENANCE_SOURCE,
    VT_LIST_BOOL,
    VT_LIST_DATA_TYPE,
    VT_LIST_FLOAT,
    VT_LIST_INT,
    VT_LIST_STRING,
    encode_model_def,
)
from fxlab.ir.ge_schema import schema
from fxlab.ir.model import (
    TORCHAIR_DTYPE_NUMBER,
    Attr,
    AttrKind,
    DataType,
    IrGraph,
    IrOp,
    TensorDesc,
    TensorValue,
)
from fxlab.ir.pbtxt import graph_to_pbtxt
from tests.ir.ir_fixtures import ATTRS, NAMES, TEXT, every_kind_graph, tensor_descs

# -- independent references ------------------------------------------------------------
_LIST_FIELDS = {
    AttrKind.LIST_STR: ("s", VT_LIST_STRING), AttrKind.LIST_INT: ("i", VT_LIST_INT), AttrKind.LIST_FLOAT: ("f", VT_LIST_FLOAT),
    AttrKind.LIST_BOOL: ("b", VT_LIST_BOOL), AttrKind.LIST_DTYPE: ("dt", VT_LIST_DATA_TYPE),
}


def _set_desc(message: Any, desc: TensorDesc) -> None:
    message.SetInParent()
    message.name, message.dtype, message.layout = desc.name, int(desc.dtype), desc.layout
    if desc.shape:  # an empty shape leaves ShapeDef unset, as GE writes it
        message.shape.dim.extend(desc.shape)
    for key, attr in desc.attrs.items():
        _set_attr(message.attr[key], attr)


def _set_attr(message: Any, attr: Attr) -> None:
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
        _set_desc(message.t.desc, value.desc)
        message.t.data = value.data
    elif kind is AttrKind.LIST_LIST_INT:
        message.list_list_int.SetInParent()
        for row in value:
            message.list_list_int.list_list_i.add().list_i.extend(row)
    else:
        field, val_type = _LIST_FIELDS[kind]
        message.list.val_type = val_type
        items = [v.encode() for v in value] if kind is AttrKind.LIST_STR else value
        if kind is AttrKind.LIST_DTYPE:
            items = [TORCHAIR_DTYPE_NUMBER[v] for v in value]
        getattr(message.list, field).extend(items)


def reference_model_def(graph: IrGraph) -> Any:
    """``graph`` as a ``ModelDef`` built field by field with protobuf's message API."""
    model = schema().ModelDef(name=graph.name)
    proto = model.graph.add(name=graph.name, input=graph.inputs, output=graph.outputs)
    for key, attr in graph.attrs.items():
        _set_attr(proto.attr[key], attr)
    for op in graph.ops:
        op_proto = proto.op.add(name=op.name, type=op.type, input=op.inputs)
        for key, attr in op.attrs.items():
            _set_attr(op_proto.attr[key], attr)
        for key, value in ((PROVENANCE_FX_NODE, op.fx_node), (PROVENANCE_SOURCE, op.source)):
            if value is not None:
                op_proto.attr[key].s = value.encode()
        for desc in op.input_desc:
            _set_desc(op_proto.input_desc.add(), desc)
        for desc in op.output_desc:
            _set_desc(op_proto.output_desc.add(), desc)
    return model


def reference_json_text(graph: IrGraph) -> str:
    """``ascend_ir.json`` as fxlab has always written it: the graph's head, then
    ``json.dumps(op.to_json())`` one op per line."""
    head = json.dumps({**graph.to_json(), "ops": None}, ensure_ascii=False)[: -len(', "ops": null}')]
    if not graph.ops:
        return f'{head}, "ops": []}}\n'
    body = ",\n".join(json.dumps(op.to_json(), ensure_ascii=False) for op in graph.ops)
    return f'{head}, "ops": [\n{body}\n]}}\n'


def _has_prefix_keys(graph: IrGraph) -> bool:
    """upb orders a map key after its own extensions ("li_x" before "li"); fxlab, C++
    protobuf and text_format put it first."""
    maps = [list(graph.attrs)] + [list(op.attrs) + [PROVENANCE_FX_NODE, PROVENANCE_SOURCE] for op in graph.ops]
    maps += [list(d.attrs) for op in graph.ops for d in op.input_desc + op.output_desc]
    return any(a != b and b.startswith(a) for keys in maps for a in keys for b in keys)


def assert_dumps_equal_references(graph: IrGraph) -> None:
    reference = reference_model_def(graph)
    assert graph_to_json_text(graph) == reference_json_text(graph)
    assert graph_to_pbtxt(graph) == text_format.MessageToString(reference)
    data = encode_model_def(graph)
    if not _has_prefix_keys(graph):
        assert data == reference.SerializeToString(deterministic=True)
    else:
        assert schema().ModelDef.FromString(data) == reference


# -- graphs whose ops repeat ---------------------------------------------------------------
# Values equal under == that every writer prints apart: the writers' caches must tell them apart.
LOOKALIKE_ATTRS = [
    Attr(AttrKind.FLOAT, 0.0), Attr(AttrKind.FLOAT, -0.0), Attr(AttrKind.FLOAT, math.inf),
    Attr(AttrKind.INT, 1), Attr(AttrKind.BOOL, True), Attr(AttrKind.INT, 0), Attr(AttrKind.BOOL, False),
    Attr(AttrKind.LIST_FLOAT, (0.0,)), Attr(AttrKind.LIST_FLOAT, (-0.0,)),
    Attr(AttrKind.LIST_INT, (1, 0)), Attr(AttrKind.LIST_BOOL, (True, False)),
    Attr(AttrKind.TENSOR, TensorValue.from_torch(torch.tensor([0.0]))), Attr(AttrKind.TENSOR, TensorValue.from_torch(torch.tensor([-0.0]))),
    Attr(AttrKind.STR, "0"), Attr(AttrKind.DTYPE, DataType.DT_FLOAT16),
]
PLAIN_NAMES = st.text(st.sampled_from("abXY_:/.0123456789"), min_size=1, max_size=8)


def _copy(attr: Attr) -> Attr:
    return Attr(attr.kind, attr.value)  # equal, not the same object


@st.composite
def repeating_graphs(draw: st.DrawFn) -> IrGraph:
    """Ops built from small pools of attrs and descs, used as the same objects and as
    equal copies; names, inputs and provenance mostly without escapes, sometimes with."""
    attr_pool = draw(st.lists(ATTRS, min_size=1, max_size=4)) + LOOKALIKE_ATTRS
    desc_pool = draw(st.lists(tensor_descs(), min_size=1, max_size=3))
    names = PLAIN_NAMES if draw(st.booleans()) else NAMES
    sources = st.none() | st.sampled_from(["/m.py:1", "/m.py:2"]) | (st.just(None) if names is PLAIN_NAMES else TEXT)
    graph = IrGraph(name=draw(names), attrs={"g": _copy(draw(st.sampled_from(attr_pool)))})
    keys = st.sampled_from(["N", "axis", "keep_dims", "_scope", "value", "z", PROVENANCE_FX_NODE + "_x", "_fxlab_g", "_readable_value", "index"])
    for index in range(draw(st.integers(min_value=1, max_value=12))):
        attrs = {}
        for key in draw(st.lists(keys, max_size=3, unique=True)):
            attr = draw(st.sampled_from(attr_pool))
            attrs[key] = _copy(attr) if draw(st.booleans()) else attr
        earlier = [op.name for op in graph.ops]
        inputs = [f"{draw(st.sampled_from(earlier))}:{draw(st.sampled_from(['0', '1', '-1']))}" for _ in range(draw(st.integers(0, 3)))] if earlier else []
        graph.ops.append(IrOp(
            name=f"op{index}_{draw(names)}",
            type=draw(st.sampled_from(["Add", "Const", "Cast", "", "Data", "NetOutput"])),
            inputs=inputs + draw(st.sampled_from([[], [""]])),
            attrs=attrs,
            input_desc=draw(st.lists(st.sampled_from(desc_pool), max_size=2)),
            output_desc=draw(st.lists(st.sampled_from(desc_pool), max_size=2)),
            fx_node=draw(st.none() | names),
            source=draw(sources),
        ))
    graph.inputs = [op.name for op in graph.ops[:1]]
    graph.outputs = [f"{graph.ops[-1].name}:0"]
    return graph


@given(repeating_graphs())
@settings(max_examples=150, deadline=None)
def test_repeating_graphs_dump_as_the_references(graph: IrGraph) -> None:
    assert_dumps_equal_references(graph)


def test_every_kind_graph_dumps_as_the_references() -> None:
    assert_dumps_equal_references(every_kind_graph())
    assert_dumps_equal_references(IrGraph("empty"))


def test_provenance_of_any_length_and_empty_dumps_as_the_references() -> None:
    """Empty provenance values, and values whose entries need two-byte lengths, give the
    references' bytes."""
    desc = TensorDesc("y", DataType.DT_FLOAT, (2,))
    ops = [IrOp(f"op{i}", "Add", ["x:0"], {}, [desc], [desc], fx, source) for i, (fx, source) in enumerate([
        ("", ""), ("n" * 120, "/m.py:1"), ("n" * 200, "s" * 300), (None, ""), ("", None), ("n" * 200, "/m.py:1"),
    ])]
    assert_dumps_equal_references(IrGraph("g", ops))


def test_descs_equal_but_printing_apart_dump_as_the_references() -> None:
    """Desc texts are shared by value: descs whose attrs differ only in a float's sign or
    an int/bool kind keep their own texts."""
    def desc(attr: Attr) -> TensorDesc:
        return TensorDesc("y", DataType.DT_FLOAT, (2,), "ND", {"a": attr})

    attrs = [Attr(AttrKind.FLOAT, 0.0), Attr(AttrKind.FLOAT, -0.0), Attr(AttrKind.INT, 1), Attr(AttrKind.BOOL, True)]
    ops = [IrOp(f"op{i}", "Add", [], {}, [desc(attr)], [TensorDesc("y", DataType.DT_FLOAT, (2,))]) for i, attr in enumerate(attrs)]
    ops += [IrOp(f"data{i}", "Data", [], {"index": Attr(AttrKind.INT, i)}, [], [TensorDesc("y", dtype, (2,), layout)])
            for i, (dtype, layout) in enumerate([(DataType.DT_FLOAT, "ND"), (DataType.DT_FLOAT16, "ND"), (DataType.DT_FLOAT, "NCHW"), (DataType.DT_FLOAT, "ND")])]
    graph = IrGraph("g", ops)
    assert_dumps_equal_references(graph)
    assert 'data2_0 = ge.Data(index=2, dtype=0, shape=[2], format="NCHW", node_name="data2")' in graph_to_py(graph)


def test_ops_of_16_kib_and_more_dump_as_the_references() -> None:
    """Lengths from 16 KiB on take more than two varint bytes: an op field, a name or an
    input that long."""
    desc = TensorDesc("y", DataType.DT_FLOAT, (2,))
    producers = [IrOp(f"p{i}", "Data", [], {"index": Attr(AttrKind.INT, i)}, [], [desc], f"p{i}") for i in range(3)]
    wide = IrOp("out", "NetOutput", [f"p{i % 3}:0" for i in range(3000)], {}, [desc] * 3, [], "output")
    assert_dumps_equal_references(IrGraph("g", [*producers, wide]))
    assert_dumps_equal_references(IrGraph("g", [*producers, IrOp("n" * 17000, "Add", ["p0:0"], {}, [desc], [desc], "add")]))
    # An input that long (its producer need not be in the graph for the dumps).
    assert_dumps_equal_references(IrGraph("g", [*producers, IrOp("add", "Add", ["n" * 17000 + ":0"], {}, [desc], [desc], "add")]))


def test_one_attr_ops_dump_as_the_references() -> None:
    """An op's one attr sorts before, between or after the provenance entries by its name."""
    desc = TensorDesc("y", DataType.DT_FLOAT, (2,))
    attrs = [Attr(AttrKind.INT, 3), Attr(AttrKind.INT, 300), Attr(AttrKind.STR, "s"), Attr(AttrKind.INT, 3)] * 2
    for key in ("N", "_fxlab_g", "index"):  # one graph each: no key is a prefix of another, so bytes are compared
        ops = [IrOp(f"op{i}", "Op", ["x:0"] if i % 2 else [], {key: attr}, [desc], [desc], "n" if i % 3 else None, "/m.py:1" if i % 4 else None)
               for i, attr in enumerate(attrs)]
        assert not _has_prefix_keys(IrGraph("g", ops))
        assert_dumps_equal_references(IrGraph("g", ops))


def test_graph_inputs_of_every_index_width_dump_as_the_references() -> None:
    """Data ops' int indexes are varints of 1 to 6 bytes on the wire; a bool index, a
    second attr and another op type with an ``index`` attr are written as any attr."""
    descs = [TensorDesc("y", DataType.DT_FLOAT, (2,)), TensorDesc("y", DataType.DT_INT64, (3, 4))]
    indexes = [0, 5, 127, 128, 300, 20000, 2**40, 7]
    ops = [
        IrOp(f"arg{i}", "Data", [], {"index": Attr(AttrKind.INT, index)}, [], [descs[i % 2]], f"arg{i}" if i % 3 else None, "/m.py:1" if i % 4 else None)
        for i, index in enumerate(indexes)
    ]
    ops += [
        IrOp("flag", "Data", [], {"index": Attr(AttrKind.BOOL, True)}, [], [descs[0]], "flag"),
        IrOp("two", "Data", [], {"index": Attr(AttrKind.INT, 9), "N": Attr(AttrKind.INT, 1)}, [], [descs[0]], "two"),
        IrOp("other", "Gather", ["arg0:0"], {"index": Attr(AttrKind.INT, 4)}, [descs[0]], [descs[0]], "other"),
        IrOp("fed", "Data", ["arg1:0"], {"index": Attr(AttrKind.INT, 11)}, [descs[0]], [descs[0]], "fed"),
    ]
    graph = IrGraph("g", ops, inputs=[op.name for op in ops[:8]], outputs=["other:0"])
    assert_dumps_equal_references(graph)
