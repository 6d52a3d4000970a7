"""The CPU reference math of torch_npu's quantised matmuls against float math."""

from __future__ import annotations

import torch

from fxlab.ir.kernels import npu_matmul_reference as ref
from fxlab.ir.kernels.npu_quant_reference import dynamic_quant


def test_dynamic_quant_then_quant_matmul_dequantises_per_token_and_channel():
    x = torch.randn(3, 16)
    q, scale = dynamic_quant(x)
    assert q.dtype == torch.int8 and q.abs().max() == 127
    torch.testing.assert_close(q.float() * scale.unsqueeze(-1), x, atol=scale.max().item(), rtol=0)
    w = torch.randint(-5, 5, (16, 4), dtype=torch.int8)
    out = ref.quant_matmul(q, w, torch.full((4,), 0.5), pertoken_scale=scale, output_dtype=6)
    torch.testing.assert_close(out, (q.float() @ w.float()) * 0.5 * scale.unsqueeze(-1))


def test_quant_matmul_without_output_dtype_requantises_to_int8():
    x1, x2 = torch.randint(-4, 4, (2, 8), dtype=torch.int8), torch.randint(-4, 4, (8, 3), dtype=torch.int8)
    out = ref.quant_matmul(x1, x2, torch.full((3,), 0.25), offset=torch.full((3,), 2.0))
    want = ((x1.double() @ x2.double()) * 0.25 + 2.0).clamp(-128, 127)
    assert out.dtype == torch.int8
    torch.testing.assert_close(out.double(), torch.where(want >= 0, torch.floor(want + 0.5), torch.ceil(want - 0.5)))
