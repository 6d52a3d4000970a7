"""Element-wise reference kernels: the input typing of GE's prototypes."""

from __future__ import annotations

import pytest
import torch

from fxlab.ir.kernels.registry import KERNELS
from fxlab.ir.kernels import elementwise  # noqa: F401 - registers the kernels
from fxlab.ir.model import IrOp


@pytest.mark.parametrize("op_type, fn", [("Mul", torch.mul), ("Pow", torch.pow)])
def test_mul_and_pow_compute_in_the_promoted_type_of_their_two_input_types(op_type, fn):
    op = IrOp(op_type, op_type)
    x = torch.tensor([1.5, -2.0, 3.0])
    (out,) = KERNELS[op_type](op, [x, torch.tensor(2, dtype=torch.int64)], {})
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, fn(x, 2.0))
    # by type alone, unlike torch's scalar rule: int32 x a 0-d int64 is int64
    (out,) = KERNELS[op_type](op, [torch.tensor([3], dtype=torch.int32), torch.tensor(2, dtype=torch.int64)], {})
    assert out.dtype == torch.int64 and out.tolist() == [int(fn(torch.tensor(3), 2))]


def test_single_type_ops_still_refuse_two_input_types():
    with pytest.raises(TypeError, match="a Cast is missing"):
        KERNELS["Add"](IrOp("Add", "Add"), [torch.ones(2), torch.ones(2, dtype=torch.int64)], {})


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_swish_of_half_precision_rounds_once_as_one_kernel(dtype):
    # x * sigmoid(x) in half precision rounds twice: it differs from SiLU by an ulp on a
    # fifth of these values. One kernel computes in float32 and rounds once, as torch's
    # silu does (the two float32 formulas may still round a value or two apart).
    x = torch.linspace(-6, 6, 4097).to(dtype)
    (out,) = KERNELS["Swish"](IrOp("Swish", "Swish"), [x], {"scale": 1.0})
    assert out.dtype == dtype
    assert (out != torch.nn.functional.silu(x)).sum() <= 2
