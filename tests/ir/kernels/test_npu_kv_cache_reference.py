"""The KV-cache writes of torch_npu's fused operators, against their documented formulas."""

from __future__ import annotations

import torch

from fxlab.ir.kernels import npu_kv_cache_reference as ref
from fxlab.ir.kernels.npu_rope_reference import interleave_rope


def test_scatter_pa_kv_cache_writes_slots_in_nd_and_nz():
    key, value = torch.randn(3, 2, 8), torch.randn(3, 2, 8)
    slots = torch.tensor([1, 6, -1], dtype=torch.int32)
    k_cache, v_cache = ref.npu_scatter_pa_kv_cache_functional(
        key, value, torch.zeros(4, 2, 2, 8), torch.zeros(4, 2, 2, 8), slots, cache_mode="Norm"
    )
    torch.testing.assert_close(k_cache[0, 1], key[0])
    torch.testing.assert_close(v_cache[3, 0], value[1])
    assert int((k_cache != 0).sum()) == 32  # the -1 slot writes nothing
    nz, _ = ref.npu_scatter_pa_kv_cache_functional(
        key.half(), value.half(), torch.zeros(4, 1, 2, 16).half(), torch.zeros(4, 1, 2, 16).half(), slots
    )
    torch.testing.assert_close(nz[3, :, 0, :], key[1].half().reshape(1, 16))


def test_kv_rmsnorm_rope_cache_norms_the_latent_and_ropes_the_rest():
    kv, gamma = torch.randn(2, 1, 1, 12), torch.rand(8) + 0.5
    cos, sin = torch.randn(2, 1, 1, 4), torch.randn(2, 1, 1, 4)
    k_cache, ckv_cache = torch.zeros(4, 2, 1, 4), torch.zeros(4, 2, 1, 8)
    k_rope, c_kv, k_out, ckv_out = ref.npu_kv_rmsnorm_rope_cache_v2_functional(
        kv, gamma, cos, sin, torch.tensor([5, 2]), k_cache, ckv_cache, cache_mode="PA"
    )
    latent = kv[..., :8]
    torch.testing.assert_close(c_kv, latent * torch.rsqrt(latent.pow(2).mean(-1, keepdim=True) + 1e-5) * gamma)
    torch.testing.assert_close(k_rope, interleave_rope(kv[..., 8:], cos, sin))
    torch.testing.assert_close(k_out[2, 1, 0], k_rope[0, 0, 0])  # slot 5: block 2, offset 1
    torch.testing.assert_close(ckv_out[1, 0, 0], c_kv[1, 0, 0])
    assert not k_cache.any()  # the functional form leaves its inputs alone


def test_qkv_rms_norm_rope_cache_quantises_by_division():
    tokens, dim = 2, 16
    qkv = torch.randn(tokens, 4 * dim)
    args = (qkv, torch.ones(dim), torch.ones(dim), torch.ones(tokens, dim), torch.zeros(tokens, dim), torch.tensor([3, 6]))
    caches = (torch.zeros(tokens, 2 * dim), torch.zeros(4, 2, 1, dim, dtype=torch.int8), torch.zeros(4, 2, 1, dim, dtype=torch.int8))
    scale = torch.full((1, dim), 0.05)
    outs = ref.npu_qkv_rms_norm_rope_cache_functional(
        *args, *caches, [2, 1, 4, dim], [2, 1, 1], v_scale=scale, cache_mode="PA", is_output_qkv=True
    )
    v = qkv[:, 3 * dim :]
    torch.testing.assert_close(outs[2], v)
    expected = torch.round(v / 0.05).clamp(-128, 127).to(torch.int8)
    torch.testing.assert_close(outs[5][1, 1, 0], expected[0])  # slot 3: block 1, offset 1
    # cos 1, sin 0: q is its per-head RMSNorm
    q = qkv[:, : 2 * dim].reshape(tokens, 2, dim)
    torch.testing.assert_close(outs[0].reshape(tokens, 2, dim), q * torch.rsqrt(q.pow(2).mean(-1, keepdim=True) + 1e-6))


def test_rope_quant_kvcache_writes_contiguous_caches_from_each_batchs_index():
    x = torch.randn(2, 1, 64)
    cos, sin = torch.ones(2, 1, 1, 16), torch.zeros(2, 1, 1, 16)
    k_cache, v_cache = torch.zeros(2, 6, 1, 16, dtype=torch.int8), torch.zeros(2, 6, 1, 16, dtype=torch.int8)
    scale = torch.full((16,), 20.0)
    q, k, v, k_out, v_out = ref.npu_rope_quant_kvcache(
        x, cos, sin, k_cache, v_cache, torch.tensor([2, 5], dtype=torch.int32), scale, scale, [32, 16, 16], kv_output=True
    )
    assert q.shape == (2, 1, 2, 16) and k.shape == (2, 1, 1, 16)
    torch.testing.assert_close(v_out[1, 5, 0], torch.round(x[1, 0, 48:] * 20).clamp(-128, 127).to(torch.int8))
    torch.testing.assert_close(k_out[0, 2, 0], torch.round(x[0, 0, 32:48] * 20).clamp(-128, 127).to(torch.int8))
