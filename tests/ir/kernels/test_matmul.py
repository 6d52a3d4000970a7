"""Matrix-product reference kernels: a bias joins the product before it is rounded."""

from __future__ import annotations

import torch

import fxlab
from fxlab.ir.kernels import matmul  # noqa: F401 - registers the kernels
from fxlab.ir.kernels.registry import KERNELS
from fxlab.ir.model import IrOp


def test_a_float16_linear_with_bias_rounds_once_as_eager_does():
    torch.manual_seed(0)
    linear = torch.nn.Linear(16, 16).half()
    x = torch.randn(2, 16, dtype=torch.float16)
    (out,) = KERNELS["MatMulV2"](IrOp("MatMulV2", "MatMulV2"), [x, linear.weight.detach(), linear.bias.detach()], {"transpose_x2": True})
    assert torch.equal(out, linear(x).detach())  # the product rounded, then the bias added and rounded, differs by an ulp


def test_a_float16_linear_model_traces_with_its_ascend_ir_matching_the_compiled_run():
    torch.manual_seed(0)
    trace = fxlab.trace(torch.nn.Linear(16, 16).eval().half(), (torch.randn(2, 16, dtype=torch.float16),))
    assert trace.ir_check.ok and trace.ir_check.max_abs_diff == 0 and trace.status == "ok"
