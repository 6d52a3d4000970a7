"""The math of torch_npu's fused KV-cache writes, on CPU.

Caches are written where the slot (or index) says, in one of the layouts the operators
document: contiguous per batch (``Norm``: ``(B, 1, S, D)`` written at each batch's
offsets; ``contiguous``: ``(B, S, N, D)`` from each batch's start), paged ND
(``PA``/``PA_BNSD``/``PA_BSND``: ``(blocks, block_size, N, D)``, slot = block *
block_size + offset) or paged NZ (``PA_NZ``: each block stored as ``(N * D / c,
block_size, c)`` with ``c`` = 32 bytes of elements; a cache declared
``(blocks, block_size, N, D)`` is reinterpreted that way). A negative slot writes nothing.

The fused operators' math, from torch_npu's documentation and tests:
``npu_kv_rmsnorm_rope_cache`` (RMSNorm of the latent part, interleaved rope of the rest),
``npu_qkv_rms_norm_rope_cache`` (per-head RMSNorm and half rope of q and k;
quantised as ``round(x / scale + offset)``), ``npu_rope_quant_kvcache`` and its dequant
form (half rope of q and k; quantised as ``round(x * scale + offset)``), and
``npu_scatter_pa_kv_cache`` (a plain write). Options outside those raise
``NotImplementedError`` naming them.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.npu_norm_reference import rms_norm
from fxlab.ir.kernels.npu_reference import cpu_kernel
from fxlab.ir.kernels.npu_rope_reference import embed, interleave_rope

NZ_BYTES = 32  # an NZ fractal row holds 32 bytes
PAGED_ND = ("PA", "PA_BNSD", "PA_BSND", "Norm_PA")


# -- writes ----------------------------------------------------------------------------------
def nz_view(cache: torch.Tensor, block_size: int | None = None) -> torch.Tensor:
    """``cache`` as its NZ memory: ``(blocks, H / c, block_size, c)``. A cache already of
    that shape (4-D, last dim ``c``) is returned as it is."""
    c = NZ_BYTES // cache.element_size()
    if block_size is None:
        return cache
    return cache.view(cache.shape[0], -1, block_size, c)


def write_nz(cache_nz: torch.Tensor, slot: int, value: torch.Tensor) -> None:
    """Token ``value`` (any shape, ``H`` elements) at ``slot`` of an NZ cache ``(blocks, H/c, bs, c)``."""
    block_size, c = cache_nz.shape[2], cache_nz.shape[3]
    cache_nz[slot // block_size, :, slot % block_size, :] = value.reshape(-1, c).to(cache_nz.dtype)


def write_paged(cache: torch.Tensor, slots: torch.Tensor, values: torch.Tensor, nz: bool, block_size: int | None = None) -> None:
    """One token per slot (``values``: ``(T, ...)``) into a paged cache, in place."""
    target = nz_view(cache, block_size) if nz else cache.view(-1, *cache.shape[2:])
    for slot, value in zip(slots.reshape(-1).tolist(), values):
        if slot < 0:
            continue
        if nz:
            write_nz(target, int(slot), value)
        else:
            target[int(slot)] = value.reshape(target.shape[1:]).to(cache.dtype)


# -- ScatterPaKvCache ------------------------------------------------------------------------------
def scatter_pa_kv_cache_(
    key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor, slot_mapping: torch.Tensor, **options: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    """Write each token's key and value at its slot, in place: ``Norm`` caches are
    ``(blocks, block_size, N, D)``, ``PA_NZ`` ones ``(blocks, N * D / c, block_size, c)``."""
    given = [n for n in ("compress_lens", "compress_seq_offsets", "seq_lens") if options.get(n) is not None]
    if given:
        raise NotImplementedError(f"npu_scatter_pa_kv_cache: {', '.join(given)} (compressed caches) have no CPU reference kernel")
    mode = options.get("cache_mode") or "PA_NZ"
    if mode not in ("Norm", "PA_NZ"):
        raise NotImplementedError(f"npu_scatter_pa_kv_cache: cache_mode {mode!r} has no CPU reference kernel (Norm and PA_NZ have)")
    with torch.no_grad():
        for cache, tokens in ((key_cache, key), (value_cache, value)):
            write_paged(cache, slot_mapping, tokens.reshape(tokens.shape[0], -1), nz=mode == "PA_NZ")
    return key_cache, value_cache


@cpu_kernel("npu_scatter_pa_kv_cache_functional")
def npu_scatter_pa_kv_cache_functional(
    key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor, slot_mapping: torch.Tensor, **options: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    return scatter_pa_kv_cache_(key, value, key_cache.clone(), value_cache.clone(), slot_mapping, **options)


# -- KvRmsNormRopeCache ----------------------------------------------------------------------------
def _token_slots(index: torch.Tensor, mode: str, batch: int, seq: int, block_size: int) -> torch.Tensor:
    """Each token's slot (``(B * S,)``) under a paged cache mode."""
    if mode.startswith("PA_BLK"):
        blocks = index.reshape(batch, -1)
        s = torch.arange(seq)
        return (blocks[:, s // block_size] + (s % block_size)).reshape(-1)
    return index.reshape(-1)


def _write_kv_rmsnorm(cache: torch.Tensor, tokens: torch.Tensor, index: torch.Tensor, mode: str) -> None:
    """``tokens``: ``(B, 1, S, D)``."""
    batch, _, seq, _ = tokens.shape
    if mode == "Norm":  # (B, 1, cache_len, D), index (B, S): offsets within each batch
        for b in range(batch):
            for s in range(seq):
                position = int(index[b, s])
                if position >= 0:
                    cache[b, 0, position] = tokens[b, 0, s].to(cache.dtype)
        return
    block_size = cache.shape[1]
    slots = _token_slots(index, mode, batch, seq, block_size)
    write_paged(cache, slots, tokens.reshape(batch * seq, -1), nz=mode.endswith("NZ"), block_size=block_size)


def kv_rmsnorm_rope_cache_(
    kv: torch.Tensor,
    gamma: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    index: torch.Tensor,
    k_cache: torch.Tensor,
    ckv_cache: torch.Tensor,
    **options: Any,
) -> tuple[torch.Tensor, ...]:
    """(k_cache, ckv_cache, k_rope, c_kv), the caches written in place: ``c_kv`` is the
    RMSNorm of ``kv``'s first ``len(gamma)`` channels, ``k_rope`` the interleaved rope of
    the rest."""
    quant = [n for n in ("k_rope_scale", "c_kv_scale", "k_rope_offset", "c_kv_offset", "v") if options.get(n) is not None]
    if quant:
        raise NotImplementedError(f"npu_kv_rmsnorm_rope_cache: {', '.join(quant)} have no CPU reference kernel")
    mode = options.get("cache_mode", "Norm")
    if mode not in ("Norm", "PA", "PA_BNSD", "PA_NZ", "PA_BLK_BNSD", "PA_BLK_NZ"):
        raise NotImplementedError(f"npu_kv_rmsnorm_rope_cache: cache_mode {mode!r} has no CPU reference kernel")
    rms_part = gamma.shape[0]
    c_kv, _ = rms_norm(kv[..., :rms_part], gamma, float(options.get("epsilon", 1e-5)))
    k_rope = interleave_rope(kv[..., rms_part:], cos, sin)
    with torch.no_grad():
        _write_kv_rmsnorm(k_cache, k_rope, index, mode)
        _write_kv_rmsnorm(ckv_cache, c_kv, index, mode)
    return k_cache, ckv_cache, k_rope, c_kv


@cpu_kernel("npu_kv_rmsnorm_rope_cache")
def npu_kv_rmsnorm_rope_cache(
    kv: torch.Tensor,
    gamma: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    index: torch.Tensor,
    k_cache: torch.Tensor,
    ckv_cache: torch.Tensor,
    **options: Any,
) -> tuple[torch.Tensor, ...]:
    """The NPU writes the caches in place and returns them: here written in place, and
    returned as copies (the schema declares new outputs)."""
    k_out, ckv_out, k_rope, c_kv = kv_rmsnorm_rope_cache_(kv, gamma, cos, sin, index, k_cache, ckv_cache, **options)
    return k_out.clone(), ckv_out.clone(), k_rope, c_kv


@cpu_kernel("npu_kv_rmsnorm_rope_cache_v2_functional")
def npu_kv_rmsnorm_rope_cache_v2_functional(
    kv: torch.Tensor,
    gamma: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    index: torch.Tensor,
    k_cache: torch.Tensor,
    ckv_cache: torch.Tensor,
    **options: Any,
) -> tuple[torch.Tensor, ...]:
    """(k_rope, c_kv, the new k_cache, the new ckv_cache)."""
    dtypes = [n for n in ("k_cache_dtype", "ckv_cache_dtype") if options.pop(n, None) is not None]
    if dtypes:
        raise NotImplementedError(f"npu_kv_rmsnorm_rope_cache_v2: {', '.join(dtypes)} have no CPU reference kernel")
    k_out, ckv_out, k_rope, c_kv = kv_rmsnorm_rope_cache_(kv, gamma, cos, sin, index, k_cache.clone(), ckv_cache.clone(), **options)
    return k_rope, c_kv, k_out, ckv_out


# -- QkvRmsNormRopeCache -----------------------------------------------------------------------------
def _quant_div(x: torch.Tensor, scale: Any, offset: Any) -> torch.Tensor:
    if scale is not None:
        x = x / scale.float()
    if offset is not None:
        x = x + offset.float()
    return torch.round(x).clamp(-128, 127) if scale is not None else x


def qkv_rms_norm_rope_cache_(
    qkv: torch.Tensor,
    q_gamma: torch.Tensor,
    k_gamma: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    index: torch.Tensor,
    q_out: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    qkv_size: list[int],
    head_nums: list[int],
    **options: Any,
) -> tuple[torch.Tensor, ...]:
    """(q_out, k_cache, v_cache written in place, then q, k, v before quantisation, empty
    0-dim tensors unless ``is_output_qkv``): per-head RMSNorm and half rope of q and k."""
    mode = options.get("cache_mode", "PA_NZ")
    if mode not in ("PA", "PA_NZ", "PA_BNSD"):
        raise NotImplementedError(f"npu_qkv_rms_norm_rope_cache: cache_mode {mode!r} has no CPU reference kernel")
    dim = int(qkv_size[3])
    n_q, n_k, n_v = (int(n) for n in head_nums)
    tokens = qkv.shape[0]
    q, k, v = (t.reshape(tokens, -1, dim) for t in qkv.float().split([n_q * dim, n_k * dim, n_v * dim], dim=-1))
    eps = float(options.get("epsilon", 1e-6))
    angle = (cos.float().reshape(tokens, -1, dim), sin.float().reshape(tokens, -1, dim))
    q = embed(rms_norm(q, q_gamma, eps)[0], *angle)
    k = embed(rms_norm(k, k_gamma, eps)[0], *angle)
    k_quant = _quant_div(k, options.get("k_scale"), options.get("k_offset"))
    v_quant = _quant_div(v, options.get("v_scale"), options.get("v_offset"))
    nz = mode == "PA_NZ"
    with torch.no_grad():
        q_out.copy_(q.reshape(tokens, -1).to(q_out.dtype))
        write_paged(k_cache, index, k_quant, nz=nz)
        write_paged(v_cache, index, v_quant, nz=nz)
    dtype = qkv.dtype
    if options.get("is_output_qkv", False):
        before = tuple(t.reshape(tokens, -1).to(dtype) for t in (q, k, v))
    else:
        before = tuple(torch.zeros((), dtype=dtype) for _ in range(3))
    return (q_out, k_cache, v_cache, *before)


@cpu_kernel("npu_qkv_rms_norm_rope_cache_functional")
def npu_qkv_rms_norm_rope_cache_functional(*args: Any, **options: Any) -> tuple[torch.Tensor, ...]:
    """(q, k, v before quantisation, the new q_out, k_cache, v_cache)."""
    tensors = [t.clone() if i in (6, 7, 8) else t for i, t in enumerate(args[:9])]
    outs = qkv_rms_norm_rope_cache_(*tensors, *args[9:], **options)
    return (*outs[3:], *outs[:3])


# -- DequantRopeQuantKvcache -------------------------------------------------------------------------
def _dequant(x: torch.Tensor, weight_scale: Any, activation_scale: Any, bias: Any) -> torch.Tensor:
    """An int32 matmul result back to float: ``(x + int bias) * weight_scale * activation_scale``
    (a float bias is added after)."""
    if x.dtype != torch.int32:
        return x.float()
    if weight_scale is None:
        raise NotImplementedError("npu_dequant_rope_quant_kvcache: an int32 x needs weight_scale")
    out = x.double()
    if bias is not None and bias.dtype == torch.int32:
        out = out + bias.double()
    out = out * weight_scale.double()
    if activation_scale is not None:
        out = out * activation_scale.double().reshape(-1, *([1] * (x.dim() - 1)))
    if bias is not None and bias.dtype != torch.int32:
        out = out + bias.double()
    return out.float()


def dequant_rope_quant_kvcache_(
    x: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    indices: torch.Tensor,
    scale_k: torch.Tensor,
    scale_v: torch.Tensor,
    size_splits: list[int],
    **options: Any,
) -> tuple[torch.Tensor, ...]:
    """(q, k, v, k_cache, v_cache): ``x`` split into q, k, v heads of ``cos``'s width, half
    rope of q and k, k and v quantised (``round(x * scale + offset)``) into the caches in
    place: ``contiguous`` caches ``(B, S_cache, N, D)`` from each batch's index on,
    ``page`` ones at each token's slot. k and v are empty unless ``kv_output``."""
    if str(options.get("quant_mode", "static")) not in ("static", "0"):
        raise NotImplementedError("npu_rope_quant_kvcache: dynamic quantisation has no CPU reference kernel")
    dim = cos.shape[-1]
    full = _dequant(x, options.get("weight_scale"), options.get("activation_scale"), options.get("bias"))
    lead = x.shape[:-1]
    q, k, v = (t.reshape(*lead, -1, dim) for t in full.split(list(size_splits), dim=-1))
    angle = (cos.float().reshape(*lead, 1, dim), sin.float().reshape(*lead, 1, dim))
    q, k = embed(q, *angle), embed(k, *angle)
    with torch.no_grad():
        for cache, tokens, scale, offset in (
            (k_cache, k, scale_k, options.get("offset_k")),
            (v_cache, v, scale_v, options.get("offset_v")),
        ):
            quant = tokens * scale.float() + (offset.float() if offset is not None else 0.0)
            _write_rope_quant(cache, torch.round(quant).clamp(-128, 127), indices, options.get("cache_mode", "contiguous"))
    out_dtype = cos.dtype
    if options.get("kv_output", False):
        k_out, v_out = k.to(out_dtype), v.to(out_dtype)
    else:
        k_out, v_out = torch.empty(0, dtype=out_dtype), torch.empty(0, dtype=out_dtype)
    return q.to(out_dtype), k_out, v_out, k_cache, v_cache


def _write_rope_quant(cache: torch.Tensor, tokens: torch.Tensor, indices: torch.Tensor, mode: str) -> None:
    if mode == "page":
        write_paged(cache, indices, tokens.reshape(-1, *tokens.shape[-2:]), nz=False)
        return
    if mode != "contiguous":
        raise NotImplementedError(f"npu_rope_quant_kvcache: cache_mode {mode!r} has no CPU reference kernel")
    seq_tokens = tokens if tokens.dim() == 4 else tokens.unsqueeze(1)
    for b, start in enumerate(indices.reshape(-1).tolist()):
        cache[b, int(start) : int(start) + seq_tokens.shape[1]] = seq_tokens[b].to(cache.dtype)


@cpu_kernel("npu_rope_quant_kvcache", "npu_dequant_rope_quant_kvcache")
def npu_rope_quant_kvcache(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, *args: Any, **options: Any
) -> tuple[torch.Tensor, ...]:
    """The NPU writes the caches in place and returns them: here written in place, and
    returned as copies (the schema declares new outputs)."""
    q, k, v, k_out, v_out = dequant_rope_quant_kvcache_(x, cos, sin, k_cache, v_cache, *args, **options)
    return q, k, v, k_out.clone(), v_out.clone()
