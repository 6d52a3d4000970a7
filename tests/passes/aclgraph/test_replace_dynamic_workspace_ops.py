from __future__ import annotations

import pytest
import torch

from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.replace_dynamic_workspace_ops import replace_dynamic_workspace_ops, workspace_ops


def test_a_graph_without_those_operators_is_left_as_it_is():
    gm = functional_graph(lambda x: (x * 2,), torch.randn(3))
    assert not replace_dynamic_workspace_ops(gm).changed and len(gm.graph.nodes) == 3


def test_fused_attention_gets_its_workspace_and_outputs_made_before_it():
    from fxlab.compat.torch_npu_ops import find_torch_npu_copy, torch_npu_definitions

    copy = find_torch_npu_copy()
    if copy is None:
        pytest.skip("no torch_npu copy (`fxlab torchair fetch` extracts one)")

    def attention(q, k, v):
        out, lse = torch.ops.npu.npu_fused_infer_attention_score(q, k, v, num_heads=4, num_key_value_heads=2)
        return (out * 2,)

    with torch_npu_definitions(copy):
        gm = functional_graph(attention, torch.randn(1, 2, 32), torch.randn(1, 6, 16), torch.randn(1, 6, 16))
        result = replace_dynamic_workspace_ops(gm)
        assert set(workspace_ops()) >= {torch.ops.npu.npu_fused_infer_attention_score.default}
        calls = [(n.name, n.target if n.target is torch.empty else str(n.target)) for n in gm.graph.nodes if n.op == "call_function"]
    assert calls[:4] == [
        ("_npu_fused_infer_attention_score_get_max_workspace_default", "npu._npu_fused_infer_attention_score_get_max_workspace.default"),
        ("empty", torch.empty),
        ("empty_1", torch.empty),
        ("npu_fused_infer_attention_score_out", "npu.npu_fused_infer_attention_score.out"),
    ]
    run = next(n for n in gm.graph.nodes if n.name == "npu_fused_infer_attention_score_out")
    assert run.kwargs["workspace"].name == calls[0][0] and [o.name for o in run.kwargs["out"]] == ["empty", "empty_1"]
    assert next(n for n in gm.graph.nodes if n.name == "empty").args == ([1, 2, 32],)
    assert result.notes == ["npu_fused_infer_attention_score: workspace and outputs made before it"]
