"""The attention math of torch_npu's fused attention operators, against torch's SDPA."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from fxlab.ir.kernels import npu_attention_reference as ref
from fxlab.ir.kernels import npu_flash_attention_reference as flash


def _sdpa(q, k, v, **kwargs):
    return F.scaled_dot_product_attention(q.float(), k.float(), v.float(), enable_gqa=True, **kwargs)


def test_layouts_gqa_mask_and_lse():
    q, k, v = torch.randn(2, 4, 3, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8)
    keep = torch.rand(2, 1, 3, 5) > 0.3
    keep[..., 0] = True
    options = ref.AttentionOptions("BNSD", 4, 2, 0.3, softmax_lse_flag=True)
    out, lse = ref.infer_attention(ref.AttentionTensors(q, k, v, atten_mask=~keep), options)
    torch.testing.assert_close(out, _sdpa(q, k, v, attn_mask=keep, scale=0.3))
    scores = (q @ k.repeat_interleave(2, 1).transpose(-1, -2)) * 0.3
    torch.testing.assert_close(lse, scores.masked_fill(~keep, float("-inf")).logsumexp(-1, keepdim=True))
    bsh = [t.transpose(1, 2).flatten(-2) for t in (q, k, v)]
    out_bsh, _ = ref.infer_attention(ref.AttentionTensors(*bsh, atten_mask=~keep), ref.AttentionOptions("BSH", 4, 2, 0.3))
    torch.testing.assert_close(out_bsh, out.transpose(1, 2).flatten(-2))
    out_bsnd, _ = ref.infer_attention(ref.AttentionTensors(q, k, v, atten_mask=~keep), ref.AttentionOptions("BNSD_BSND", 4, 2, 0.3))
    torch.testing.assert_close(out_bsnd, out.transpose(1, 2))


def test_paged_kv_is_gathered_by_block_table():
    cache_k, cache_v = torch.randn(6, 2, 16), torch.randn(6, 2, 16)  # 6 blocks of 2 tokens, 2 heads of 8
    table = torch.tensor([[3, 1, 5], [0, 2, 4]], dtype=torch.int32)
    lengths, query = [5, 3], torch.randn(2, 1, 32)
    tensors = ref.AttentionTensors(query, cache_k, cache_v, actual_seq_lengths_kv=lengths, block_table=table)
    out, _ = ref.infer_attention(tensors, ref.AttentionOptions("BSH", 4, 2, 0.3, block_size=2))
    for b in range(2):
        k = cache_k[table[b].long()].reshape(-1, 2, 8)[: lengths[b]].transpose(0, 1)
        v = cache_v[table[b].long()].reshape(-1, 2, 8)[: lengths[b]].transpose(0, 1)
        expected = _sdpa(query[b].view(4, 1, 8), k, v, scale=0.3)
        torch.testing.assert_close(out[b], expected.transpose(0, 1).reshape(1, 32))
    # the same cache as (blocks, N, block_size, D), queries in BNSD
    by_head = [c.view(6, 2, 2, 8).transpose(1, 2).contiguous() for c in (cache_k, cache_v)]
    tensors = ref.AttentionTensors(query.view(2, 1, 4, 8).transpose(1, 2), *by_head, actual_seq_lengths_kv=lengths, block_table=table)
    out4, _ = ref.infer_attention(tensors, ref.AttentionOptions("BNSD", 4, 2, 0.3, block_size=2))
    torch.testing.assert_close(out4.transpose(1, 2).reshape(2, 1, 32), out)


def test_packed_sequences_and_causal_modes():
    q, k, v = torch.randn(5, 4, 8), torch.randn(7, 2, 8), torch.randn(7, 2, 8)
    tensors = ref.AttentionTensors(q, k, v, actual_seq_lengths=[2, 5], actual_seq_lengths_kv=[3, 7])
    out, lse = ref.infer_attention(tensors, ref.AttentionOptions("TND", 4, 2, 0.3, sparse_mode=3, softmax_lse_flag=True))
    assert lse.shape == (5, 4, 1)
    bottom_right = torch.ones(2, 3, dtype=torch.bool).tril(1)
    first = _sdpa(q[:2].transpose(0, 1), k[:3].transpose(0, 1), v[:3].transpose(0, 1), attn_mask=bottom_right, scale=0.3)
    torch.testing.assert_close(out[:2], first.transpose(0, 1))
    q4, k4 = torch.randn(1, 2, 3, 8), torch.randn(1, 2, 3, 8)
    top_left, _ = ref.infer_attention(ref.AttentionTensors(q4, k4, k4), ref.AttentionOptions("BNSD", 2, 2, 0.5, sparse_mode=2))
    torch.testing.assert_close(top_left, _sdpa(q4, k4, k4, is_causal=True, scale=0.5))


def test_query_lengths_pad_with_zeros_and_rope_parts_add_to_scores():
    q, k, v = torch.randn(2, 2, 3, 8), torch.randn(2, 1, 4, 8), torch.randn(2, 1, 4, 8)
    q_rope, k_rope = torch.randn(2, 2, 3, 4), torch.randn(2, 1, 4, 4)
    tensors = ref.AttentionTensors(q, k, v, actual_seq_lengths=[3, 1], query_rope=q_rope, key_rope=k_rope)
    out, _ = ref.infer_attention(tensors, ref.AttentionOptions("BNSD", 2, 1, 0.25))
    expected = _sdpa(torch.cat([q, q_rope], -1), torch.cat([k, k_rope], -1), v, scale=0.25)
    torch.testing.assert_close(out[0], expected[0])
    torch.testing.assert_close(out[1, :, :1], expected[1, :, :1])
    assert not out[1, :, 1:].any()


def test_flash_attention_statistics_and_gradient():
    q, k, v = (torch.randn(1, 2, 4, 8, requires_grad=True) for _ in range(3))
    causal = torch.ones(4, 4, dtype=torch.bool).triu(1)
    options = {"atten_mask": causal, "scale": 0.35}
    out, row_max, row_sum = flash.flash_attention(q.detach(), k.detach(), v.detach(), 2, "BNSD", options)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.35)
    torch.testing.assert_close(out, expected.detach())
    scores = ((q @ k.transpose(-1, -2)) * 0.35).masked_fill(causal, float("-inf")).detach()
    torch.testing.assert_close(row_max, scores.amax(-1, keepdim=True).expand(1, 2, 4, 8))
    torch.testing.assert_close(row_sum[..., :1], (scores - scores.amax(-1, keepdim=True)).exp().sum(-1, keepdim=True))
    dy = torch.randn_like(expected)
    expected.backward(dy)
    dq, dk, dv, dpse = flash.flash_attention_grad(q.detach(), k.detach(), v.detach(), dy, 2, "BNSD", {**options, "scale_value": 0.35})
    for got, want in ((dq, q.grad), (dk, k.grad), (dv, v.grad)):
        torch.testing.assert_close(got, want)
    assert dpse.numel() == 0
