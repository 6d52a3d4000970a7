"""Shared by the IR serialization tests: hypothesis strategies for IR graphs, a hand-made
graph with every attr kind, and TorchAir's generated protobuf module when available.

Values are drawn so that every writer can keep them: floats are the shortest decimal of
a float32 (what a 32-bit wire field gives back), ints fit int64, and strings are any
unicode text without surrogates (protobuf strings are UTF-8).
"""
from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType

import torch
from hypothesis import strategies as st

from fxlab.ir.ge_proto import shortest_float32
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc, TensorValue, torch_dtype

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
NAMES = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=10)
DTYPES = st.sampled_from(list(DataType))
FLOAT32 = st.floats(width=32, allow_nan=False).map(shortest_float32)
DIMS = st.one_of(st.just((-2,)), st.lists(st.integers(min_value=-1, max_value=2**40), max_size=4).map(tuple))
TENSOR_DTYPES = [DataType.DT_FLOAT, DataType.DT_FLOAT16, DataType.DT_BF16, DataType.DT_INT64, DataType.DT_INT32, DataType.DT_BOOL, DataType.DT_INT8]


@st.composite
def tensor_values(draw: st.DrawFn) -> TensorValue:
    dtype = draw(st.sampled_from(TENSOR_DTYPES))
    shape = tuple(draw(st.lists(st.integers(min_value=0, max_value=3), max_size=3)))
    count = 1
    for d in shape:
        count *= d
    if dtype is DataType.DT_BOOL:
        values = torch.tensor(draw(st.lists(st.booleans(), min_size=count, max_size=count)), dtype=torch.bool)
    elif dtype in (DataType.DT_INT64, DataType.DT_INT32, DataType.DT_INT8):
        values = torch.tensor(draw(st.lists(st.integers(-100, 100), min_size=count, max_size=count)), dtype=torch.int64)
    else:
        values = torch.tensor(draw(st.lists(FLOAT32, min_size=count, max_size=count)), dtype=torch.float32)
    return TensorValue.from_torch(values.to(torch_dtype(dtype)).reshape(shape))


def attrs_of_kind(kind: AttrKind) -> st.SearchStrategy[Attr]:
    values = {
        AttrKind.STR: TEXT,
        AttrKind.INT: INT64,
        AttrKind.FLOAT: FLOAT32,
        AttrKind.BOOL: st.booleans(),
        AttrKind.DTYPE: DTYPES,
        AttrKind.TENSOR: tensor_values(),
        AttrKind.LIST_STR: st.lists(TEXT, max_size=4).map(tuple),
        AttrKind.LIST_INT: st.lists(INT64, max_size=4).map(tuple),
        AttrKind.LIST_FLOAT: st.lists(FLOAT32, max_size=4).map(tuple),
        AttrKind.LIST_BOOL: st.lists(st.booleans(), max_size=4).map(tuple),
        AttrKind.LIST_DTYPE: st.lists(DTYPES, max_size=4).map(tuple),
        AttrKind.LIST_LIST_INT: st.lists(st.lists(INT64, max_size=3).map(tuple), max_size=3).map(tuple),
        AttrKind.LIST_INDEXED_STR: st.lists(st.tuples(st.integers(0, 2**31), TEXT), min_size=1, max_size=3).map(tuple),
    }[kind]
    return values.map(lambda v: Attr(kind, v))


ATTRS = st.sampled_from(list(AttrKind)).flatmap(attrs_of_kind)
ATTR_MAPS = st.dictionaries(NAMES, ATTRS, max_size=4)


@st.composite
def tensor_descs(draw: st.DrawFn, with_attrs: bool = True) -> TensorDesc:
    return TensorDesc(
        name=draw(st.sampled_from(["", "x", "y", "x1", "bias", "y0"])),
        dtype=draw(DTYPES),
        shape=draw(DIMS),
        layout=draw(st.sampled_from(["ND", "NCHW", "", "FRACTAL_NZ"])),
        attrs=draw(st.dictionaries(NAMES, ATTRS, max_size=2)) if with_attrs else {},
    )


@st.composite
def ir_graphs(draw: st.DrawFn, tensor_attrs: bool = True) -> IrGraph:
    """Graphs of ops wired to earlier ops by data edges ("op:i"), control edges
    ("op:-1") and absent optional inputs (""), with provenance on some ops."""
    graph = IrGraph(name=draw(NAMES), attrs=draw(ATTR_MAPS))
    for index in range(draw(st.integers(min_value=0, max_value=6))):
        earlier = [op.name for op in graph.ops]
        inputs = []
        for _ in range(draw(st.integers(min_value=0, max_value=3)) if earlier else 0):
            producer = draw(st.sampled_from(earlier))
            inputs.append(draw(st.sampled_from([f"{producer}:0", f"{producer}:1", f"{producer}:-1", ""])))
        attrs = draw(ATTR_MAPS)
        if not tensor_attrs:
            attrs = {k: v for k, v in attrs.items() if v.kind is not AttrKind.TENSOR}
        graph.ops.append(IrOp(
            name=f"op{index}_{draw(NAMES)}",
            type=draw(st.sampled_from(["Data", "Add", "MatMulV2", "Const", "NetOutput", "MyInplace"])),
            inputs=inputs,
            attrs=attrs,
            input_desc=draw(st.lists(tensor_descs(), max_size=3)),
            output_desc=draw(st.lists(tensor_descs(), max_size=2)),
            fx_node=draw(st.none() | NAMES),
            source=draw(st.none() | TEXT),
        ))
    graph.inputs = [op.name for op in graph.ops if op.type == "Data"]
    graph.outputs = draw(st.lists(st.sampled_from([f"{op.name}:0" for op in graph.ops]), max_size=2)) if graph.ops else []
    return graph


def every_kind_graph() -> IrGraph:
    """A hand-made graph: every attr kind, unknown dims and rank, desc attrs, control
    edges, an absent optional input, provenance."""
    data = IrOp("arg0_1", "Data", [], {"index": Attr(AttrKind.INT, 0)}, [],
                [TensorDesc("y", DataType.DT_FLOAT, (2, -1), "ND", {"_fxlab_symbolic_shape": Attr(AttrKind.STR, "[2, s0]")})],
                fx_node="arg0_1")
    attrs = {
        "i": Attr(AttrKind.INT, -(2**63)), "f": Attr(AttrKind.FLOAT, 1e-5), "b": Attr(AttrKind.BOOL, False),
        "s": Attr(AttrKind.STR, 'ü "quoted"\n'), "void": Attr(AttrKind.STR, ""), "zero": Attr(AttrKind.INT, 0),
        "dt": Attr(AttrKind.DTYPE, DataType.DT_BF16),
        "t": Attr(AttrKind.TENSOR, TensorValue.from_torch(torch.tensor([[1.5, -2.0]]))),
        "li": Attr(AttrKind.LIST_INT, (1, -2, 2**40)), "nil_li": Attr(AttrKind.LIST_INT, ()),
        "lf": Attr(AttrKind.LIST_FLOAT, (0.5, 1e-6, float("inf"))), "lb": Attr(AttrKind.LIST_BOOL, (True, False)),
        "ls": Attr(AttrKind.LIST_STR, ("a", "")), "nil_ls": Attr(AttrKind.LIST_STR, ()),
        "ld": Attr(AttrKind.LIST_DTYPE, (DataType.DT_FLOAT, DataType.DT_INT64)),
        "lli": Attr(AttrKind.LIST_LIST_INT, ((1, 2), (), (-1,))),
        "layout_info": Attr(AttrKind.LIST_INDEXED_STR, ((2, "ND"), (0, "NCDHW"))),
        "_super_kernel_scope": Attr(AttrKind.STR, "sk1"),
    }
    add = IrOp("MatMulV2", "MatMulV2", ["arg0_1:0", "arg0_1:0", "", "arg0_1:-1"], attrs,
               [TensorDesc("x1", DataType.DT_FLOAT, (2, -1)), TensorDesc("x2", DataType.DT_FLOAT, (-2,)),
                TensorDesc("bias", attrs={"_is_unfed_optional": Attr(AttrKind.INT, 1)})],
               [TensorDesc("y", DataType.DT_FLOAT, (2, 2))], fx_node="mm", source="/models/m.py:12")
    out = IrOp("NetOutput", "NetOutput", ["MatMulV2:0"], {}, [TensorDesc("x0", DataType.DT_FLOAT, (2, 2))], [], fx_node="output")
    return IrGraph("graph_0", [data, add, out], ["arg0_1"], ["MatMulV2:0"], {"graph_attr": Attr(AttrKind.LIST_INT, (3,))})


def torchair_pb2(torchair_dir: Path | None) -> ModuleType:
    """TorchAir's ``ge_ir`` pb2 module, loaded by path from the TorchAir copy at
    ``torchair_dir`` (the ``torchair_path`` fixture's; None: the installed TorchAir)."""
    if torchair_dir is None:
        torchair_dir = Path(importlib.util.find_spec("torchair").origin).parent
    path = Path(torchair_dir) / "_ge_concrete_graph" / "ge_ir_by_protoc_3_19_pb2.py"
    spec = importlib.util.spec_from_file_location("torchair_ge_ir_pb2", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=1)
def two_layer_decoder() -> tuple[object, IrGraph]:
    """The functional graph and Ascend IR of the two-layer example decoder (captured once):
    ops sharing attrs and descs, the case the shape-based writers are made for."""
    import sys

    from tests.sessions import capture_of

    example = Path(__file__).resolve().parents[2] / "examples" / "llama_decoder.py"
    sys.path.insert(0, str(example.parent))
    try:
        from llama_decoder import build
    finally:
        sys.path.remove(str(example.parent))
    model, inputs = build(2)
    captured = capture_of(model, inputs, stages=("functional", "ascend_ir"), verify=False)
    (graph,) = captured.graphs
    return graph.converted_module(), captured.trace.graphs[0].ir
