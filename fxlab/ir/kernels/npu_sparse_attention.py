"""Kernels of the GE ops TorchAir makes for torch_npu's sparse attention
(``LightningIndexer``, ``QuantLightningIndexer``, ``SparseFlashAttention``), on the math
of :mod:`fxlab.ir.kernels.npu_sparse_attention_reference`. ``KvQuantSparseFlashAttention``
(an int8 latent cache with its dequant scales and rope part packed per tile) has none.
"""

from __future__ import annotations

from typing import Any

from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.kernels import npu_sparse_attention_reference as ref
from fxlab.ir.model import IrOp

INDEXER_OPTIONS = ("actual_seq_lengths_query", "actual_seq_lengths_key", "block_table")


@register_kernel("LightningIndexer")
def lightning_indexer(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options = {**{k: n.get(k) for k in INDEXER_OPTIONS}, **attrs, "return_value": attrs.get("return_values", False)}
    return list(ref.lightning_indexer(n["query"], n["key"], n["weights"], **options))


@register_kernel("QuantLightningIndexer")
def quant_lightning_indexer(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options = {**{k: n.get(k) for k in INDEXER_OPTIONS}, **attrs}
    modes = (options.pop("query_quant_mode"), options.pop("key_quant_mode"))
    scales = (n["query_dequant_scale"], n["key_dequant_scale"])
    return [ref.quant_lightning_indexer(n["query"], n["key"], n["weights"], *scales, *modes, **options)]


@register_kernel("SparseFlashAttention")
def sparse_flash_attention(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    names = ("block_table", "actual_seq_lengths_query", "actual_seq_lengths_kv", "query_rope", "key_rope", "sinks")
    options = {**{k: n.get(k) for k in names}, **attrs}
    scale = options.pop("scale_value")
    return list(ref.sparse_flash_attention(n["query"], n["key"], n.get("value"), n["sparse_indices"], scale, **options))
