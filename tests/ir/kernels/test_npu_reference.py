"""The CPU reference math of torch_npu's common operators, against torch's own ops."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from fxlab.ir.kernels import npu_reference as ref


def test_rotary_half_and_interleave():
    q, k, cos, sin = torch.randn(1, 3, 2, 4), torch.randn(1, 3, 2, 4), torch.randn(1, 3, 1, 4), torch.randn(1, 3, 1, 4)
    rq, rk = ref.apply_rotary_pos_emb(q, k, cos, sin, "BSND")
    half = torch.cat([-q[..., 2:], q[..., :2]], dim=-1)
    torch.testing.assert_close(rq, q * cos + half * sin)
    iq, _ = ref.apply_rotary_pos_emb(q, k, cos, sin, "BSND", "interleave")
    pairs = torch.stack([-q[..., 1::2], q[..., 0::2]], dim=-1).flatten(-2)
    torch.testing.assert_close(iq, q * cos + pairs * sin)


def test_attention_layouts_gqa_masks_and_lengths():
    q, k, v = torch.randn(2, 4, 3, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8)
    keep = torch.rand(2, 1, 3, 5) > 0.3
    keep[..., 0] = True
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, scale=0.3, enable_gqa=True)
    out = ref.attention(q, k, v, "BNSD", 4, 2, ~keep, 0, 0.3)
    torch.testing.assert_close(out, expected)
    bsh = ref.attention(
        q.transpose(1, 2).flatten(-2), k.transpose(1, 2).flatten(-2), v.transpose(1, 2).flatten(-2), "BSH", 4, 2, ~keep, 0, 0.3
    )
    torch.testing.assert_close(bsh, expected.transpose(1, 2).flatten(-2))
    # sparse mode 2: the causal band; kv lengths: later keys of each batch masked.
    causal = ref.attention(q, k[:, :, :3], v[:, :, :3], "BNSD", 4, 2, None, 2, 0.3)
    torch.testing.assert_close(
        causal, F.scaled_dot_product_attention(q, k[:, :, :3], v[:, :, :3], is_causal=True, scale=0.3, enable_gqa=True)
    )
    short = ref.attention(q, k, v, "BNSD", 4, 2, None, 0, 0.3, kv_lengths=[2, 5])
    torch.testing.assert_close(short[0], F.scaled_dot_product_attention(q[:1], k[:1, :, :2], v[:1, :, :2], scale=0.3, enable_gqa=True)[0])
