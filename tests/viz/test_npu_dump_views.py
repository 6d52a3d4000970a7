"""The one-line account of what GE did with an op, and the table of a phase's ops."""

from __future__ import annotations

import io

from rich.console import Console

from fxlab.npu_dumps.dump_model import DumpGraph, DumpOp, OutputInfo
from fxlab.viz.npu_dump_views import ops_table, what_ge_did


def test_what_ge_did_says_fusion_scope_stream_cores_and_changes():
    op = DumpOp(
        "conv1",
        "Conv2D",
        originals=["scale_conv1", "conv1", "bn_conv1"],
        passes=["ConvBatchnormFusionPass"],
        fusion_scope=1,
        stream_label="s1",
        aicore_num="8",
        vectorcore_num="16",
        outputs=[OutputInfo(0, "DT_FLOAT16", "NC1HWC0", "DT_FLOAT", "NCHW")],
    )
    assert what_ge_did(op) == (
        "fused from scale_conv1, conv1, bn_conv1; by ConvBatchnormFusionPass; UB fusion scope 1; stream s1; cores 8|16; "
        "output 0 format NCHW -> NC1HWC0; output 0 dtype DT_FLOAT -> DT_FLOAT16"
    )
    assert what_ge_did(DumpOp("trans_Cast_0", "Cast", inserted=True)) == "inserted by GE"
    assert what_ge_did(DumpOp("Add", "Add", originals=["Add"])) == ""
    assert what_ge_did(DumpOp("Mul", "Muls", originals=["Mul"], original_types=["Mul"])) == "type Mul -> Muls"
    assert what_ge_did(DumpOp("Mul_GE", "Muls", originals=["Mul"], original_types=["Mul"])) == "renamed from Mul; type Mul -> Muls"
    many = DumpOp("sk_x_start_a_end_h", "SuperKernel", originals=list("abcdefgh"), super_kernel_members=list("abcdefgh"))
    assert what_ge_did(many) == "SuperKernel of a, b, c, d, e, f (+2)"


def _render(renderable) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_a_phase_ge_left_alone_is_said_in_words_not_an_empty_table():
    graph = DumpGraph("ge_proto_00001_Build.txt", "ge_proto", 0, "Build", "g[bold]0", ops=[DumpOp("Add", "Add", originals=["Add"]), DumpOp("Mul", "Mul", originals=["Mul"])])
    assert _render(ops_table(graph)).strip() == "Build · g[bold]0: GE fused, renamed, inserted and changed none of its 2 ops (--all-ops lists them)."
    empty = DumpGraph("ge_proto_00000002_Build.txt", "ge_proto", 0, "Build", "g0")
    assert _render(ops_table(empty)).strip() == "Build · g0: the dump holds no op (an empty graph, or a dump cut short)."
    listed = _render(ops_table(graph, every_op=True))
    assert "GE op" in listed and "Add" in listed and "Mul" in listed


def test_a_line_break_in_a_dumped_name_is_shown_and_starts_no_line_of_its_own():
    hostile = "Relu\nFAKE LINE"
    graph = DumpGraph("ge_proto_00001_Build.txt", "ge_proto", 0, "Build", "g\n0", ops=[DumpOp(hostile, "Relu", originals=["Relu"])])
    shown = _render(ops_table(graph, every_op=True))
    assert "Relu\\nFAKE" in shown
    assert not any(line.lstrip("│ ").startswith("FAKE") for line in shown.splitlines()), shown
