"""The one-line account of what GE did with an op."""

from __future__ import annotations

from fxlab.npu_dumps.dump_model import DumpOp, OutputInfo
from fxlab.viz.npu_dump_views import what_ge_did


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
    many = DumpOp("sk_x_start_a_end_h", "SuperKernel", originals=list("abcdefgh"), super_kernel_members=list("abcdefgh"))
    assert what_ge_did(many) == "SuperKernel of a, b, c, d, e, f (+2)"
