"""TorchAir-style ``py`` dump of an Ascend IR graph."""
from __future__ import annotations

import torch

from tests.functional_graphs import functional_graph
from fxlab.ir import ge
from fxlab.ir.builder import GraphBuilder, building
from fxlab.ir.dump_py import HEADER, READABLE_VALUE, graph_to_py
from fxlab.ir.model import Attr, AttrKind, DataType, IrGraph, IrOp, TensorDesc
from tests.ir.ir_fixtures import two_layer_decoder

MODEL = "/models/model.py"


def _scaled_add_fx():
    gm = functional_graph(lambda x, y: x + y * 2, torch.randn(2, 3), torch.randn(2, 3))
    code = {"mul": (7, "z = y * 2"), "add": (8, "return x + z")}
    for node in gm.graph.nodes:
        if node.name in code:
            line, text = code[node.name]
            node.meta["stack_trace"] = f'  File "{MODEL}", line {line}, in forward\n    {text}\n'
    return gm


def _scaled_add_ir() -> IrGraph:
    """The IR of ``_scaled_add_fx``, built by hand as a converter would build it."""
    b = GraphBuilder("graph_0")
    with building(b):
        data = []
        for i in range(2):
            with b.converting(f"arg{i}_1", None):
                (t,) = b.add_op("Data", (), {"index": i}, ("y",), dtypes=DataType.DT_FLOAT, shapes=[(2, 3)], name=f"arg{i}_1")
            data.append(t)
        with b.converting("mul", f"{MODEL}:7"):
            mul = ge.op1("Mul", {"x1": data[1], "x2": ge.const(2.0)}, shapes=[(2, 3)])
        with b.converting("add", f"{MODEL}:8"):
            add = ge.op1("Add", {"x1": data[0], "x2": mul}, shapes=[(2, 3)])
        with b.converting("output", None):
            b.add_op("NetOutput", {"x0": add}, None, (), name="NetOutput")
    return b.graph


def test_ops_grouped_per_fx_node_as_torchair_prints_them() -> None:
    assert graph_to_py(_scaled_add_ir(), _scaled_add_fx()) == HEADER + f"""
arg0_1_0 = ge.Data(index=0, dtype=0, shape=[2, 3], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[2, 3], node_name="arg1_1")

# File "{MODEL}", line 7, in forward    z = y * 2
## FX Code: mul: torch.float32[2, 3]cpu = torch.ops.aten.mul.Tensor(arg1_1: torch.float32[2, 3]cpu, 2)
Mul_0 = ge.Mul(arg1_1_0, ge.Const(2.0, dtype=0), node_name="Mul")

# File "{MODEL}", line 8, in forward    return x + z
## FX Code: add: torch.float32[2, 3]cpu = torch.ops.aten.add.Tensor(arg0_1: torch.float32[2, 3]cpu, mul: torch.float32[2, 3]cpu)
Add_0 = ge.Add(arg0_1_0, Mul_0, node_name="Add")

_ = ge.NetOutput([Add_0])
"""


def test_without_the_fx_graph_names_and_source_lines_are_used() -> None:
    text = graph_to_py(_scaled_add_ir())
    assert f'\n# File "{MODEL}", line 7\n## FX Code: mul\nMul_0 = ge.Mul(' in text
    assert f'\n# File "{MODEL}", line 8\n## FX Code: add\nAdd_0 = ge.Add(' in text
    assert "## FX Code: arg0_1" not in text and "## FX Code: output" not in text


def test_file_comment_repeats_when_the_source_line_changes() -> None:
    b = GraphBuilder("g")
    with building(b):
        with b.converting("x", None):
            (x,) = b.add_op("Data", (), {"index": 0}, ("y",), dtypes=DataType.DT_FLOAT, shapes=[(2,)], name="x")
        for i, line in enumerate([3, 4, 3]):
            with b.converting(f"neg_{i}", f"{MODEL}:{line}"):
                x = ge.op1("Neg", {"x": x})
    text = graph_to_py(b.graph)
    assert text.count(f'# File "{MODEL}", line 3') == 2 and text.count(f'# File "{MODEL}", line 4') == 1


def test_call_details() -> None:
    b = GraphBuilder("g")
    with building(b):
        with b.converting("x", None):
            (x,) = b.add_op("Data", (), {"index": 0}, ("y",), dtypes=DataType.DT_BF16, shapes=[(4, -1)], name="x")
        b.push_scope(["_super_kernel_scope", "_op_aicore_num"], ["sk", "8"])
        with b.converting("split", f"{MODEL}:5"):
            parts = ge.op("SplitV", {"x": x, "size_splits": ge.const([2, 2]), "split_dim": ge.const(0)},
                          {"num_split": 2, "mode": "fast", "dst": DataType.DT_FLOAT}, outputs=("y0", "y1"))
        b.pop_scope()
        with b.converting("mm", f"{MODEL}:6"):
            w = ge.const(torch.ones(8, 8))
            small = ge.const(torch.tensor([[1.5, 2.0]]))
            ge.op1("MatMulV2", {"x1": parts[0], "x2": w, "bias": None, "w": small}, {"transpose_x1": False}, dependencies=[parts[1]])
    text = graph_to_py(b.graph)
    assert ('SplitV_0, SplitV_1 = ge.SplitV(x_0, ge.Const([2, 2], dtype=9), ge.Const(0, dtype=9), num_split=2, mode="fast", dst=0, '
            'node_name="SplitV")  # _super_kernel_scope="sk", _op_aicore_num="8"') in text
    assert 'Const_2_0 = ge.Const(value=..., node_name="Const_2")' in text
    assert 'Const_3_0 = ge.Const(value=tensor([[1.5, 2.0]]), node_name="Const_3")' in text
    assert ('MatMulV2_0 = ge.MatMulV2(SplitV_0, Const_2_0, None, Const_3_0, transpose_x1=False, dependencies=[SplitV_0], '
            'node_name="MatMulV2")') in text
    assert 'x_0 = ge.Data(index=0, dtype=27, shape=[4, -1], node_name="x")' in text


def test_dump_is_deterministic() -> None:
    assert graph_to_py(_scaled_add_ir(), _scaled_add_fx()) == graph_to_py(_scaled_add_ir(), _scaled_add_fx())


def test_decoder_dump_pinned_by_exact_lines() -> None:
    functional, ir = two_layer_decoder()
    text = graph_to_py(ir, functional)
    assert text.startswith(HEADER + '\narg0_1_0 = ge.Data(index=0, dtype=9, shape=[1, 8], node_name="arg0_1")\n'
                           'arg1_1_0 = ge.Data(index=1, dtype=0, shape=[16, 16], node_name="arg1_1")\n')
    assert """
## FX Code: pow_1: torch.float32[1, 8, 64]cpu = torch.ops.aten.pow.Tensor_Scalar(embedding: torch.float32[1, 8, 64]cpu, 2)
Pow_0 = ge.Pow(GatherV2_0, ge.Const(2, dtype=0), node_name="Pow")
## FX Code: mean: torch.float32[1, 8, 1]cpu = torch.ops.aten.mean.dim(pow_1: torch.float32[1, 8, 64]cpu, [-1], True)
ReduceMean_0 = ge.ReduceMean(Pow_0, ge.Const([-1], dtype=9), keep_dims=True, noop_with_empty_axes=True, node_name="ReduceMean")
""" in text
    assert """
Pack_0 = ge.Pack(ge.Const(8, dtype=9), ge.Const(-1, dtype=9), axis=0, N=2, node_name="Pack")
Cast_3_0 = ge.Cast(Pack_0, dst_type=9, node_name="Cast_3")
SplitV_0, SplitV_1 = ge.SplitV(Reshape_7_0, Cast_3_0, ge.Const(-1, dtype=3), num_split=2, node_name="SplitV")
""" in text
    assert text.endswith("""
Reshape_59_0 = ge.Reshape(MatMul_14_0, ge.Const([1, 8, 128], dtype=9), axis=0, num_axes=-1, node_name="Reshape_59")

_ = ge.NetOutput([Reshape_59_0, ConcatV2_2_0, ConcatV2_3_0, ConcatV2_6_0, ConcatV2_7_0])
""")
    assert text.count("\n") == 565 and text.count("## FX Code: ") == 129


def test_a_constant_with_control_characters_is_written_as_an_escaped_literal() -> None:
    desc = TensorDesc("y", DataType.DT_FLOAT, (2,))
    ops = [
        IrOp("arg0_1", "Data", [], {"index": Attr(AttrKind.INT, 0)}, [], [desc], "arg0_1"),
        IrOp("c", "Const", [], {READABLE_VALUE: Attr(AttrKind.STR, "'a\x00b\x01c'")}, [], [desc], "mul"),
        IrOp("Mul", "Mul", ["arg0_1:0", "c:0"], {}, [desc, desc], [desc], "mul", "/m.py:1"),
        IrOp("Mul_1", "Mul", ["Mul:0", "c:0"], {}, [desc, desc], [desc], "mul", "/m.py:1"),
    ]
    text = graph_to_py(IrGraph("g", ops))
    assert 'Mul_1_0 = ge.Mul(Mul_0, ge.Const("a\\u0000b\\u0001c", dtype=0), node_name="Mul_1")' in text
    compile(text, "ascend_ir.py", "exec")


def test_unusual_ops_are_written_as_torchair_would() -> None:
    """Control inputs, optional inputs left unfed, inline constants (written where their
    output 0 is read; a Const has no other, so another index is a variable), names with
    ``:`` or ``/``, several or no outputs, FX nodes the FX graph lacks."""
    desc = TensorDesc("y", DataType.DT_FLOAT, (2,))
    readable = {"value": Attr(AttrKind.INT, 2), READABLE_VALUE: Attr(AttrKind.STR, "2")}
    ops = [
        IrOp("arg0_1", "Data", [], {"index": Attr(AttrKind.INT, 0)}, [], [desc], "arg0_1"),
        IrOp("c/1", "Const", [], dict(readable), [], [desc], "mul"),
        IrOp("c:2", "Const", [], dict(readable), [], [TensorDesc("y", DataType.DT_INT32, (2,))], "mul"),
        IrOp("Mul", "Mul", ["arg0_1:0", "c/1:0"], {}, [desc, desc], [desc], "mul", "/m.py:1"),
        IrOp("Mul_1", "Mul", ["arg0_1:0", "c:2:0"], {}, [desc, desc], [desc], "mul", "/m.py:1"),
        IrOp("Mul_3", "Mul", ["arg0_1:0", "c:2:1"], {}, [desc, desc], [desc], "mul", "/m.py:1"),
        IrOp("Mul_2", "Mul", ["Mul:0", "arg0_1:-1"], {}, [desc, desc], [desc], "mul", "/m.py:1"),
        IrOp("Split/a", "Split", ["Mul_2:0", ""], {"num": Attr(AttrKind.INT, 2)}, [desc], [desc, desc], "add", "/m.py:2"),
        IrOp("NoOut", "NoOp", ["Split/a:1"], {}, [desc], [], "add", "/m.py:2"),
        IrOp("Ghost", "Add", ["Split/a:0", "Split/a:1"], {}, [desc, desc], [desc], "ghost", "/m.py:3"),
        IrOp("GhostOut", "NetOutput", ["Ghost:0"], {}, [desc], [], "ghost_2"),
        IrOp("Ghost_3", "Add", ["Ghost:0", "c/1:0"], {}, [desc, desc], [desc], "ghost_2"),
        IrOp("NetOutput", "NetOutput", ["Ghost_3:0"], {}, [desc], [], "output"),
    ]
    graph = IrGraph("g", ops)
    text = graph_to_py(graph, _scaled_add_fx())
    assert 'Mul_1_0 = ge.Mul(arg0_1_0, ge.Const(2, dtype=3), node_name="Mul_1")' in text
    assert 'Mul_3_0 = ge.Mul(arg0_1_0, c_2_1, node_name="Mul_3")' in text
    assert 'Mul_2_0 = ge.Mul(Mul_0, dependencies=[arg0_1_0], node_name="Mul_2")' in text
    assert 'Split_a_0, Split_a_1 = ge.Split(Mul_2_0, None, num=2, node_name="Split/a")' in text
    assert "## FX Code: ghost\n" in text and "## FX Code: ghost_2" not in text


HOSTILE = 'x")\nimport os; os.system("echo pwned")  # \u202e'


def test_a_dump_of_hostile_names_compiles_and_calls_what_the_graph_holds() -> None:
    """GE op names and types, attr keys and values, FX node names and source paths are
    any strings: the dump stays a valid script that makes exactly the graph's calls."""
    desc = TensorDesc("y", DataType.DT_FLOAT, (2,))
    nan_const = {READABLE_VALUE: Attr(AttrKind.STR, "nan")}
    ops = [
        IrOp(f"in {HOSTILE}", "Data", [], {"index": Attr(AttrKind.INT, 0), "weird key!": Attr(AttrKind.STR, HOSTILE)}, [], [desc], "arg0_1"),
        IrOp("c", "Const", [], nan_const, [], [desc], "mul"),
        IrOp(HOSTILE, f"My{HOSTILE}Op", [f"in {HOSTILE}:0", "c:0"],
             {"class": Attr(AttrKind.FLOAT, float("inf")), "s": Attr(AttrKind.LIST_STR, (HOSTILE,)), f"_private\n{HOSTILE}": Attr(AttrKind.STR, HOSTILE)},
             [desc, desc], [desc, desc], f"node\n{HOSTILE}", f"/m\n{HOSTILE}.py:3"),
        IrOp("if", "Add", [f"{HOSTILE}:1", f"{HOSTILE}:0"], {}, [desc, desc], [desc], "add", "/m.py:4"),
        IrOp("NetOutput", "NetOutput", ["if:0"], {}, [desc], [], None),
    ]
    text = graph_to_py(IrGraph("g", ops))
    assert "\u202e" not in text  # shown as \\u202e, in comments too
    code = compile(text.replace(HEADER, ""), "ascend_ir.py", "exec")
    calls = []

    class Ge:
        def __getattr__(self, op_type):
            def call(*args, **kwargs):
                calls.append((op_type, kwargs.get("node_name"), args, kwargs))
                return (f"{op_type}-out", f"{op_type}-out2") if op_type.startswith("My") else f"{op_type}-out"
            return call

    # No import and no other builtin is reachable: injected code would fail, not run.
    exec(code, {"__builtins__": {"float": float, "getattr": getattr, "complex": complex}, "ge": Ge(), "tensor": None})
    assert [(t, n) for t, n, _, _ in calls] == [
        ("Data", f"in {HOSTILE}"), ("Const", None), (f"My{HOSTILE}Op", HOSTILE), ("Add", "if"), ("NetOutput", None),
    ]
    data, const, mine, add = (c for c in calls[:4])
    assert data[3]["weird key!"] == HOSTILE and str(const[2][0]) == "nan"
    assert mine[2] == ("Data-out", "Const-out") and mine[3]["class"] == float("inf") and mine[3]["s"] == [HOSTILE]
    assert add[2] == (f"My{HOSTILE}Op-out2", f"My{HOSTILE}Op-out")


def test_attrs_named_like_the_calls_own_keywords_still_compile() -> None:
    desc = TensorDesc("y", DataType.DT_FLOAT, (2,))
    ops = [
        IrOp("x", "Data", [], {"index": Attr(AttrKind.INT, 0), "node_name": Attr(AttrKind.STR, "n")}, [], [desc], "x"),
        IrOp("Foo", "Foo", ["x:0"], {"node_name": Attr(AttrKind.INT, 1), "dependencies": Attr(AttrKind.INT, 2)}, [desc], [desc], "foo"),
    ]
    text = graph_to_py(IrGraph("g", ops))
    compile(text, "ascend_ir.py", "exec")
    assert 'ge.Foo(x_0, **{"node_name": 1, "dependencies": 2}, node_name="Foo")' in text
