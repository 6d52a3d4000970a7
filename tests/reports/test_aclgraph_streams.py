from __future__ import annotations

import torch

from fxlab.reports.aclgraph_streams import graph_streams
from fxlab.socs import SocInfo, soc_by_name
from tests.conftest import EXAMPLES
from tests.sessions import capture_of


def _graphs(name: str):
    return capture_of(EXAMPLES / f"{name}.py", stages=("functional", "aclgraph"), mode="reduce-overhead", verify=False).graphs[0]


def test_two_limited_streams_asking_for_more_cores_than_the_soc_has_are_warned_about():
    graph = _graphs("multi_stream")
    found = graph_streams(0, graph.modules["functional"], graph.modules["aclgraph"], soc_by_name("Ascend910B2"))
    assert found.streams == {"default": 4, "side": 2} and found.limits == {"default": ["16|32", "no limit"], "side": ["16|32"]}
    assert [(c.stream, c.limit) for c in found.calls] == [("default", "16|32"), ("side", "16|32"), ("side", "restore"), ("default", "restore")]
    assert [(e.kind, e.stream) for e in found.events] == [
        ("tagged_event_record", "default"), ("tagged_event_wait", "side"), ("tagged_event_record", "side"), ("tagged_event_wait", "default")
    ]
    (warning,) = found.warnings
    assert warning.startswith("[stream-cores] mm on the default stream (limit 16|32) and mm_1 on the side stream (limit 16|32) may run at once")
    assert "(16 + 16 AI cores > 24; 32 + 32 vector cores > 48)" in warning
    # A SoC with room for both: no warning.
    assert graph_streams(0, graph.modules["functional"], graph.modules["aclgraph"], SocInfo("Big", 40, 80)).warnings == []


def test_a_wait_orders_the_side_stream_after_the_tensors_it_names():
    class Ordered(torch.nn.Module):
        def forward(self, x):
            import fxlab.scope as scope

            a = x * 2
            with scope.limit_core_num(16, 32):
                with scope.npu_stream_switch("side", 0):
                    torch.ops.air.wait([a])
                    b = a + 1
                c = x - 1
            return b, c

    captured = capture_of(Ordered(), (torch.randn(3),), stages=("functional", "aclgraph"), mode="reduce-overhead", verify=False)
    graph = captured.graphs[0]
    found = graph_streams(0, graph.modules["functional"], graph.modules["aclgraph"], soc_by_name("Ascend910B2"))
    # add waits for mul; sub (default, 16|32) and add (side, 16|32) may still run at once.
    assert len(found.warnings) == 1 and "add on the side stream" in found.warnings[0] and "sub on the default stream" in found.warnings[0]
    assert not any("mul" in n for n in found.notes)


def test_npugraph_ex_passes_torchairs_scope_markers_by_and_says_so():
    # npugraph_ex acts on its own npugraph_ex::scope_enter markers: torchair.scope's streams
    # and core limits are not its (its passes leave them; the report must too).
    graph = capture_of(EXAMPLES / "multi_stream.py", stages=("functional", "aclgraph"), mode="npugraph_ex", verify=False).graphs[0]
    found = graph_streams(0, graph.modules["functional"], graph.modules["aclgraph"], soc_by_name("Ascend910B2"), "npugraph_ex")
    assert list(found.streams) == ["default"] and found.limits == {"default": ["no limit"]}
    assert found.calls == [] and found.warnings == []
    (note,) = found.notes
    assert note.startswith("the air::scope_enter marker(s) at ") and "multi_stream.py:" in note
    assert note.endswith("do nothing on this path: its backend acts on its own npugraph_ex::scope_enter markers "
                         "(torch_npu.dynamo.npugraph_ex.scope), so their streams and core limits are not applied")
