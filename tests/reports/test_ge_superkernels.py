"""fxlab's predicted SuperKernel segments against the sk_* ops in GE's dump: one segment
GE cut where the core limit changes (the dump says so), the others as predicted."""

from __future__ import annotations

from fxlab.capture.serialize import load_trace
from fxlab.npu_dumps.join import join, torchair_graph_from_ir
from fxlab.npu_dumps.read import read_dumps
from fxlab.reports.ge_superkernels import compare_super_kernels
from fxlab.reports.scope_report import GraphInput, build_scope_report
from tests.npu_dumps.made_dumps import GOLDEN_TRACE, made_dumps


def test_predicted_segments_against_ge_super_kernels(tmp_path):
    dumps = read_dumps([made_dumps(tmp_path)])
    trace = load_trace(GOLDEN_TRACE)
    join(dumps, [torchair_graph_from_ir(g.ir, "trace") for g in trace.graphs])
    report = build_scope_report([GraphInput(0, None, trace.graphs[0].ir)])
    last = next(g for g in dumps.graphs if g.phase == "AfterSkGraph")
    verdicts = [v.to_json() for v in compare_super_kernels(report, 0, last, dumps.graphs)]
    assert verdicts == [
        {
            "graph": 0,
            "scope": "mlp",
            "segment": 1,
            "predicted": ["Transpose", "MatMulV2", "Mul", "Add", "Swish"],
            "super_kernels": ["sk_mlp_split_7_13_start_Transpose_end_trans_TransData_1", "sk_mlp_split_9_11_start_Swish_end_Swish"],
            "outside": [],
            "cuts": [
                "GE cut between sk_mlp_split_7_13_start_Transpose_end_trans_TransData_1 and sk_mlp_split_9_11_start_Swish_end_Swish: "
                "trans_TransData_1 has core limit (none), Swish 8|16"
            ],
            "as_predicted": False,
        },
        {
            "graph": 0,
            "scope": "mlp",
            "segment": 2,
            "predicted": ["Transpose_1", "MatMulV2_1", "Mul_2", "Add_1"],
            "super_kernels": ["sk_mlp_split_14_20_start_Transpose_1_end_trans_TransData_3"],
            "outside": [],
            "cuts": [],
            "as_predicted": True,
        },
        {
            "graph": 0,
            "scope": "norm",
            "segment": 1,
            "predicted": ["Mul_3", "Cast_1", "Add_3"],
            "super_kernels": ["sk_norm_start_Mul_3Cast_1_end_Add_3"],
            "outside": [],
            "cuts": [],
            "as_predicted": True,
        },
    ]


def test_an_op_left_out_of_every_super_kernel_says_why_when_the_dump_does(tmp_path):
    dumps = read_dumps([made_dumps(tmp_path)])
    trace = load_trace(GOLDEN_TRACE)
    join(dumps, [torchair_graph_from_ir(g.ir, "trace") for g in trace.graphs])
    last = next(g for g in dumps.graphs if g.phase == "AfterSkGraph")
    norm = last.op("sk_norm_start_Mul_3Cast_1_end_Add_3")
    norm.originals = ["Mul_3", "Cast_1"]  # as if GE had left Add_3 out in the main graph ...
    add = next(op for g in dumps.graphs for op in g.ops if op.name == "Add_3" and op.super_kernel_parent)
    add.super_kernel_parent, add.supports_super_kernel = None, 0  # ... marked as unable to join
    last.ops.append(add)
    report = build_scope_report([GraphInput(0, None, trace.graphs[0].ir)])
    norm_verdict = [v for v in compare_super_kernels(report, 0, last, dumps.graphs) if v.scope == "norm"][0]
    assert (norm_verdict.outside, norm_verdict.cuts) == (
        ["Add_3"],
        ["Add_3 is in no SuperKernel: the dump marks it supportSuperKernel=0 (a kernel that cannot join one)"],
    )


def test_a_missing_sub_graph_dump_is_said_not_taken_for_an_op_left_out(tmp_path):
    folder = made_dumps(tmp_path)
    holding_swish = next(p for p in folder.glob("*super_kernel_sub_graph*.txt") if '"Swish"' in p.read_text())
    holding_swish.unlink()
    dumps = read_dumps([folder])
    (note,) = [n for n in dumps.notes if n.startswith("no super_kernel_sub_graph dump lists the members of")]
    assert "sk_mlp_split_9_11_start_Swish_end_Swish" in note and "Copy every ge_proto_*_super_kernel_sub_graph*.txt" in note
    trace = load_trace(GOLDEN_TRACE)
    join(dumps, [torchair_graph_from_ir(g.ir, "trace") for g in trace.graphs])
    last = next(g for g in dumps.graphs if g.phase == "AfterSkGraph")
    report = build_scope_report([GraphInput(0, None, trace.graphs[0].ir)])
    cuts = [cut for v in compare_super_kernels(report, 0, last, dumps.graphs) for cut in v.cuts if cut.startswith("Swish")]
    assert cuts == ["Swish is in no SuperKernel the dumps list the members of; it may be in sk_mlp_split_9_11_start_Swish_end_Swish, whose sub-graph dump is missing"]
