"""torch_npu's matmul converters: the SoC-before-arch35 ops TorchAir makes."""
from __future__ import annotations

import torch

from fxlab.passes.convert_to_ascend_ir import Status
from tests.passes.converters.npu_fixtures import convert, npu_ops, op_types  # noqa: F401 - the fixture


def _int8(*shape: int) -> torch.Tensor:
    return torch.randint(-9, 9, shape, dtype=torch.int8)


def test_quant_matmul_is_quant_batch_matmul_v3_with_torchairs_dtype_number(npu_ops):
    result = convert("npu_quant_matmul", _int8(4, 16), _int8(16, 8), torch.rand(8), pertoken_scale=torch.rand(4), output_dtype=15)
    (op,) = [op for op in result.graph.ops if op.type == "QuantBatchMatmulV3"]
    assert op.attr_value("dtype") == 27 and [d.name for d in op.input_desc] == ["x1", "x2", "scale", "offset", "bias", "pertoken_scale"]


def test_quant_matmul_of_float_inputs_is_refused_before_arch35(npu_ops):
    result = convert("npu_quant_matmul", torch.randn(4, 16).half(), torch.randn(16, 8).half(), torch.rand(8), output_dtype=5)
    (record,) = [r for r in result.nodes if r.target.startswith("npu.")]
    assert record.status is Status.REFUSED and "only supports int8 or int32" in record.message


def test_weight_quant_matmul_casts_int64_quant_scales(npu_ops):
    result = convert("npu_weight_quant_batchmatmul", torch.randn(4, 16).half(), _int8(16, 8), torch.rand(8).half(),
                     None, torch.ones(8, dtype=torch.int64))
    assert op_types(result) == ["Cast", "WeightQuantBatchMatmulV2"]


def test_linear_is_matmul_of_the_transposed_weight(npu_ops):
    result = convert("npu_linear", torch.randn(4, 16).half(), torch.randn(8, 16).half())
    (op,) = [op for op in result.graph.ops if op.type == "MatMul"]
    assert (op.attr_value("transpose_x1"), op.attr_value("transpose_x2")) == (False, True) and op.inputs[2] == ""
