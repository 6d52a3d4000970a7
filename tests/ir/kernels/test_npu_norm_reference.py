"""The CPU reference math of torch_npu's normalisation operators, against torch's own ops."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from fxlab.ir.kernels import npu_norm_reference as ref


def test_rms_norm_and_add_rms_norm():
    x, x2, gamma = torch.randn(2, 3, 8), torch.randn(2, 3, 8), torch.randn(8)
    y, rstd = ref.rms_norm(x, gamma, 1e-5)
    torch.testing.assert_close(rstd, 1 / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5))
    torch.testing.assert_close(y, F.rms_norm(x, (8,), gamma, 1e-5))
    y2, _, total = ref.add_rms_norm(x, x2, gamma)
    torch.testing.assert_close(total, x + x2)
    torch.testing.assert_close(y2, F.rms_norm(x + x2, (8,), gamma, 1e-6))
    rstd_v2, y_v2, total_v2 = ref.add_rms_norm_v2_functional(x, x2, gamma)
    torch.testing.assert_close((y_v2, total_v2), (y2, total))
    y1, y_cast, _, _ = ref.add_rms_norm_cast(x.half(), x2.half(), gamma.half())
    assert y1.dtype == torch.float32 and y_cast.dtype == torch.float16


def test_rms_norm_backward_is_autograd_of_the_forward():
    x, gamma, dy = torch.randn(2, 4, 16, requires_grad=True), torch.randn(16, requires_grad=True), torch.randn(2, 4, 16)
    F.rms_norm(x, (16,), gamma, 1e-6).backward(dy)
    rstd = torch.rsqrt(x.detach().pow(2).mean(-1, keepdim=True) + 1e-6)
    dx, dgamma = ref.rms_norm_backward(dy, x.detach(), gamma.detach(), rstd)
    torch.testing.assert_close((dx, dgamma), (x.grad, gamma.grad))
    # given without the kept dim, as the quantised backward takes it
    quantised, dgamma_q = ref.rms_norm_backward_quant(dy, x.detach(), rstd.squeeze(-1), gamma.detach(), torch.tensor([0.01]))
    torch.testing.assert_close(quantised, torch.round(x.grad / 0.01).clamp(-128, 127).to(torch.int8), atol=1, rtol=0)
    torch.testing.assert_close(dgamma_q, gamma.grad)


def test_add_rms_norm_dynamic_quant_quantises_each_row_after_smoothing():
    x1, x2, gamma, smooth = torch.randn(3, 16), torch.randn(3, 16), torch.randn(16), torch.rand(16) + 0.5
    y1, y2, total, scale1, scale2 = ref.add_rms_norm_dynamic_quant(x1, x2, gamma, smooth_scale1=smooth)
    normed = F.rms_norm(x1 + x2, (16,), gamma, 1e-6) * smooth
    torch.testing.assert_close(scale1, normed.abs().amax(-1) / 127)
    torch.testing.assert_close(y1, torch.round(normed / scale1.unsqueeze(-1)).to(torch.int8))
    assert y2.numel() == 0 and scale2.numel() == 0  # y2 needs both smoothings
    torch.testing.assert_close(total, x1 + x2)


def test_group_norm_silu_is_silu_of_group_norm():
    x, w, b = torch.randn(2, 8, 3, 3), torch.randn(8), torch.randn(8)
    y, mean, rstd = ref.group_norm_silu(x, w, b, 4, 1e-5)
    torch.testing.assert_close(y, F.silu(F.group_norm(x, 4, w, b, 1e-5)))
    torch.testing.assert_close(mean, x.reshape(2, 4, -1).mean(-1))
    torch.testing.assert_close(rstd, torch.rsqrt(x.reshape(2, 4, -1).var(-1, unbiased=False) + 1e-5))


def test_gathered_statistics_from_per_device_sums():
    a, b = torch.randn(5, 3), torch.randn(7, 3)
    sums = torch.stack([a.sum(0), b.sum(0)])
    squares = torch.stack([a.pow(2).sum(0), b.pow(2).sum(0)])
    mean, invstd = ref.gathered_statistics(sums, squares, torch.tensor([5.0, 7.0]), 1e-5)
    both = torch.cat([a, b])
    torch.testing.assert_close(mean, both.mean(0))
    torch.testing.assert_close(invstd, torch.rsqrt(both.var(0, unbiased=False) + 1e-5))
