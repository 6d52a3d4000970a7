"""torch_npu's block and MX quantisation converters."""
from __future__ import annotations

import torch

from fxlab.passes.convert_to_ascend_ir import Status
from tests.passes.converters.npu_fixtures import convert, npu_ops, op_types  # noqa: F401 - the fixture


def test_block_quant_to_int8_is_refused_as_torchairs_own_dtype_table_refuses_it(npu_ops):
    result = convert("npu_dynamic_block_quant", torch.randn(4, 128).half())
    (record,) = [r for r in result.nodes if r.target.startswith("npu.")]
    assert record.status is Status.REFUSED and "Unsupported dst_type" in record.message


def test_block_quant_to_float8_offsets_the_npu_code(npu_ops):
    op = next(op for op in convert("npu_dynamic_block_quant", torch.randn(4, 128).half(), dst_type=291).graph.ops if op.type == "DynamicBlockQuant")
    assert op.attr_value("dst_type") == 35 and op.attr_value("col_block_size") == 128


def test_dual_axis_packs_both_results(npu_ops):
    types = op_types(convert("npu_dynamic_mx_quant_with_dual_axis", torch.randn(64, 64).half()))
    assert types.count("Bitcast") == 2 and types.count("Div") == 2 and types[0] == "DynamicMxQuantWithDualAxis"
