"""torch_npu's MoE routing converters: the GE ops and attrs TorchAir makes, and its refusals."""
from __future__ import annotations

import torch

from fxlab.passes.convert_to_ascend_ir import Status
from tests.passes.converters.npu_fixtures import convert, npu_ops, op_types  # noqa: F401 - the fixture


def _expert_idx(rows: int, k: int, experts: int) -> torch.Tensor:
    return torch.stack([torch.randperm(experts)[:k] for _ in range(rows)]).to(torch.int32)


def test_init_routing_v2_writes_every_attr(npu_ops):
    x, experts = torch.randn(4, 8).half(), _expert_idx(4, 2, 4)
    result = convert("npu_moe_init_routing_v2", x, experts, expert_num=4, active_expert_range=[0, 4], quant_mode=1)
    (op,) = [op for op in result.graph.ops if op.type == "MoeInitRoutingV3"]
    assert op.attr_value("active_expert_range") == (0, 4) and op.attr_value("quant_mode") == 1
    assert [d.name for d in op.input_desc] == ["x", "expert_idx", "scale", "offset"] and op.inputs[2:] == ["", ""]


def test_init_routing_v2_without_an_expert_range_is_refused_as_torchair_refuses_it(npu_ops):
    result = convert("npu_moe_init_routing_v2", torch.randn(4, 8).half(), _expert_idx(4, 2, 4), expert_num=4)
    (record,) = [r for r in result.nodes if r.status is Status.REFUSED]
    assert record.message.startswith("TorchAir refuses npu.npu_moe_init_routing_v2.default with these arguments: its converter raises TypeError")
    assert "custom/npu_moe_init_routing_v2.py:85" in record.message


def test_gating_top_k_softmax_v2_is_refused_whatever_the_arguments(npu_ops):
    result = convert("npu_moe_gating_top_k_softmax_v2", torch.randn(3, 4).half(), k=2)
    (record,) = [r for r in result.nodes if r.status is Status.REFUSED]
    assert "unexpected keyword argument 'renorm'" in record.message


def test_finalize_routing_takes_the_v2_op_unless_every_input_is_given(npu_ops):
    rows, k, hidden = 4, 2, 8
    expanded, skip = torch.randn(rows * k, hidden).half(), torch.randn(rows, hidden).half()
    bias, scales = torch.randn(3, hidden).half(), torch.rand(rows, k).half()
    dst, expert = torch.randperm(rows * k).to(torch.int32), torch.randint(0, 3, (rows, k), dtype=torch.int32)
    assert op_types(convert("npu_moe_finalize_routing", expanded, skip, None, bias, scales, dst, expert)) == ["MoeFinalizeRouting"]
    v2 = convert("npu_moe_finalize_routing", expanded, None, None, None, scales, dst, expert)
    (op,) = [op for op in v2.graph.ops if op.type == "MoeFinalizeRoutingV2"]
    assert [d.name for d in op.input_desc] == ["expanded_x", "expanded_row_idx", "x1", "x2", "bias", "scales", "expert_idx"]
    assert (op.attr_value("drop_pad_mode"), op.attr_value("k")) == (0, 1)


def test_gating_top_k_writes_hash_inputs_only_when_given(npu_ops):
    result = convert("npu_moe_gating_top_k", torch.randn(3, 6).half(), 2)
    (op,) = [op for op in result.graph.ops if op.type == "MoeGatingTopK"]
    assert [d.name for d in op.input_desc] == ["x", "bias"] and [d.name for d in op.output_desc] == ["y", "expert_idx", "out"]
