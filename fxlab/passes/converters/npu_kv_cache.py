"""Converters of torch_npu's fused KV-cache writes, as TorchAir makes them.

``npu_kv_rmsnorm_rope_cache`` → ``KvRmsNormRopeCache`` on the caches themselves (the op
writes them in place); its ``_v2_functional`` form moves the caches into new memory first
(``TensorMove``) and returns the outputs reordered. ``npu_scatter_pa_kv_cache_functional``
→ two ``TensorMove`` + ``ScatterPaKvCache``; ``npu_qkv_rms_norm_rope_cache`` (and its
functional form, with the three moves) → ``QkvRmsNormRopeCache``;
``npu_rope_quant_kvcache`` and ``npu_dequant_rope_quant_kvcache`` → one
``DequantRopeQuantKvcache``, ``quant_mode`` as the strings ``static``/``dynamic``. The
reference kernels are in :mod:`fxlab.ir.kernels.npu_kv_cache`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op, tensor_move
from fxlab.passes.converters.registry import Sample

KV_RMSNORM_OUTPUTS = ("k_cache", "ckv_cache", "k_rope", "c_kv")
KV_RMSNORM_SCALES = ("k_rope_scale", "c_kv_scale", "k_rope_offset", "c_kv_offset", "v")


# -- KvRmsNormRopeCache ------------------------------------------------------------------------
def _kv_rmsnorm_op(kv: ge.Tensor, tensors: tuple[ge.Tensor, ...], options: dict[str, Any]) -> list[ge.Tensor]:
    gamma, cos, sin, index, k_cache, ckv_cache = tensors
    inputs: dict[str, Any] = {"kv": kv, "gamma": gamma, "cos": cos, "sin": sin, "index": index, "k_cache": k_cache, "ckv_cache": ckv_cache}
    inputs.update({n: options.get(n) for n in KV_RMSNORM_SCALES})
    attrs = {
        "epsilon": float(options.get("epsilon", 1e-5)),
        "cache_mode": options.get("cache_mode", "Norm"),
        "is_output_kv": bool(options.get("is_output_kv", False)),
    }
    return ge.op("KvRmsNormRopeCache", inputs, attrs, outputs=KV_RMSNORM_OUTPUTS)


def _kv_rmsnorm_samples() -> list[Sample]:
    """Decode tokens of two batches: the MLA latent (8) and rope (4) parts of one head."""
    half = torch.float16
    kv, gamma = torch.randn(2, 1, 1, 12).to(half), torch.rand(8).to(half) + 0.5
    cos, sin = torch.randn(2, 1, 1, 4).to(half), torch.randn(2, 1, 1, 4).to(half)
    paged = (torch.zeros(4, 2, 1, 4).to(half), torch.zeros(4, 2, 1, 8).to(half))
    return [
        Sample((kv, gamma, cos, sin, torch.tensor([5, 2]), *paged), {"cache_mode": "PA", "is_output_kv": True}),
        Sample(
            (kv, gamma, cos, sin, torch.tensor([[3], [0]]), torch.zeros(2, 1, 6, 4).to(half), torch.zeros(2, 1, 6, 8).to(half)),
            {"epsilon": 1e-6},
        ),
    ]


@npu_converter("npu_kv_rmsnorm_rope_cache.default", _kv_rmsnorm_samples)
def convert_kv_rmsnorm_rope_cache(
    kv: ge.Tensor,
    gamma: ge.Tensor,
    cos: ge.Tensor,
    sin: ge.Tensor,
    index: ge.Tensor,
    k_cache: ge.Tensor,
    ckv_cache: ge.Tensor,
    *,
    meta_outputs: Any = None,
    **options: Any,
) -> list[ge.Tensor]:
    """npu_kv_rmsnorm_rope_cache(Tensor kv, Tensor gamma, Tensor cos, Tensor sin, Tensor index, Tensor k_cache, Tensor ckv_cache, *, Tensor? k_rope_scale=None, Tensor? c_kv_scale=None, Tensor? k_rope_offset=None, Tensor? c_kv_offset=None, Tensor? v=None, float epsilon=1e-5, str cache_mode='Norm', bool is_output_kv=False) -> (Tensor, Tensor, Tensor, Tensor)"""
    return _kv_rmsnorm_op(kv, (gamma, cos, sin, index, k_cache, ckv_cache), options)


@npu_converter("npu_kv_rmsnorm_rope_cache_v2_functional.default", _kv_rmsnorm_samples)
def convert_kv_rmsnorm_rope_cache_v2_functional(
    kv: ge.Tensor,
    gamma: ge.Tensor,
    cos: ge.Tensor,
    sin: ge.Tensor,
    index: ge.Tensor,
    k_cache: ge.Tensor,
    ckv_cache: ge.Tensor,
    *,
    meta_outputs: Any = None,
    **options: Any,
) -> list[ge.Tensor]:
    """npu_kv_rmsnorm_rope_cache_v2_functional(Tensor kv, Tensor gamma, Tensor cos, Tensor sin, Tensor index, Tensor k_cache, Tensor ckv_cache, *, ..., int? k_cache_dtype=None, int? ckv_cache_dtype=None) -> (Tensor, Tensor, Tensor, Tensor)"""
    moved = (tensor_move(k_cache), tensor_move(ckv_cache))
    k_cache_out, ckv_cache_out, k_rope, c_kv = _kv_rmsnorm_op(kv, (gamma, cos, sin, index, *moved), options)
    return [k_rope, c_kv, k_cache_out, ckv_cache_out]


# -- ScatterPaKvCache ----------------------------------------------------------------------------
def _scatter_pa_samples() -> list[Sample]:
    half = torch.float16
    key, value = torch.randn(3, 2, 8).to(half), torch.randn(3, 2, 8).to(half)
    slots = torch.tensor([1, 6, 4], dtype=torch.int32)
    return [
        Sample((key, value, torch.zeros(4, 2, 2, 8).to(half), torch.zeros(4, 2, 2, 8).to(half), slots), {"cache_mode": "Norm"}),
        # the NZ layout: (blocks, heads * dim / 16, block_size, 16)
        Sample((key, value, torch.zeros(4, 1, 2, 16).to(half), torch.zeros(4, 1, 2, 16).to(half), slots)),
    ]


@npu_converter("npu_scatter_pa_kv_cache_functional.default", _scatter_pa_samples)
def convert_scatter_pa_kv_cache_functional(
    key: ge.Tensor,
    value: ge.Tensor,
    key_cache: ge.Tensor,
    value_cache: ge.Tensor,
    slot_mapping: ge.Tensor,
    *,
    compress_lens: ge.Tensor | None = None,
    compress_seq_offsets: ge.Tensor | None = None,
    seq_lens: ge.Tensor | None = None,
    cache_mode: str = "PA_NZ",
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_scatter_pa_kv_cache_functional(Tensor key, Tensor value, Tensor key_cache, Tensor value_cache, Tensor slot_mapping, *, Tensor? compress_lens=None, Tensor? compress_seq_offsets=None, Tensor? seq_lens=None, str? cache_mode='PA_NZ') -> (Tensor, Tensor)"""
    inputs = {
        "key": key,
        "key_cache": tensor_move(key_cache),
        "slot_mapping": slot_mapping,
        "value": value,
        "value_cache": tensor_move(value_cache),
        "compress_lens": compress_lens,
        "compress_seq_offset": compress_seq_offsets,
        "seq_lens": seq_lens,
    }
    attrs = {"cache_mode": cache_mode, "scatter_mode": "None", "strides": [1, 1], "offsets": [0, 0]}
    defaults = {"cache_mode": "Norm", "scatter_mode": "None", "strides": [1, 1], "offsets": [0, 0]}
    return compact_op("ScatterPaKvCache", inputs, attrs, defaults, outputs=("key_cache", "value_cache"))


# -- QkvRmsNormRopeCache -------------------------------------------------------------------------
QKV_OUTPUTS = ("q_out", "k_cache", "v_cache", "q_out_before_quant", "k_out_before_quant", "v_out_before_quant")
QKV_DEFAULTS = {"epsilon": 1e-6, "cache_mode": "PA_NZ", "is_output_qkv": False}


def _qkv_op(tensors: tuple[ge.Tensor, ...], qkv_size: list[int], head_nums: list[int], options: dict[str, Any]) -> list[ge.Tensor]:
    names = ("qkv", "q_gamma", "k_gamma", "cos", "sin", "index", "q_out", "k_cache", "v_cache")
    inputs: dict[str, Any] = dict(zip(names, tensors))
    inputs.update({n: options.get(n) for n in ("k_scale", "v_scale", "k_offset", "v_offset")})
    attrs = {
        "qkv_size": list(qkv_size),
        "head_nums": list(head_nums),
        "epsilon": float(options.get("epsilon", 1e-6)),
        "cache_mode": options.get("cache_mode", "PA_NZ"),
        "is_output_qkv": bool(options.get("is_output_qkv", False)),
    }
    return compact_op("QkvRmsNormRopeCache", inputs, attrs, QKV_DEFAULTS, outputs=QKV_OUTPUTS)


def _qkv_samples() -> list[Sample]:
    """Two tokens, heads (q, k, v) = (2, 1, 1) of 16; caches of 4 blocks of 2 tokens, paged
    ND and NZ."""
    half = torch.float16
    tensors = (
        torch.randn(2, 64).to(half),
        torch.rand(16).to(half) + 0.5,
        torch.rand(16).to(half) + 0.5,
        torch.randn(2, 16).to(half),
        torch.randn(2, 16).to(half),
        torch.tensor([3, 6]),
        torch.zeros(2, 32).to(half),
    )
    paged = (torch.zeros(4, 2, 1, 16).to(half), torch.zeros(4, 2, 1, 16).to(half))
    nz = (torch.zeros(4, 1, 2, 16).to(half), torch.zeros(4, 1, 2, 16).to(half))  # (blocks, N * D / 16, block_size, 16)
    return [
        Sample((*tensors, *paged, [2, 1, 4, 16], [2, 1, 1]), {"cache_mode": "PA", "is_output_qkv": True}),
        Sample((*tensors, *nz, [2, 1, 4, 16], [2, 1, 1]), {"cache_mode": "PA_NZ", "epsilon": 1e-5}),
    ]


@npu_converter("npu_qkv_rms_norm_rope_cache.default", _qkv_samples)
def convert_qkv_rms_norm_rope_cache(
    qkv: ge.Tensor,
    q_gamma: ge.Tensor,
    k_gamma: ge.Tensor,
    cos: ge.Tensor,
    sin: ge.Tensor,
    index: ge.Tensor,
    q_out: ge.Tensor,
    k_cache: ge.Tensor,
    v_cache: ge.Tensor,
    qkv_size: list[int],
    head_nums: list[int],
    *,
    meta_outputs: Any = None,
    **options: Any,
) -> list[ge.Tensor]:
    """npu_qkv_rms_norm_rope_cache(Tensor qkv, Tensor q_gamma, Tensor k_gamma, Tensor cos, Tensor sin, Tensor index, Tensor(a!) q_out, Tensor(b!) k_cache, Tensor(c!) v_cache, int[4] qkv_size, int[3] head_nums, *, ..., float epsilon=1e-6, str cache_mode='PA_NZ', bool is_output_qkv=False) -> (Tensor, Tensor, Tensor)"""
    tensors = (qkv, q_gamma, k_gamma, cos, sin, index, q_out, k_cache, v_cache)
    # TorchAir returns all six outputs and fails (torchair_refusals); converting it anyway,
    # the schema's three: q_out and the caches are written in place by the op.
    return _qkv_op(tensors, qkv_size, head_nums, options)[3:]


@npu_converter("npu_qkv_rms_norm_rope_cache_functional.default", _qkv_samples)
def convert_qkv_rms_norm_rope_cache_functional(
    qkv: ge.Tensor,
    q_gamma: ge.Tensor,
    k_gamma: ge.Tensor,
    cos: ge.Tensor,
    sin: ge.Tensor,
    index: ge.Tensor,
    q_out: ge.Tensor,
    k_cache: ge.Tensor,
    v_cache: ge.Tensor,
    qkv_size: list[int],
    head_nums: list[int],
    *,
    meta_outputs: Any = None,
    **options: Any,
) -> list[ge.Tensor]:
    """npu_qkv_rms_norm_rope_cache_functional(Tensor qkv, Tensor q_gamma, Tensor k_gamma, Tensor cos, Tensor sin, Tensor index, Tensor q_out, Tensor k_cache, Tensor v_cache, int[4] qkv_size, int[3] head_nums, *, ...) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)"""
    moved = (tensor_move(q_out), tensor_move(k_cache), tensor_move(v_cache))
    outs = _qkv_op((qkv, q_gamma, k_gamma, cos, sin, index, *moved), qkv_size, head_nums, options)
    return [*outs[3:], *outs[:3]]


# -- DequantRopeQuantKvcache ---------------------------------------------------------------------
def _rope_quant_op(
    tensors: tuple[ge.Tensor, ...], size_splits: list[int], options: dict[str, Any], extra: dict[str, Any]
) -> list[ge.Tensor]:
    names = ("x", "cos", "sin", "k_cache", "v_cache", "indices", "scale_k", "scale_v")
    inputs: dict[str, Any] = dict(zip(names, tensors))
    inputs.update({"offset_k": options.get("offset_k"), "offset_v": options.get("offset_v"), **extra})
    attrs = {
        "size_splits": list(size_splits),
        "quant_mode": "static" if int(options.get("quant_mode", 0)) == 0 else "dynamic",
        "layout": options.get("input_layout", "BSND"),
        "kv_output": bool(options.get("kv_output", False)),
    }
    return ge.op("DequantRopeQuantKvcache", inputs, attrs, outputs=("q", "k", "v", "k_cache", "v_cache"))


def _rope_quant_tensors(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """(x, cos, sin, k_cache, v_cache, indices, scale_k, scale_v): a decode token per batch,
    q of 2 heads and k, v of 1 head of 16, int8 caches of 6 positions."""
    half = torch.float16
    return (
        x,
        torch.randn(2, 1, 1, 16).to(half),
        torch.randn(2, 1, 1, 16).to(half),
        torch.zeros(2, 6, 1, 16, dtype=torch.int8),
        torch.zeros(2, 6, 1, 16, dtype=torch.int8),
        torch.tensor([2, 5], dtype=torch.int32),
        torch.rand(16) + 0.5,
        torch.rand(16) + 0.5,
    )


@npu_converter(
    "npu_rope_quant_kvcache.default",
    lambda: [Sample((*_rope_quant_tensors(torch.randn(2, 1, 64).half()), [32, 16, 16]), {"kv_output": True})],
)
def convert_rope_quant_kvcache(*args: Any, meta_outputs: Any = None, **options: Any) -> list[ge.Tensor]:
    """npu_rope_quant_kvcache(Tensor x, Tensor cos, Tensor sin, Tensor k_cache, Tensor v_cache, Tensor indices, Tensor scale_k, Tensor scale_v, int[3] size_splits, *, Tensor? offset_k=None, Tensor? offset_v=None, int quant_mode=0, str input_layout="BSND", bool kv_output=False, str cache_mode="contiguous") -> (Tensor, Tensor, Tensor, Tensor, Tensor)"""
    extra = {"weight_scale": None, "activation_scale": None, "bias": None}
    return _rope_quant_op(tuple(args[:8]), args[8], options, extra)


def _dequant_rope_samples() -> list[Sample]:
    x = torch.randint(-50, 50, (2, 1, 64), dtype=torch.int32)
    extra = {"weight_scale": torch.rand(64) * 0.01, "activation_scale": torch.rand(2) + 0.5, "bias": torch.randn(64).half()}
    return [Sample((*_rope_quant_tensors(x), [32, 16, 16]), extra)]


@npu_converter("npu_dequant_rope_quant_kvcache.default", _dequant_rope_samples)
def convert_dequant_rope_quant_kvcache(*args: Any, meta_outputs: Any = None, **options: Any) -> list[ge.Tensor]:
    """npu_dequant_rope_quant_kvcache(Tensor x, Tensor cos, Tensor sin, Tensor k_cache, Tensor v_cache, Tensor indices, Tensor scale_k, Tensor scale_v, int[3] size_splits, *, Tensor? offset_k=None, Tensor? offset_v=None, Tensor? weight_scale=None, Tensor? activation_scale=None, Tensor? bias=None, int quant_mode=0, str input_layout="BSND", bool kv_output=False, str cache_mode="contiguous") -> (Tensor, Tensor, Tensor, Tensor, Tensor)"""
    extra = {n: options.get(n) for n in ("weight_scale", "activation_scale", "bias")}
    return _rope_quant_op(tuple(args[:8]), args[8], options, extra)
