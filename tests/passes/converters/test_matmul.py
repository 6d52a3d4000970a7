"""Matrix-product converters: a Linear is Transpose (from ``t``) + MatMulV2 + Mul + Add,
as TorchAir emits it; mm is MatMul; bmm BatchMatMul."""
from __future__ import annotations

import torch

from fxlab.ir.model import DataType
from tests.passes.converters.test_shape import body_types, const_values, convert


def test_linear_is_transpose_matmulv2_mul_add() -> None:
    linear = torch.nn.Linear(4, 3)
    weight, bias = linear.weight.detach(), linear.bias.detach()
    graph = convert(lambda x, w, b: torch.nn.functional.linear(x, w, b), torch.randn(2, 4), weight, bias)
    assert body_types(graph) == ["Const", "Transpose", "Const", "Const", "MatMulV2", "Mul", "Add"]
    assert const_values(graph) == ["[1, 0]", "1", "1"]
    matmul = graph.ops_of_type("MatMulV2")[0]
    assert [d.name for d in matmul.input_desc] == ["x1", "x2", "bias", "offset_w"]
    assert matmul.inputs[2:] == ["", ""]  # bias and offset_w not fed
    assert {k: v.value for k, v in matmul.attrs.items()} == {"transpose_x1": False, "transpose_x2": False, "offset_x": 0}


def test_addmm_with_beta_uses_axpy_and_half_row_bias_goes_into_matmul() -> None:
    a, b, bias = torch.randn(3, 4), torch.randn(4, 5), torch.randn(5)
    graph = convert(lambda s, x, y: torch.addmm(s, x, y, beta=0.5, alpha=2.0), bias, a, b)
    assert body_types(graph)[-3:] == ["MatMulV2", "Mul", "AxpyV2"]
    # small integers keep float16 products exact, so eager and the executor agree bit for bit
    a, b, bias = (torch.randint(-3, 4, shape).half() for shape in ((3, 4), (4, 5), (5,)))
    graph = convert(lambda s, x, y: torch.addmm(s, x, y), bias, a, b)
    assert body_types(graph) == ["Const", "Const", "MatMulV2"]
    assert graph.ops_of_type("MatMulV2")[0].inputs[2] == "arg0_1:0"


def test_mm_bmm_and_batched_matmul() -> None:
    graph = convert(lambda x, y: x @ y, torch.randn(3, 4), torch.randn(4, 5))
    assert body_types(graph) == ["MatMul"]
    graph = convert(lambda x, y: x @ y, torch.randn(2, 3, 4), torch.randn(2, 4, 5))
    assert body_types(graph).count("BatchMatMul") == 1
    graph = convert(lambda s, x, y: torch.baddbmm(s, x, y), torch.randn(2, 3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5))
    assert body_types(graph) == ["BatchMatMul", "Const", "Mul", "Const", "Mul", "Cast", "Cast", "Add"]
    # alpha and beta typed as TorchAir's op wrapper types them: the int default is an
    # int64 Const, which GE's Mul (T1 x T2 -> T3) promotes; the result still equals eager.
    assert [op.output_desc[0].dtype for op in graph.ops_of_type("Const")] == [DataType.DT_INT64, DataType.DT_INT64]
    graph = convert(lambda s, x, y: torch.baddbmm(s, x, y, beta=0.5, alpha=2.0), torch.randn(2, 3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5))
    assert [op.output_desc[0].dtype for op in graph.ops_of_type("Const")] == [DataType.DT_FLOAT, DataType.DT_FLOAT]
