"""The CPU reference math of torch_npu's activation operators against torch's own."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from fxlab.ir.kernels import npu_activation_reference as ref


def test_swiglu_and_its_backward():
    x = torch.randn(4, 6, requires_grad=True)
    y = ref.swiglu(x, 0)
    torch.testing.assert_close(y, F.silu(x[:2]) * x[2:])
    grad = torch.randn(2, 6)
    (F.silu(x[:2]) * x[2:]).backward(grad)
    torch.testing.assert_close(ref.swiglu_backward(grad, x.detach(), 0), x.grad)


def test_fast_gelu_is_x_sigmoid_1702x_and_its_backward():
    x = torch.randn(10, requires_grad=True)
    y = x * torch.sigmoid(1.702 * x)
    torch.testing.assert_close(ref.fast_gelu(x.detach()), y.detach())
    y.sum().backward()
    torch.testing.assert_close(ref.fast_gelu_backward(torch.ones(10), x.detach()), x.grad)


def test_geglu_activates_the_right_half_unless_left_is_asked():
    x = torch.randn(3, 8)
    y, gelu = ref.geglu(x, -1, 0)
    torch.testing.assert_close(y, x[:, :4] * F.gelu(x[:, 4:]))
    torch.testing.assert_close(gelu, F.gelu(x[:, 4:]))
    left, _ = ref.geglu(x, -1, 1, True)
    torch.testing.assert_close(left, F.gelu(x[:, :4], approximate="tanh") * x[:, 4:])


def test_clipped_swiglu_clamps_gate_and_linear():
    x = torch.tensor([[10.0, -10.0, 0.5, 2.0]])
    y = ref.clipped_swiglu(x, limit=7.0, alpha=1.702, bias=1.0)
    gate = torch.tensor([7.0, 0.5])
    linear = torch.tensor([-7.0, 2.0])
    torch.testing.assert_close(y[0], gate * torch.sigmoid(1.702 * gate) * (linear + 1.0))


def test_dequant_swiglu_quant_dynamic():
    x = torch.randint(-100, 100, (2, 8), dtype=torch.int32)
    weight_scale, activation_scale = torch.full((8,), 0.1), torch.tensor([1.0, 2.0])
    y, scale = ref.dequant_swiglu_quant(x, weight_scale=weight_scale, activation_scale=activation_scale, activate_left=True, quant_mode=1)
    values = x.float() * 0.1 * activation_scale.unsqueeze(-1)
    gated = F.silu(values[:, :4]) * values[:, 4:]
    torch.testing.assert_close(scale, gated.abs().amax(-1) / 127)
    torch.testing.assert_close(y, torch.round(gated / scale.unsqueeze(-1)).to(torch.int8))
