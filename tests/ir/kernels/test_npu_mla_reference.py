"""torch_npu's MLA prolog, against its documented formulas written out."""

from __future__ import annotations

import torch

from fxlab.ir.kernels import npu_mla_reference as ref
from fxlab.ir.kernels.npu_norm_reference import rms_norm
from fxlab.ir.kernels.npu_rope_reference import interleave_rope


def test_mla_prolog_computes_the_five_paths_and_writes_the_paged_caches():
    torch.manual_seed(0)
    x, w_dq, w_uq_qr, w_uk = torch.randn(2, 1, 32), torch.randn(32, 16), torch.randn(16, 2 * 12), torch.randn(2, 8, 16)
    w_dkv_kr, g_cq, g_ckv = torch.randn(32, 20), torch.rand(16) + 0.5, torch.rand(16) + 0.5
    sin, cos = torch.randn(2, 1, 4), torch.randn(2, 1, 4)
    kv_cache, kr_cache = torch.zeros(4, 2, 1, 16), torch.zeros(4, 2, 1, 4)
    index = torch.tensor([[3], [4]])
    query, query_rope, kv_out, kr_out = ref.npu_mla_prolog(
        x, w_dq, w_uq_qr, w_uk, w_dkv_kr, g_cq, g_ckv, sin, cos, index, kv_cache, kr_cache
    )
    c_q = rms_norm(x @ w_dq, g_cq, 1e-5)[0]
    q = (c_q @ w_uq_qr).unflatten(-1, (2, 12))
    torch.testing.assert_close(query, torch.einsum("bsnd,ndh->bsnh", q[..., :8], w_uk))
    torch.testing.assert_close(query_rope, interleave_rope(q[..., 8:], cos.unsqueeze(-2), sin.unsqueeze(-2)))
    kv = x @ w_dkv_kr
    torch.testing.assert_close(kv_out[1, 1, 0], rms_norm(kv[..., :16], g_ckv, 1e-5)[0][0, 0])  # index 3: block 1, offset 1
    torch.testing.assert_close(kr_out[2, 0, 0], interleave_rope(kv[..., 16:], cos, sin)[1, 0])


def test_empty_caches_are_left_as_they_are_and_the_query_paths_still_computed():
    """``Skv = 0`` (a serving engine's run before any KV block exists): the documentation
    says the caches are not written and the query outputs are computed as usual."""
    torch.manual_seed(0)
    x, w_dq, w_uq_qr, w_uk = torch.randn(3, 32), torch.randn(32, 16), torch.randn(16, 2 * 12), torch.randn(2, 8, 16)
    w_dkv_kr, g_cq, g_ckv = torch.randn(32, 20), torch.rand(16) + 0.5, torch.rand(16) + 0.5
    sin, cos, index = torch.randn(3, 4), torch.randn(3, 4), torch.tensor([0, 5, 9])
    weights = (x, w_dq, w_uq_qr, w_uk, w_dkv_kr, g_cq, g_ckv, sin, cos)
    for mode in ("PA_BSND", "PA_NZ"):
        kv_cache, kr_cache = torch.zeros(0, 16, 1, 16), torch.zeros(0, 16, 1, 4)
        query, query_rope, kv_out, kr_out = ref.npu_mla_prolog(*weights, index, kv_cache, kr_cache, cache_mode=mode)
        full, full_rope, _, _ = ref.npu_mla_prolog(*weights, index, torch.zeros(2, 16, 1, 16), torch.zeros(2, 16, 1, 4))
        assert torch.equal(query, full) and torch.equal(query_rope, full_rope)
        assert kv_out.shape == (0, 16, 1, 16) and kr_out.shape == (0, 16, 1, 4)
