from __future__ import annotations

import torch

from fxlab.capture.checks.torchair_reference import graph_differences, graph_signature


def test_the_same_graph_has_no_differences_and_another_target_is_shown():
    ours = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
    theirs = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
    assert graph_differences(ours, theirs) == [] and len(graph_signature(ours)) == 4
    other = torch.fx.symbolic_trace(lambda x: torch.sigmoid(x) + 1)
    diff = graph_differences(other, theirs)
    assert [line.split(" ")[:2] for line in diff] == [
        ["-call_function", "relu"], ["-call_function", "add"], ["+call_function", "sigmoid"], ["+call_function", "add"],
    ]


def test_capture_calls_are_compared_in_order_whatever_the_layout_and_the_hosts_device_reads_as_the_npu() -> None:
    from fxlab.capture.checks.torchair_reference import capture_calls, capture_differences

    theirs = "def main():\n    arg0_1 = rand_strided((2,),(1,),device ='cpu',dtype =torch.float32)\n\n\n    return kernel(arg0_1)\n"
    ours = "def main():\n    arg0_1 = rand_strided((2,), (1,), device='npu:0', dtype=torch.float32)\n    return kernel(arg0_1)\n"
    assert capture_calls(theirs) == [
        "rand_strided((2,), (1,), device='npu:0', dtype=torch.float32)",
        "kernel(arg0_1)",
    ]
    assert capture_differences(ours, theirs) == []
    swapped = "def main():\n    kernel(arg0_1)\n    arg0_1 = rand_strided((2,), (1,), device='npu:0', dtype=torch.float32)\n"
    assert capture_differences(swapped, theirs) == ["+kernel(arg0_1)", "-kernel(arg0_1)"]  # fxlab's kernel call comes first
