"""Kernels of the GE ops TorchAir makes for torch_npu's MLA prologs (``MlaProlog``,
``MlaPrologV2``, ``MlaPrologV3``), on the math of :mod:`fxlab.ir.kernels.npu_mla_reference`.
The caches (ref inputs) are written in place and returned; the quantisation and reserved
outputs are zeros of the shapes the op's output descs give.
"""

from __future__ import annotations

from typing import Any


from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.kernels import npu_mla_reference as ref
from fxlab.ir.kernels.npu_io import zeros_of
from fxlab.ir.model import IrOp

WEIGHTS = (
    "token_x",
    "weight_dq",
    "weight_uq_qr",
    "weight_uk",
    "weight_dkv_kr",
    "rmsnorm_gamma_cq",
    "rmsnorm_gamma_ckv",
    "rope_sin",
    "rope_cos",
)


def _options(named: dict[str, Any], attrs: dict[str, Any]) -> dict[str, Any]:
    return {**{k: v for k, v in named.items() if k in ref.QUANT_INPUTS}, **attrs}


@register_kernel("MlaProlog", "MlaPrologV2")
def mla_prolog(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    tensors = tuple(n[k] for k in WEIGHTS)
    query, query_rope, _ = ref.mla_prolog_(tensors, n["kv_cache"], n["kr_cache"], n["cache_index"], _options(n, attrs))
    outs = [query, query_rope, n["kv_cache"], n["kr_cache"]]
    return outs + [zeros_of(op, 4)] if op.type == "MlaPrologV2" else outs


@register_kernel("MlaPrologV3")
def mla_prolog_v3(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """(query, query_rope, kv_cache, kr_cache, dequant_scale_q_nope, query_norm, dequant_scale_q_norm)."""
    n = named_inputs(op, inputs)
    tensors = tuple(n[k] for k in WEIGHTS)
    query, query_rope, c_q = ref.mla_prolog_(tensors, n["kv_cache"], n["kr_cache"], n.get("cache_index"), _options(n, attrs))
    query_norm = c_q.reshape(op.output_desc[5].shape) if attrs.get("query_norm_flag") else zeros_of(op, 5)
    return [query, query_rope, n["kv_cache"], n["kr_cache"], zeros_of(op, 4), query_norm, zeros_of(op, 6)]
