"""The trace's ascend_ir against GE's last phase, grouped by source line."""

from __future__ import annotations

from fxlab.capture.serialize import load_trace
from fxlab.diff.npu_diff import INSERTED_LINE, diff_ir_with_phase
from fxlab.npu_dumps.join import join, torchair_graph_from_ir
from fxlab.npu_dumps.read import read_dumps
from tests.npu_dumps.ge_dump_maker import rename_op
from tests.npu_dumps.made_dumps import GOLDEN_TRACE, line, made_dumps


def test_ascend_ir_against_the_last_phase_by_source_line(tmp_path):
    dumps = read_dumps([made_dumps(tmp_path)])
    trace = load_trace(GOLDEN_TRACE)
    join(dumps, [torchair_graph_from_ir(g.ir, "trace") for g in trace.graphs])
    last = next(g for g in dumps.graphs if g.phase == "AfterSkGraph")
    diff = diff_ir_with_phase(0, trace.graphs[0].ir, last)
    by_line = {ln.source: [(e.kind, e.torchair_ops, e.ge_op) for e in ln.entries] for ln in diff.lines}
    assert list(by_line) == ["", line(28), line(31), line(34), line(35), line(37), line(39), line(40), INSERTED_LINE]
    assert by_line[line(28)] == [
        ("same", ["Const"], "Const"),
        ("fused", ["Transpose", "MatMulV2", "Mul", "Add"], "sk_mlp_split_7_13_start_Transpose_end_trans_TransData_1"),
        ("same", ["Const_2"], "Const_2"),
        ("removed", ["Const_1"], None),
    ]
    assert by_line[line(34)] == [("same", ["Const_3"], "Const_3"), ("same", ["Mul_1"], "Mul_1"), ("same", ["Cast"], "Cast")]
    assert by_line[line(39)] == [("fused", ["Mul_3", "Cast_1", "Add_3"], "sk_norm_start_Mul_3Cast_1_end_Add_3")]
    assert by_line[INSERTED_LINE] == [("inserted", [], f"PlaceHolder{i}") for i in range(7)] + [("inserted", [], "End0")]
    assert [e for e in by_line[""] if e[0] == "removed"] == [("removed", [f"arg{i}_1"], None) for i in range(7)]
    assert (diff.count("fused"), diff.count("inserted"), diff.count("removed"), diff.identical) == (4, 8, 9, False)
    fused = next(ln for ln in diff.lines if ln.source == line(39)).entries[0]
    assert fused.detail == f"SuperKernel of Mul_3Cast_1, Add_3; also lines {line(40)}"


def test_an_op_ge_only_renamed_is_said_renamed_not_same(tmp_path):
    folder = made_dumps(tmp_path)
    rename_op(folder / "ge_proto_00000007_graph_1_AfterSkGraph.txt", "Add_2", "Add_2_GE")
    dumps = read_dumps([folder])
    trace = load_trace(GOLDEN_TRACE)
    join(dumps, [torchair_graph_from_ir(g.ir, "trace") for g in trace.graphs])
    last = next(g for g in dumps.graphs if g.phase == "AfterSkGraph")
    diff = diff_ir_with_phase(0, trace.graphs[0].ir, last)
    entries = [(e.kind, e.torchair_ops, e.ge_op, e.detail) for ln in diff.lines if ln.source == line(37) for e in ln.entries]
    assert ("renamed", ["Add_2"], "Add_2_GE", "renamed from Add_2") in entries
    assert not any(e[1] == ["Add_2"] and e[0] != "renamed" for e in entries)  # neither same nor removed
    assert diff.count("renamed") == 1 and diff.to_json()["counts"]["renamed"] == 1


def test_a_format_or_dtype_changed_without_origin_attrs_is_found_against_the_trace(tmp_path):
    dumps = read_dumps([made_dumps(tmp_path)])
    trace = load_trace(GOLDEN_TRACE)
    join(dumps, [torchair_graph_from_ir(g.ir, "trace") for g in trace.graphs])
    last = next(g for g in dumps.graphs if g.phase == "AfterSkGraph")
    (output,) = last.op("Add_2").outputs
    assert (output.layout, output.origin_layout, output.origin_dtype) == ("ND", "", "")  # as GE writes it when nothing changed
    output.layout, output.dtype = "NC1HWC0", "DT_FLOAT16"
    diff = diff_ir_with_phase(0, trace.graphs[0].ir, last)
    entries = [(e.kind, e.ge_op, e.detail) for ln in diff.lines if ln.source == line(37) for e in ln.entries]
    assert ("changed", "Add_2", "output 0 format ND -> NC1HWC0; output 0 dtype DT_FLOAT -> DT_FLOAT16") in entries
