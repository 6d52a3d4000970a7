"""Converters of torch_npu's sparse attention for DeepSeek-V3.2 (the lightning indexer and
the attention over the tokens it picks), as TorchAir makes them.

``npu_lightning_indexer`` → ``LightningIndexer``, ``npu_quant_lightning_indexer`` →
``QuantLightningIndexer``, ``npu_sparse_flash_attention`` → ``SparseFlashAttention``,
``npu_kv_quant_sparse_flash_attention`` → ``KvQuantSparseFlashAttention``: TorchAir makes
each as a custom op, a placeholder for every absent optional input (the sinks are left
out when absent) and every attr written. Its HiFloat8 bitcasts (``query_dtype`` /
``key_dtype`` / ``value_dtype``) view uint8 tensors as ``DT_HIFLOAT8``, and any other
dtype code there it refuses. The reference kernels are in
:mod:`fxlab.ir.kernels.npu_sparse_attention`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.ir.npu_dtypes import HIFLOAT8
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import bitcast
from fxlab.passes.converters.registry import Sample

INT64_MAX = 9223372036854775807


def _as_hifloat8(options: dict[str, Any], tensors: dict[str, ge.Tensor]) -> dict[str, ge.Tensor]:
    """``tensors`` (by argument name) with those whose ``<name>_dtype`` says hifloat8
    viewed as ``DT_HIFLOAT8`` (a ``Bitcast``), as TorchAir's converters do; another dtype
    value there TorchAir refuses."""
    for name in tensors:
        code = options.get(f"{name}_dtype")
        if code is not None and code != HIFLOAT8:
            raise RuntimeError(
                f"The {name}_dtype is only used to support hifloat8, and should be default when the dtype of {name} tensor is not hifloat8"
            )
    return {name: bitcast(t, DataType.DT_HIFLOAT8) if options.get(f"{name}_dtype") == HIFLOAT8 else t for name, t in tensors.items()}


def _band_attrs(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "layout_query": options.get("layout_query", "BSND"),
        "sparse_count": int(options.get("sparse_count", 2048)),
        "sparse_mode": int(options.get("sparse_mode", 3)),
        "pre_tokens": int(options.get("pre_tokens", INT64_MAX)),
        "next_tokens": int(options.get("next_tokens", INT64_MAX)),
    }


# -- the lightning indexer -----------------------------------------------------------------------
def _indexer_tensors() -> tuple[torch.Tensor, ...]:
    """Two batches of 3 query tokens (4 index heads of 8) against 6 keys (one head)."""
    bf16 = torch.bfloat16
    return torch.randn(2, 3, 4, 8).to(bf16), torch.randn(2, 6, 1, 8).to(bf16), torch.randn(2, 3, 4).to(bf16)


def _indexer_samples() -> list[Sample]:
    q, k, w = _indexer_tensors()
    lengths = {
        "actual_seq_lengths_query": torch.tensor([3, 2], dtype=torch.int32),
        "actual_seq_lengths_key": torch.tensor([6, 4], dtype=torch.int32),
    }
    return [
        Sample((q, k, w), {**lengths, "sparse_count": 4, "return_value": True}),
        Sample((q, k, w), {"sparse_count": 2, "sparse_mode": 0}),
    ]


def _indexer_inputs(options: dict[str, Any]) -> dict[str, Any]:
    return {n: options.get(n) for n in ("actual_seq_lengths_query", "actual_seq_lengths_key", "block_table")}


@npu_converter("npu_lightning_indexer.default", _indexer_samples)
def convert_lightning_indexer(
    query: ge.Tensor, key: ge.Tensor, weights: ge.Tensor, *, meta_outputs: Any = None, **options: Any
) -> list[ge.Tensor]:
    """npu_lightning_indexer(Tensor query, Tensor key, Tensor weights, *, Tensor? actual_seq_lengths_query=None, Tensor? actual_seq_lengths_key=None, Tensor? block_table=None, str layout_query="BSND", str layout_key="BSND", int sparse_count=2048, int sparse_mode=3, int pre_tokens=9223372036854775807, int next_tokens=9223372036854775807, bool return_value=False) -> (Tensor, Tensor)"""
    inputs = {"query": query, "key": key, "weights": weights, **_indexer_inputs(options)}
    band = _band_attrs(options)
    attrs = {"layout_query": band.pop("layout_query"), "layout_key": options.get("layout_key", "BSND"), **band}
    attrs["return_values"] = bool(options.get("return_value", False))
    return ge.op("LightningIndexer", inputs, attrs, outputs=("sparse_indices", "sparse_values"))


def _quant_indexer_samples() -> list[Sample]:
    q, k = torch.randint(-20, 20, (2, 3, 4, 8), dtype=torch.int8), torch.randint(-20, 20, (2, 6, 1, 8), dtype=torch.int8)
    weights = torch.randn(2, 3, 4).half()
    scales = (torch.rand(2, 3, 4).half() * 0.1, torch.rand(2, 6, 1).half() * 0.1)
    hif8 = {"query_dtype": HIFLOAT8, "key_dtype": HIFLOAT8}  # uint8 tensors holding hifloat8 values
    hif8_q, hif8_k = torch.randint(0, 255, (2, 3, 4, 8), dtype=torch.uint8), torch.randint(0, 255, (2, 6, 1, 8), dtype=torch.uint8)
    return [
        Sample((q, k, weights, *scales, 0, 0), {"sparse_count": 4, "sparse_mode": 3}),
        Sample((hif8_q, hif8_k, weights, *scales, 0, 0), {"sparse_count": 4, "sparse_mode": 3, **hif8}),
    ]


@npu_converter("npu_quant_lightning_indexer.default", _quant_indexer_samples)
def convert_quant_lightning_indexer(
    query: ge.Tensor,
    key: ge.Tensor,
    weights: ge.Tensor,
    query_dequant_scale: ge.Tensor,
    key_dequant_scale: ge.Tensor,
    query_quant_mode: int,
    key_quant_mode: int,
    *,
    meta_outputs: Any = None,
    **options: Any,
) -> ge.Tensor:
    """npu_quant_lightning_indexer(Tensor query, Tensor key, Tensor weights, Tensor query_dequant_scale, Tensor key_dequant_scale, int query_quant_mode, int key_quant_mode, *, ..., int? query_dtype=None, int? key_dtype=None) -> Tensor"""
    inputs = {
        **_as_hifloat8(options, {"query": query, "key": key}),
        "weights": weights,
        "query_dequant_scale": query_dequant_scale,
        "key_dequant_scale": key_dequant_scale,
    }
    inputs.update(_indexer_inputs(options))
    band = _band_attrs(options)
    attrs = {"query_quant_mode": int(query_quant_mode), "key_quant_mode": int(key_quant_mode), "layout_query": band.pop("layout_query")}
    attrs.update({"layout_key": options.get("layout_key", "BSND"), **band})
    return ge.op("QuantLightningIndexer", inputs, attrs, outputs=("sparse_indices",))[0]


# -- attention over the picked tokens --------------------------------------------------------------
def _sfa_samples() -> list[Sample]:
    """MLA decode: 2 batches of 1 token, 4 heads of 16 (+ rope 4) over an 8-token latent
    cache, 3 picked tokens each (-1 ends the list)."""
    bf16 = torch.bfloat16
    q, kv = torch.randn(2, 1, 4, 16).to(bf16), torch.randn(2, 8, 1, 16).to(bf16)
    indices = torch.tensor([[[[0, 5, 2]]], [[[7, 1, -1]]]], dtype=torch.int32)
    ropes = {"query_rope": torch.randn(2, 1, 4, 4).to(bf16), "key_rope": torch.randn(2, 8, 1, 4).to(bf16)}
    lengths = {
        "actual_seq_lengths_query": torch.tensor([1, 1], dtype=torch.int32),
        "actual_seq_lengths_kv": torch.tensor([8, 8], dtype=torch.int32),
    }
    return [
        Sample((q, kv, kv, indices, 0.25), {**ropes, **lengths, "return_softmax_lse": True}),
        Sample((q, kv, kv, indices, 0.25), {"sparse_mode": 0}),
    ]


@npu_converter("npu_sparse_flash_attention.default", _sfa_samples)
def convert_sparse_flash_attention(
    query: ge.Tensor,
    key: ge.Tensor,
    value: ge.Tensor | None,
    sparse_indices: ge.Tensor,
    scale_value: float,
    *,
    meta_outputs: Any = None,
    **options: Any,
) -> list[ge.Tensor]:
    """npu_sparse_flash_attention(Tensor query, Tensor key, Tensor? value, Tensor sparse_indices, float scale_value, *, Tensor? block_table=None, Tensor? actual_seq_lengths_query=None, Tensor? actual_seq_lengths_kv=None, Tensor? query_rope=None, Tensor? key_rope=None, int sparse_block_size=1, str layout_query="BSND", str layout_kv="BSND", int sparse_mode=3, int pre_tokens=9223372036854775807, int next_tokens=9223372036854775807, int attention_mode=0, bool return_softmax_lse=False, Tensor? sinks=None) -> (Tensor, Tensor, Tensor)"""
    inputs: dict[str, Any] = {"query": query, "key": key, "value": value, "sparse_indices": sparse_indices}
    inputs.update(
        {n: options.get(n) for n in ("block_table", "actual_seq_lengths_query", "actual_seq_lengths_kv", "query_rope", "key_rope")}
    )
    if options.get("sinks") is not None:
        inputs["sinks"] = options["sinks"]
    attrs = {**_sparse_attrs(scale_value, options), "return_softmax_lse": bool(options.get("return_softmax_lse", False))}
    return ge.op("SparseFlashAttention", inputs, attrs, outputs=("attention_out", "softmax_max", "softmax_sum"))


def _sparse_attrs(scale_value: float, options: dict[str, Any], *quant: tuple[str, int]) -> dict[str, Any]:
    attrs: dict[str, Any] = {"scale_value": float(scale_value), **dict(quant)}
    attrs.update(
        sparse_block_size=int(options.get("sparse_block_size", 1)),
        layout_query=options.get("layout_query", "BSND"),
        layout_kv=options.get("layout_kv", "BSND"),
        sparse_mode=int(options.get("sparse_mode", 3)),
        pre_tokens=int(options.get("pre_tokens", INT64_MAX)),
        next_tokens=int(options.get("next_tokens", INT64_MAX)),
        attention_mode=int(options.get("attention_mode", 0)),
    )
    return attrs


def _kv_quant_sfa_samples() -> list[Sample]:
    """An int8 latent cache (16) with its bf16 rope part (4) packed behind the scales."""
    bf16 = torch.bfloat16
    q = torch.randn(2, 1, 4, 20).to(bf16)
    kv = torch.randint(-100, 100, (2, 8, 1, 16), dtype=torch.int8)
    indices = torch.tensor([[[[0, 5, 2]]], [[[7, 1, -1]]]], dtype=torch.int32)
    scales = {"key_dequant_scale": torch.rand(2, 8, 1, 1) * 0.01, "value_dequant_scale": torch.rand(2, 8, 1, 1) * 0.01}
    return [Sample((q, kv, kv, indices, 0.25, 2, 2), {**scales, "rope_head_dim": 4, "sparse_mode": 0})]


@npu_converter("npu_kv_quant_sparse_flash_attention.default", _kv_quant_sfa_samples)
def convert_kv_quant_sparse_flash_attention(
    query: ge.Tensor,
    key: ge.Tensor,
    value: ge.Tensor,
    sparse_indices: ge.Tensor,
    scale_value: float,
    key_quant_mode: int,
    value_quant_mode: int,
    *,
    meta_outputs: Any = None,
    **options: Any,
) -> ge.Tensor:
    """npu_kv_quant_sparse_flash_attention(Tensor query, Tensor key, Tensor value, Tensor sparse_indices, float scale_value, int key_quant_mode, int value_quant_mode, *, Tensor? key_dequant_scale=None, Tensor? value_dequant_scale=None, ..., int quant_scale_repo_mode=1, int tile_size=128, int rope_head_dim=64, int? key_dtype=None, int? value_dtype=None) -> Tensor"""
    inputs: dict[str, Any] = {"query": query, **_as_hifloat8(options, {"key": key, "value": value}), "sparse_indices": sparse_indices}
    names = ("key_dequant_scale", "value_dequant_scale", "block_table", "actual_seq_lengths_query", "actual_seq_lengths_kv")
    inputs.update({n: options.get(n) for n in names})
    if options.get("sinks") is not None:
        inputs["sinks"] = options["sinks"]
    attrs = _sparse_attrs(scale_value, options, ("key_quant_mode", int(key_quant_mode)), ("value_quant_mode", int(value_quant_mode)))
    attrs.update(
        quant_scale_repo_mode=int(options.get("quant_scale_repo_mode", 1)),
        tile_size=int(options.get("tile_size", 128)),
        rope_head_dim=int(options.get("rope_head_dim", 64)),
    )
    return ge.op("KvQuantSparseFlashAttention", inputs, attrs, outputs=("attention_out",))[0]
