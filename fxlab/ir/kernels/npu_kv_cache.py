"""Kernels of the GE ops TorchAir makes for torch_npu's fused KV-cache writes
(``ScatterPaKvCache``, ``KvRmsNormRopeCache``, ``QkvRmsNormRopeCache``,
``DequantRopeQuantKvcache``), on the math of :mod:`fxlab.ir.kernels.npu_kv_cache_reference`.
Each writes its cache inputs in place (they are its ref inputs, named as its outputs) and
returns them, as GE does.
"""

from __future__ import annotations

from typing import Any

from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.kernels import npu_kv_cache_reference as ref
from fxlab.ir.model import IrOp

QKV_INPUTS = ("qkv", "q_gamma", "k_gamma", "cos", "sin", "index", "q_out", "k_cache", "v_cache")
ROPE_QUANT_INPUTS = ("x", "cos", "sin", "k_cache", "v_cache", "indices", "scale_k", "scale_v")


@register_kernel("ScatterPaKvCache")
def scatter_pa_kv_cache(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options = {"cache_mode": attrs.get("cache_mode", "Norm"), "compress_lens": n.get("compress_lens"), "seq_lens": n.get("seq_lens")}
    options["compress_seq_offsets"] = n.get("compress_seq_offset")
    return list(ref.scatter_pa_kv_cache_(n["key"], n["value"], n["key_cache"], n["value_cache"], n["slot_mapping"], **options))


@register_kernel("KvRmsNormRopeCache")
def kv_rmsnorm_rope_cache(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    tensors: list[Any] = [n[k] for k in ("kv", "gamma", "cos", "sin", "index", "k_cache", "ckv_cache")]
    options: dict[str, Any] = {k: n.get(k) for k in ("k_rope_scale", "c_kv_scale", "k_rope_offset", "c_kv_offset", "v")}
    options.update(epsilon=attrs.get("epsilon", 1e-5), cache_mode=attrs.get("cache_mode", "Norm"))
    return list(ref.kv_rmsnorm_rope_cache_(*tensors, **options))


@register_kernel("QkvRmsNormRopeCache")
def qkv_rms_norm_rope_cache(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    qkv, q_gamma, k_gamma, cos, sin, index, q_out, k_cache, v_cache = (n[k] for k in QKV_INPUTS)
    options: dict[str, Any] = {k: n.get(k) for k in ("k_scale", "v_scale", "k_offset", "v_offset")}
    options.update({k: attrs[k] for k in ("epsilon", "cache_mode", "is_output_qkv") if k in attrs})
    return list(
        ref.qkv_rms_norm_rope_cache_(
            qkv, q_gamma, k_gamma, cos, sin, index, q_out, k_cache, v_cache, attrs["qkv_size"], attrs["head_nums"], **options
        )
    )


@register_kernel("DequantRopeQuantKvcache")
def dequant_rope_quant_kvcache(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """The op has no cache_mode attr (TorchAir does not pass it on): caches are contiguous."""
    n = named_inputs(op, inputs)
    x, cos, sin, k_cache, v_cache, indices, scale_k, scale_v = (n[k] for k in ROPE_QUANT_INPUTS)
    options: dict[str, Any] = {k: n.get(k) for k in ("offset_k", "offset_v", "weight_scale", "activation_scale", "bias")}
    options.update(quant_mode=attrs.get("quant_mode", "static"), kv_output=attrs.get("kv_output", False))
    return list(ref.dequant_rope_quant_kvcache_(x, cos, sin, k_cache, v_cache, indices, scale_k, scale_v, attrs["size_splits"], **options))
