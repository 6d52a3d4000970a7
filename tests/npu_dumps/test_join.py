"""Every GE op of dumps made by GE's naming rules from a known trace maps to the TorchAir
ops, FX nodes and source lines it came from: through a saved trace, and through
TorchAir's own py dump alone."""

from __future__ import annotations

import pytest

from fxlab.capture.serialize import load_trace
from fxlab.npu_dumps.join import join, merge_torchair_graphs, torchair_graph_from_ir
from fxlab.npu_dumps.read import read_dumps
from tests.npu_dumps.ge_dump_maker import rename_op
from tests.npu_dumps.made_dumps import GOLDEN_TRACE, line, made_dumps


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return made_dumps(tmp_path_factory.mktemp("ge"))


def _with_trace(folder):
    dumps = read_dumps([folder])
    trace = load_trace(GOLDEN_TRACE)
    joined = join(dumps, [torchair_graph_from_ir(g.ir, "trace") for g in trace.graphs])
    return dumps, joined


def _phase(dumps, phase):
    return next(g for g in dumps.graphs if g.phase == phase)


# op -> (TorchAir ops, FX nodes, source lines) in the last phase, known from how the dumps were made
EXPECTED_LAST = {
    "sk_mlp_split_7_13_start_Transpose_end_trans_TransData_1": (["Transpose", "MatMulV2", "Mul", "Add"], ["addmm"], [line(28)]),
    "sk_mlp_split_9_11_start_Swish_end_Swish": (["Swish"], ["silu"], [line(31)]),
    "sk_mlp_split_14_20_start_Transpose_1_end_trans_TransData_3": (
        ["Transpose_1", "MatMulV2_1", "Mul_2", "Add_1"],
        ["addmm_1"],
        [line(35)],
    ),
    "sk_norm_start_Mul_3Cast_1_end_Add_3": (["Mul_3", "Cast_1", "Add_3"], ["add_1", "mul_1"], [line(39), line(40)]),
    "Mul_1": (["Mul_1"], ["mul"], [line(34)]),
    "Cast": (["Cast"], ["mul"], [line(34)]),
    "Add_2": (["Add_2"], ["add"], [line(37)]),
    "Const": (["Const"], ["addmm"], [line(28)]),
    "End0": ([], [], []),
    "PlaceHolder0": ([], [], []),
}


def test_every_op_of_the_last_phase_maps_to_its_fx_nodes_and_lines(folder):
    dumps, joined = _with_trace(folder)
    last = _phase(dumps, "AfterSkGraph")
    got = {op.name: (op.torchair_ops, op.fx_nodes, op.source) for op in last.ops if op.name in EXPECTED_LAST}
    assert got == EXPECTED_LAST
    assert [op.name for op in last.ops if op.inserted] == [f"PlaceHolder{i}" for i in range(7)] + ["End0"]
    assert set(joined) == set(range(len(dumps.graphs)))  # every graph, the sub-graphs too, joined with the trace's graph 0


def test_fused_members_in_super_kernel_sub_graphs_map_through_their_originals(folder):
    dumps, _ = _with_trace(folder)
    sub = _phase(dumps, "super_kernel_sub_graph0")
    by_name = {op.name: op for op in sub.ops}
    matmul = by_name["MatMulV2"]
    assert (matmul.originals, matmul.original_types, matmul.passes) == (
        ["MatMulV2", "Mul", "Add"],
        ["MatMulV2", "Mul", "Add"],
        ["MatMulBiasAddFusionPass"],
    )
    assert (matmul.fx_nodes, matmul.source) == (["addmm"], [line(28)])
    assert matmul.outputs[0].fx_tensor_name is None  # dropped by fusion: the map goes through the originals
    assert matmul.super_kernel_parent == "sk_mlp_split_7_13_start_Transpose_end_trans_TransData_1"
    cast = by_name["trans_Cast_0"]
    assert (cast.inserted, cast.originals, cast.super_kernel_scope, cast.changes()) == (
        True,
        [],
        "mlp",
        ["output 0 dtype DT_FLOAT -> DT_FLOAT16"],
    )
    ub = {op.name: op for op in _phase(dumps, "super_kernel_sub_graph3").ops}["Mul_3Cast_1"]
    assert (ub.fusion_scope, ub.originals, ub.fx_nodes, ub.source) == (1, ["Mul_3", "Cast_1"], ["mul_1"], [line(39)])


def test_swish_keeps_its_core_limit_and_first_phase_ops_map_by_fx_tensor_name(folder):
    dumps, _ = _with_trace(folder)
    swish = _phase(dumps, "super_kernel_sub_graph1").op("Swish")
    assert (swish.core_limit, swish.super_kernel_scope) == ("8|16", "mlp")
    begin = _phase(dumps, "PreRunBegin")
    assert begin.op("Add").outputs[0].fx_tensor_name == "addmm-aten.addmm.default.OUTPUT.0"
    assert begin.op("Mul").outputs[0].fx_tensor_name is None  # a helper op of the converter


def test_torchair_py_dump_alone_gives_fx_nodes_and_lines(folder):
    """Without a trace: TorchAir's own py dump beside GE's (the ops it writes as calls)."""
    dumps = read_dumps([folder])
    assert [g.name for g in dumps.torchair] == ["graph_1"]
    join(dumps, merge_torchair_graphs(dumps.torchair))
    last = _phase(dumps, "AfterSkGraph")
    sk = last.op("sk_mlp_split_14_20_start_Transpose_1_end_trans_TransData_3")
    assert (sk.torchair_ops, sk.fx_nodes, sk.source) == (["Transpose_1", "MatMulV2_1", "Mul_2", "Add_1"], ["addmm_1"], [line(35)])
    assert (last.op("Add_2").fx_nodes, last.op("Add_2").source) == (["add"], [line(37)])
    # the py dump writes constants inline and the output as a return: no doubt for them
    assert not [note for note in dumps.notes if "original op name" in note]


def test_an_op_renamed_by_ge_maps_through_its_outputs_origin_name():
    from fxlab.npu_dumps.dump_model import DumpGraph, DumpOp, DumpSet, OutputInfo, TorchAirGraph, TorchAirOp

    renamed = DumpOp(
        "Add_fused_out", "Add", originals=["Add_fused_out"], outputs=[OutputInfo(0, origin_name="Add_2", origin_output_index=0)]
    )
    dumps = DumpSet(graphs=[DumpGraph("f.txt", "ge_proto", 1, "Build", "graph_1", 0, [renamed])])
    torchair = TorchAirGraph("t", "fxlab_trace", "graph_0", {"Add_2": TorchAirOp("Add_2", "Add", ["add"], ["m.py:37"])})
    assert join(dumps, [torchair]) == {0: torchair} and dumps.notes == []
    assert (renamed.torchair_ops, renamed.fx_nodes, renamed.source) == (["Add_2"], ["add"], ["m.py:37"])


def _ge_graph(name: str, originals: list[tuple[str, str]]) -> "DumpGraph":
    from fxlab.npu_dumps.dump_model import DumpGraph, DumpOp

    ops = [DumpOp(n, t, originals=[n], original_types=[t]) for n, t in originals]
    return DumpGraph(f"ge_proto_{name}.txt", "ge_proto", 2, "Build", name, 0, ops)


def _torchair(label: str, name: str, ops: dict[str, tuple[str, str, str]]) -> "TorchAirGraph":
    from fxlab.npu_dumps.dump_model import TorchAirGraph, TorchAirOp

    return TorchAirGraph(label, "fxlab_trace", name, {n: TorchAirOp(n, t, [fx], [src]) for n, (t, fx, src) in ops.items()})


def test_the_graph_after_a_break_joins_its_own_graph_not_the_larger_one_holding_its_names():
    """TorchAir numbers ops afresh in each graph: graph_1's MatMulV2 and Add are names
    graph_0 has too, and graph_0 holds more of them than nothing; graph_1 holds them all."""
    from fxlab.npu_dumps.dump_model import DumpSet

    first = _torchair("t/graph_0", "graph_0", {
        "Data": ("Data", "arg0_1", "m.py:9"), "MatMulV2": ("MatMulV2", "addmm", "m.py:11"), "Relu": ("Relu", "relu", "m.py:12"),
        "Mul": ("Mul", "mul", "m.py:13"), "Add": ("Add", "add", "m.py:13"),
    })
    second = _torchair("t/graph_1", "graph_1", {"Data": ("Data", "arg0_1", "m.py:14"), "MatMulV2": ("MatMulV2", "addmm_1", "m.py:15"), "Add": ("Add", "add_1", "m.py:15")})
    ge = _ge_graph("graph_7", [("Data", "Data"), ("MatMulV2", "MatMulV2"), ("Add", "Add")])
    dumps = DumpSet(graphs=[ge])
    assert join(dumps, [first, second]) == {0: second} and dumps.notes == []
    assert [(op.fx_nodes, op.source) for op in ge.ops] == [(["arg0_1"], ["m.py:14"]), (["addmm_1"], ["m.py:15"]), (["add_1"], ["m.py:15"])]


def test_a_join_that_finds_few_names_or_ties_is_said():
    from fxlab.npu_dumps.dump_model import DumpSet

    other_model = _torchair("t/graph_0", "graph_0", {"Add": ("Add", "add", "other.py:3"), "Mul": ("Mul", "mul", "other.py:4")})
    ge = _ge_graph("graph_1", [("Add", "Add"), ("Mul", "Mul"), ("RmsNorm", "RmsNorm"), ("SoftmaxV2", "SoftmaxV2"), ("Cast", "Cast")])
    dumps = DumpSet(graphs=[ge])
    assert join(dumps, [other_model]) == {0: other_model}
    assert dumps.notes == [
        "graph_1 (Build): only 2 of its 5 ops have an original op name in t/graph_0; it holds ops of types t/graph_0 has none of "
        "(Cast, RmsNorm, SoftmaxV2): the trace or TorchAir dump may be of another model or compile, and its FX nodes and source "
        "lines may be wrong"
    ]
    twin = _torchair("u/graph_0", "graph_0", {"Add": ("Add", "add", "u.py:3"), "Mul": ("Mul", "mul", "u.py:4")})
    dumps = DumpSet(graphs=[_ge_graph("graph_1", [("Add", "Add"), ("Mul", "Mul")])])
    assert join(dumps, [other_model, twin]) == {0: other_model}
    assert dumps.notes == [
        "graph_1 (Build): u/graph_0 fits it as well as t/graph_0, which was taken (the first given); its FX nodes and source "
        "lines may be the other graph's: give the trace graph folder it was compiled from"
    ]


def test_a_graph_of_another_model_sharing_most_generic_names_is_doubted_by_its_types():
    """TorchAir names ops by type and count: another model's graph shares ``arg0_1``,
    ``MatMulV2``, ``Add_1`` ...; its ops of types the trace has none of give it away."""
    from fxlab.npu_dumps.dump_model import DumpSet

    generic = {name: (name, name.lower(), f"sk.py:{i}") for i, name in enumerate(["MatMulV2", "Mul_1", "Cast", "Add_1", "Mul"])}
    trace = _torchair("t/graph_0", "graph_0", {"Data": ("Data", "arg0_1", "sk.py:1"), **{n: (n.split("_")[0], *v[1:]) for n, v in generic.items()}})
    ge = _ge_graph(
        "graph_1",
        [("Data", "Data"), ("MatMulV2", "MatMulV2"), ("Mul_1", "Mul"), ("Cast", "Cast"), ("Add_1", "Add"), ("Mul", "Mul"), ("Relu", "Relu"), ("Abs", "Abs")],
    )
    dumps = DumpSet(graphs=[ge])
    join(dumps, [trace])  # 6 of 8 names found: three quarters, not fewer
    assert dumps.notes == [
        "graph_1 (Build): it holds ops of types t/graph_0 has none of (Abs, Relu): the trace or TorchAir dump may be of another "
        "model or compile, and its FX nodes and source lines may be wrong"
    ]


def test_a_super_kernel_op_without_its_sub_graph_dump_casts_no_doubt_on_the_trace():
    """A SuperKernel op is GE's own: with no sub-graph dump naming its members it finds no
    original name, and that says nothing of whether the trace is of this model."""
    from fxlab.npu_dumps.dump_model import DumpOp, DumpSet

    trace = _torchair("t/graph_0", "graph_0", {"Data": ("Data", "arg0_1", "m.py:1"), "Add": ("Add", "add", "m.py:2")})
    ge = _ge_graph("graph_1", [("Data", "Data"), ("Add", "Add")])
    ge.ops += [DumpOp(f"sk_s{i}_start_a_end_b", "SuperKernel", originals=[f"sk_s{i}_start_a_end_b"]) for i in range(3)]
    dumps = DumpSet(graphs=[ge])
    join(dumps, [trace])
    assert dumps.notes == []


def test_a_renamed_op_maps_through_its_one_original(tmp_path):
    folder = made_dumps(tmp_path / "ge")
    rename_op(folder / "ge_proto_00000007_graph_1_AfterSkGraph.txt", "Add_2", "Add_2_GE")
    dumps, _ = _with_trace(folder)
    op = _phase(dumps, "AfterSkGraph").op("Add_2_GE")
    assert (op.originals, op.renamed, op.fused) == (["Add_2"], True, False)
    assert (op.torchair_ops, op.fx_nodes, op.source) == (["Add_2"], ["add"], [line(37)])


def test_a_trace_that_torchairs_own_dump_outjoins_is_said_to_be_doubtful():
    """Given with TorchAir's own dump of the model, a trace of another model joins none or
    few of the GE graphs: the dump's lines are used, and the trace is named as doubtful."""
    from fxlab.npu_dumps.dump_model import TORCHAIR_PY, DumpSet, TorchAirGraph, TorchAirOp
    from fxlab.npu_dumps.join import TRACE_FORMAT

    other = TorchAirGraph("t/graph_0", TRACE_FORMAT, "graph_0", {"Data": TorchAirOp("Data", "Data", ["arg0_1"], ["o.py:1"])})
    own = TorchAirGraph("d/dynamo_optimized_graph_1.py", TORCHAIR_PY, "graph_1", {
        "Data": TorchAirOp("Data", "Data", ["arg0_1"], ["m.py:1"]), "Relu": TorchAirOp("Relu", "Relu", ["relu"], ["m.py:2"]),
    })
    dumps = DumpSet(graphs=[_ge_graph("graph_1", [("Data", "Data"), ("Relu", "Relu")])])
    join(dumps, [other, own])
    assert dumps.notes == [
        "TorchAir's own graph dump among the files holds more of 1 of the 1 GE graphs' op names than t does: the trace may be "
        "of another model or compile (the dump's FX nodes and lines are shown)"
    ]
    same = TorchAirGraph("t/graph_0", TRACE_FORMAT, "graph_0", dict(own.ops))
    dumps = DumpSet(graphs=[_ge_graph("graph_1", [("Data", "Data"), ("Relu", "Relu")])])
    join(dumps, [same, own])  # the trace of this model holds as much: nothing to say, whichever is taken
    assert dumps.notes == []
