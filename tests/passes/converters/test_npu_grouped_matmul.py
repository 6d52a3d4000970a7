"""torch_npu's grouped matmul converters: TorchAir's stand-ins for absent lists, output
counts and the arch35-only refusals."""
from __future__ import annotations

import torch

from fxlab.passes.convert_to_ascend_ir import Status
from tests.passes.converters.npu_fixtures import convert, npu_ops  # noqa: F401 - the fixture


def test_absent_lists_are_empty_fills_of_the_mode_types(npu_ops):
    result = convert("npu_grouped_matmul", [torch.randn(6, 8).bfloat16()], [torch.randn(3, 8, 4).bfloat16()],
                     group_list=torch.tensor([2, 3, 6]), split_item=3, group_type=0)
    gmm = next(op for op in result.graph.ops if op.type == "GroupedMatmul")
    ops = {op.name: op for op in result.graph.ops}
    fills = [ops[ref.split(":")[0]] for ref in gmm.inputs[2:7]]
    casts = [ops[fill.inputs[1].split(":")[0]] for fill in fills]
    # bias float (bf16 activations), scale uint64, offset float, antiquant float16
    assert [cast.attr_value("dst_type") for cast in casts] == [0, 10, 0, 1, 1]
    assert (gmm.attr_value("dtype"), gmm.attr_value("tuning_config")) == (-1, (0,)) and len(gmm.output_desc) == 1


def test_a8w8_output_types_and_refusals(npu_ops):
    x, w = torch.randint(-9, 9, (6, 8), dtype=torch.int8), torch.randint(-9, 9, (3, 8, 4), dtype=torch.int8)
    scales = {"scale": [torch.rand(3, 4).bfloat16()], "per_token_scale": [torch.rand(6)], "group_list": torch.tensor([2, 3, 6])}
    result = convert("npu_grouped_matmul", [x], [w], output_dtype=15, split_item=2, group_type=0, **scales)
    assert next(op for op in result.graph.ops if op.type == "GroupedMatmul").attr_value("dtype") == 1
    refused = convert("npu_grouped_matmul", [x], [w], output_dtype=6, split_item=2, group_type=0, **scales)
    (record,) = [r for r in refused.nodes if r.target.startswith("npu.")]
    assert record.status is Status.REFUSED and "does not support float32 in versions prior to A5" in record.message


def test_add_quant_gmm_is_refused_before_arch35(npu_ops):
    result = convert("npu_add_quant_gmm", torch.zeros(2, 8, 4), torch.randint(-9, 9, (16, 8), dtype=torch.int8),
                     torch.randint(-9, 9, (16, 4), dtype=torch.int8), torch.rand(2, 4), torch.tensor([8, 16]))
    (record,) = [r for r in result.nodes if r.target.startswith("npu.")]
    assert record.status is Status.REFUSED and "only supports Ascend950 chips" in record.message
