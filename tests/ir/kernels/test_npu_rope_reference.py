"""The rotary embedding math of torch_npu's operators, against the formulas of its docs."""

from __future__ import annotations

import torch

from fxlab.ir.kernels import npu_rope_reference as ref


def test_rotary_half_and_interleave():
    q, k, cos, sin = torch.randn(1, 3, 2, 4), torch.randn(1, 3, 2, 4), torch.randn(1, 3, 1, 4), torch.randn(1, 3, 1, 4)
    rq, rk = ref.apply_rotary_pos_emb(q, k, cos, sin, "BSND")
    half = torch.cat([-q[..., 2:], q[..., :2]], dim=-1)
    torch.testing.assert_close(rq, q * cos + half * sin)
    iq, _ = ref.apply_rotary_pos_emb(q, k, cos, sin, "BSND", "interleave")
    pairs = torch.stack([-q[..., 1::2], q[..., 0::2]], dim=-1).flatten(-2)
    torch.testing.assert_close(iq, q * cos + pairs * sin)


def test_rotary_mul_with_a_rotation_matrix_is_half_mode():
    x, cos, sin = torch.randn(2, 3, 1, 8), torch.randn(1, 3, 1, 8), torch.randn(1, 3, 1, 8)
    matrix = torch.zeros(8, 8)
    matrix[:4, 4:] = torch.eye(4)
    matrix[4:, :4] = -torch.eye(4)
    torch.testing.assert_close(ref.rotary_mul(x, cos, sin, "half", matrix), ref.rotary_mul(x, cos, sin))


def test_rotary_mul_backward_is_autograds():
    for mode in ("half", "interleave"):
        x, r1, r2 = (
            torch.randn(2, 3, 2, 8, requires_grad=True),
            torch.randn(1, 3, 1, 8, requires_grad=True),
            torch.randn(1, 3, 1, 8, requires_grad=True),
        )
        y = x * r1 + ref.rotate(x, mode) * r2
        grad = torch.randn_like(y)
        y.backward(grad)
        dx, dr1, dr2 = ref.rotary_mul_backward(grad, x.detach(), r1.detach(), r2.detach(), mode)
        torch.testing.assert_close(dx, x.grad)
        torch.testing.assert_close(dr1, r1.grad)
        torch.testing.assert_close(dr2, r2.grad)


def test_interleave_rope_writes_the_pairs_in_halves():
    x, cos, sin = torch.randn(1, 1, 2, 8), torch.randn(1, 1, 2, 8), torch.randn(1, 1, 2, 8)
    even, odd = x[..., ::2], x[..., 1::2]
    expected = torch.cat([even, odd], -1) * cos + torch.cat([-odd, even], -1) * sin
    torch.testing.assert_close(ref.interleave_rope(x, cos, sin), expected)
