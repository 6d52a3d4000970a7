"""The phases of one graph in order, and what each fused, renamed, inserted and removed."""

from __future__ import annotations

import pytest

from fxlab.npu_dumps.phases import dump_set_json, phase_chains, phase_steps
from fxlab.npu_dumps.read import read_dumps
from tests.npu_dumps.ge_dump_maker import rename_op
from tests.npu_dumps.made_dumps import made_dumps

LAST = "ge_proto_00000007_graph_1_AfterSkGraph.txt"
SUPER_KERNELS = [
    "sk_mlp_split_7_13_start_Transpose_end_trans_TransData_1",
    "sk_mlp_split_9_11_start_Swish_end_Swish",
    "sk_mlp_split_14_20_start_Transpose_1_end_trans_TransData_3",
    "sk_norm_start_Mul_3Cast_1_end_Add_3",
]


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    return read_dumps([made_dumps(tmp_path_factory.mktemp("ge"))])


def test_phases_are_chained_by_graph_id_in_index_order(dumps):
    chains = phase_chains(dumps.graphs)
    assert list(chains) == [("graph 1", "ge_proto")]
    assert [g.phase for g in chains[("graph 1", "ge_proto")]] == [
        "PreRunBegin",
        "PreRunAfterOptimizeOriginalGraph",
        "PreRunAfterOptimizeSubgraph",
        "AfterSkGraph",
    ]


def test_each_phase_says_what_it_fused_inserted_and_removed(dumps):
    steps = [s.to_json() for s in phase_steps(dumps.graphs)]
    assert steps[0] == {
        "graph": "graph 1",
        "format": "ge_proto",
        "from": None,
        "to": "PreRunBegin",
        "fused": [],
        "renamed": [],
        "inserted": [],
        "removed": [],
    }
    assert steps[1]["fused"] == [
        {"op": "MatMulV2", "originals": ["MatMulV2", "Mul", "Add"]},
        {"op": "MatMulV2_1", "originals": ["MatMulV2_1", "Mul_2", "Add_1"]},
    ]
    assert (steps[1]["inserted"], steps[1]["removed"]) == ([], ["Const_1", "Const_5"])
    assert steps[2]["inserted"] == [f"PlaceHolder{i}" for i in range(7)] + [
        "trans_Cast_0",
        "trans_TransData_1",
        "trans_Cast_2",
        "trans_TransData_3",
        "End0",
    ]
    assert steps[2]["removed"] == [f"arg{i}_1" for i in range(7)]
    assert [f["op"] for f in steps[3]["fused"]] == SUPER_KERNELS  # a SuperKernel of one op (Swish) too
    assert steps[3]["removed"] == []  # the trans ops and the UB pair moved into SuperKernels
    assert [s["renamed"] for s in steps] == [[], [], [], []]


def test_an_op_ge_only_renamed_is_renamed_not_fused(tmp_path):
    """One TorchAir op became one GE op under another name: not a fusion."""
    folder = made_dumps(tmp_path / "ge")
    rename_op(folder / LAST, "Add_2", "Add_2_GE")
    steps = [s.to_json() for s in phase_steps(read_dumps([folder]).graphs)]
    assert [f["op"] for f in steps[3]["fused"]] == SUPER_KERNELS
    assert steps[3]["renamed"] == [{"op": "Add_2_GE", "original": "Add_2"}]
    assert (steps[3]["inserted"], steps[3]["removed"]) == ([], [])  # Add_2 lives on as Add_2_GE


def test_json_shape_for_scripts(dumps):
    data = dump_set_json(dumps)
    assert set(data) == {"graphs", "phases", "fusion_results", "torchair_graphs", "notes"}
    graph = data["graphs"][0]
    assert {"file", "format", "graph", "phase", "ops"} <= set(graph)
    assert (graph["graph"], graph["phase"]) == (1, "PreRunBegin")
    for graph in data["graphs"]:
        for op in graph["ops"]:
            assert {"name", "type", "originals", "original_types", "passes", "fusion_scope", "inserted"} <= set(op)
            assert op["inserted"] == (op["originals"] == [])
