"""The math of torch_npu's MLA prologs (``npu_mla_prolog`` v1, v2, v3), on CPU, for
unquantised weights, from the operators' documentation:

    c_q  = a_q  * RmsNorm(x W_dq)                 (a_q = qc_qr_scale, 1 before v3)
    q    = (c_q W_uq) W_uk per head  -> query     (B, S, N, Hckv)
    q_r  = ROPE(c_q W_qr)            -> query_rope
    c_kv = a_kv * RmsNorm(x W_dkv)   -> kv_cache at cache_index
    k_r  = ROPE(x W_kr)              -> kr_cache at cache_index

``W_uq``/``W_qr`` are the per-head columns ``D``/``Dr`` of ``weight_uq_qr``, ``W_dkv``/
``W_kr`` the first ``Hckv``/last ``Dr`` columns of ``weight_dkv_kr``, and ROPE takes the
interleaved pairs in halves (the form :func:`npu_rope_reference.interleave_rope`
computes). The caches are paged, ``PA_BSND`` (ND) or ``PA_NZ``, and not written when they
are empty (``Skv = 0`` in the documentation). Products in float32;
the NZ weight format of the NPU is a memory layout, the same matrix here. The reserved
and quantisation outputs are zeros of the Meta function's shapes.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.npu_attention_reference import unsupported
from fxlab.ir.kernels.npu_kv_cache_reference import write_paged
from fxlab.ir.kernels.npu_norm_reference import rms_norm
from fxlab.ir.kernels.npu_reference import cpu_kernel, meta_outputs, zeros_like_meta
from fxlab.ir.kernels.npu_rope_reference import interleave_rope

QUANT_INPUTS = (
    "dequant_scale_x",
    "dequant_scale_w_dq",
    "dequant_scale_w_uq_qr",
    "dequant_scale_w_dkv_kr",
    "quant_scale_ckv",
    "quant_scale_ckr",
    "smooth_scales_cq",
    "k_nope_clip_alpha",
)


def mla_prolog_(
    tensors: tuple[torch.Tensor, ...],
    kv_cache: torch.Tensor,
    kr_cache: torch.Tensor,
    cache_index: torch.Tensor | None,
    options: dict[str, Any],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(query, query_rope, c_q); the caches written in place at ``cache_index``."""
    unsupported("npu_mla_prolog", options, QUANT_INPUTS)
    x, w_dq, w_uq_qr, w_uk, w_dkv_kr, gamma_cq, gamma_ckv, sin, cos = tensors
    if x.dtype == torch.int8 or int(options.get("weight_quant_mode", 0)) or int(options.get("kv_cache_quant_mode", 0)):
        raise NotImplementedError("npu_mla_prolog: quantised inputs have no CPU reference kernel")
    heads, nope, latent = w_uk.shape
    rope = cos.shape[-1]
    c_q = rms_norm(x.float() @ w_dq.float(), gamma_cq, float(options.get("rmsnorm_epsilon_cq", 1e-5)))[0]
    c_q = c_q * float(options.get("qc_qr_scale", 1.0))
    q = (c_q @ w_uq_qr.float()).unflatten(-1, (heads, nope + rope))
    query = torch.einsum("...nd,ndh->...nh", q[..., :nope], w_uk.float())
    angle = (cos.float().unsqueeze(-2), sin.float().unsqueeze(-2))
    query_rope = interleave_rope(q[..., nope:], *angle)
    kv = x.float() @ w_dkv_kr.float()
    c_kv = rms_norm(kv[..., :latent], gamma_ckv, float(options.get("rmsnorm_epsilon_ckv", 1e-5)))[0]
    c_kv = c_kv * float(options.get("kc_scale", 1.0))
    k_rope = interleave_rope(kv[..., latent:], cos.float(), sin.float())
    # Empty caches (Skv = 0, a serving engine's run before any KV block exists) are left
    # as they are, as the operators' documentation says.
    if cache_index is not None and kv_cache.numel() and kr_cache.numel():
        mode = options.get("cache_mode", "PA_BSND")
        if mode not in ("PA_BSND", "PA_NZ"):
            raise NotImplementedError(f"npu_mla_prolog: cache_mode {mode!r} has no CPU reference kernel (PA_BSND and PA_NZ have)")
        nz, block_size = mode == "PA_NZ", kv_cache.shape[1]
        with torch.no_grad():
            write_paged(kv_cache, cache_index, c_kv.reshape(-1, latent), nz=nz, block_size=block_size if nz else None)
            write_paged(kr_cache, cache_index, k_rope.reshape(-1, rope), nz=nz, block_size=block_size if nz else None)
    return query.to(x.dtype), query_rope.to(x.dtype), c_q.to(x.dtype)


def _split(args: tuple[Any, ...], with_index: bool) -> tuple[tuple[torch.Tensor, ...], Any, torch.Tensor, torch.Tensor]:
    """(weights..., cache_index, kv_cache, kr_cache) from v1/v2's or v3's positional arguments."""
    if with_index:
        return tuple(args[:9]), args[9], args[10], args[11]
    return tuple(args[:9]), None, args[9], args[10]


@cpu_kernel("npu_mla_prolog")
def npu_mla_prolog(*args: Any, **options: Any) -> tuple[torch.Tensor, ...]:
    """(query, query_rope, kv_cache, kr_cache): the NPU writes the caches in place and
    returns them; here written in place and returned as copies."""
    tensors, index, kv_cache, kr_cache = _split(args, with_index=True)
    query, query_rope, _ = mla_prolog_(tensors, kv_cache, kr_cache, index, options)
    return query, query_rope, kv_cache.clone(), kr_cache.clone()


@cpu_kernel("npu_mla_prolog_v2")
def npu_mla_prolog_v2(*args: Any, **options: Any) -> tuple[torch.Tensor, ...]:
    """v1's outputs and dequant_scale_q_nope (zeros: no quantised query)."""
    meta = meta_outputs("npu_mla_prolog_v2", args, options)
    return (*npu_mla_prolog(*args, **options), zeros_like_meta(meta[4]))


def mla_prolog_v3_(args: tuple[Any, ...], options: dict[str, Any], meta: Any) -> tuple[torch.Tensor, ...]:
    """(query, query_rope, dequant_scale_q_nope, query_norm, dequant_scale_q_norm), the
    caches written in place; query_norm is c_q when ``query_norm_flag`` asks for it."""
    tensors, _, kv_cache, kr_cache = _split(args, with_index=False)
    query, query_rope, c_q = mla_prolog_(tensors, kv_cache, kr_cache, options.get("cache_index"), options)
    query_norm = c_q.reshape(meta[3].shape) if options.get("query_norm_flag") else zeros_like_meta(meta[3])
    return query, query_rope, zeros_like_meta(meta[2]), query_norm, zeros_like_meta(meta[4])


@cpu_kernel("npu_mla_prolog_v3_functional")
def npu_mla_prolog_v3_functional(*args: Any, **options: Any) -> tuple[torch.Tensor, ...]:
    """v3's five outputs, then the new kv_cache and kr_cache."""
    meta = meta_outputs("npu_mla_prolog_v3_functional", args, options)
    caches = (args[9].clone(), args[10].clone())
    outs = mla_prolog_v3_((*args[:9], *caches), options, meta)
    return (*outs, *caches)
