from __future__ import annotations

import torch

from fxlab.capture.aclgraph_compare import graph_differences, graph_signature


def test_the_same_graph_has_no_differences_and_another_target_is_shown():
    ours = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
    theirs = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
    assert graph_differences(ours, theirs) == [] and len(graph_signature(ours)) == 4
    other = torch.fx.symbolic_trace(lambda x: torch.sigmoid(x) + 1)
    diff = graph_differences(other, theirs)
    assert [line.split(" ")[:2] for line in diff] == [
        ["-call_function", "relu"], ["-call_function", "add"], ["+call_function", "sigmoid"], ["+call_function", "add"],
    ]
