"""torch_npu's normalisation converters: TorchAir's ops, outputs and defaults."""
from __future__ import annotations

import torch

from fxlab.passes.torchair_refusals import wrong_result
from tests.passes.converters.npu_fixtures import convert, npu_ops, op_types  # noqa: F401 - the fixture


def test_add_rms_norm_v2_moves_both_inputs_and_returns_rstd_first(npu_ops):
    result = convert("npu_add_rms_norm_v2_functional", torch.randn(2, 8).half(), torch.randn(2, 8).half(), torch.randn(8).half())
    assert op_types(result) == ["TensorMove", "TensorMove", "AddRmsNorm"]
    assert result.graph.outputs == ["AddRmsNorm:1", "AddRmsNorm:0", "AddRmsNorm:2"]


def test_dynamic_quant_outputs_not_asked_for_are_empty_consts(npu_ops):
    x = torch.randn(2, 16).half()
    result = convert("npu_add_rms_norm_dynamic_quant", x, x, torch.randn(16).half())
    op = next(op for op in result.graph.ops if op.type == "AddRmsNormDynamicQuant")
    assert op.attr_value("dst_type") == 2 and "output_mask" not in dict(op.attrs)
    # y2 and scale2 need both smoothings: the graph returns empty constants for them
    assert op_types(result) == ["AddRmsNormDynamicQuant", "Const", "Const"]


def test_group_norm_silu_defaults_eps_as_torchair_does_and_says_so(npu_ops):
    result = convert("npu_group_norm_silu", torch.randn(2, 8, 3), None, None, 4)
    op = next(op for op in result.graph.ops if op.type == "GroupNormSilu")
    assert abs(op.attr_value("eps") - 1e-4) < 1e-9 and op.inputs[1:] == ["", ""]
    leaves_eps_out = result.fx_graph.graph.find_nodes(op="call_function", target=torch.ops.npu.npu_group_norm_silu.default)[0]
    assert "defaults eps to 1e-4" in wrong_result(leaves_eps_out)
    passes_eps = convert("npu_group_norm_silu", torch.randn(2, 8, 3), None, None, 4, 1e-5).fx_graph
    assert wrong_result(passes_eps.graph.find_nodes(op="call_function", target=torch.ops.npu.npu_group_norm_silu.default)[0]) is None


def test_gather_stats_casts_the_counts_and_tags_nchw(npu_ops):
    sums = torch.randn(2, 4)
    result = convert("batch_norm_gather_stats_update", torch.randn(2, 4, 3, 3), sums, sums.abs(), torch.zeros(4), torch.ones(4), 0.1, 1e-5, torch.ones(2))
    assert op_types(result) == ["Cast", "SyncBatchNormGatherStats"]
    op = result.graph.ops[-2]
    assert dict(op.attrs)["output_layout_info"].value == ((0, "NCHW"), (1, "NCHW"), (2, "NCHW"), (3, "NCHW"))


def test_add_rms_norm_quant_is_refused_as_torchair_has_no_converter_for_it(npu_ops):
    x = torch.randn(2, 16).half()
    result = convert("npu_add_rms_norm_quant", x, x, torch.randn(16).half(), torch.rand(16).half(), torch.zeros(16, dtype=torch.int8))
    (record,) = [r for r in result.nodes if r.target.startswith("npu.")]
    assert record.message.startswith("TorchAir has no converter for npu.npu_add_rms_norm_quant.default") and "NpuAddRmsNormQuant" in record.message
