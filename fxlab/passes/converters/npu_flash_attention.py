"""Converters of torch_npu's training flash attention, as TorchAir makes them.

``npu_fusion_attention`` → ``FlashAttentionScore`` and ``npu_fusion_attention_grad`` →
``FlashAttentionScoreGrad``, for the BSH and BNSD layouts without dropout (TorchAir
refuses the others; its gradient converter fails on every sample, one output short). TorchAir passes neither the position bias ``pse`` (its inputs are
``real_shift=None``, ``pse_shift=None``) nor the dropout mask; the start indices are
Python 0s its wrapper makes int64 ``Const`` ops, the optional length lists int64
``Const`` ops. The reference kernels are in :mod:`fxlab.ir.kernels.npu_attention`.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.kernels.npu_flash_attention_reference import FORWARD_OPTIONS
from fxlab.ir.model import DataType
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import int64_input
from fxlab.passes.converters.registry import Sample

INT32_MAX = 2147483647


def _check(op: str, input_layout: str, keep_prob: float) -> None:
    if input_layout not in ("BSH", "BNSD") or not math.isclose(keep_prob, 1.0, rel_tol=1e-9):
        raise NotImplementedError(
            f"torch.ops.npu.{op}.default ge_converter is not implemented when input_layout != BSH & BNSD or keep_prob != 1.0 !"
        )


def _shared(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "padding_mask": options.get("padding_mask"),
        "atten_mask": options.get("atten_mask"),
    }


def _tail(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "prefix": int64_input(options.get("prefix")),
        "actual_seq_qlen": int64_input(options.get("actual_seq_qlen")),
        "actual_seq_kvlen": int64_input(options.get("actual_seq_kvlen")),
        "q_start_idx": ge.const(0, DataType.DT_INT64),
        "kv_start_idx": ge.const(0, DataType.DT_INT64),
    }


def _attrs(head_num: int, input_layout: str, scale: float, options: dict[str, Any]) -> dict[str, Any]:
    return {
        "scale_value": float(scale),
        "keep_prob": float(options.get("keep_prob", 1.0)),
        "pre_tockens": int(options.get("pre_tockens", INT32_MAX)),
        "next_tockens": int(options.get("next_tockens", INT32_MAX)),
        "head_num": int(head_num),
        "input_layout": input_layout,
        "inner_precise": int(options.get("inner_precise", 0)),
        "sparse_mode": int(options.get("sparse_mode", 0)),
    }


def _fa_samples() -> list[Sample]:
    half = torch.float16
    q, k, v = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8)
    causal = torch.ones(4, 4, dtype=torch.bool).triu(1)
    return [
        Sample((q, k, v, 2, "BNSD"), {"atten_mask": causal, "scale": 0.35}),
        Sample((torch.randn(1, 3, 16), torch.randn(1, 3, 16), torch.randn(1, 3, 16), 2, "BSH")),
        Sample(
            (torch.randn(2, 5, 32).to(half), torch.randn(2, 5, 16).to(half), torch.randn(2, 5, 16).to(half), 4, "BSH"),
            {"atten_mask": torch.ones(2048, 2048, dtype=torch.bool).triu(1), "sparse_mode": 2, "scale": 0.25},
        ),
    ]


@npu_converter("npu_fusion_attention.default", _fa_samples)
def convert_fusion_attention(
    query: ge.Tensor,
    key: ge.Tensor,
    value: ge.Tensor,
    head_num: int,
    input_layout: str,
    *args: Any,
    meta_outputs: Any = None,
    **kwargs: Any,
) -> tuple[Any, ...]:
    """npu_fusion_attention(Tensor query, Tensor key, Tensor value, int head_num, str input_layout, Tensor? pse=None, ...) -> (Tensor, Tensor, Tensor, Tensor, int, int, int)"""
    options = {**dict(zip(FORWARD_OPTIONS, args)), **kwargs}
    _check("npu_fusion_attention", input_layout, float(options.get("keep_prob", 1.0)))
    inputs = {"query": query, "key": key, "value": value, "real_shift": None, "drop_mask": None, **_shared(options), **_tail(options)}
    attrs = _attrs(head_num, input_layout, options.get("scale", 1.0), options)
    outputs = ("softmax_max", "softmax_sum", "softmax_out", "attention_out")
    softmax_max, softmax_sum, softmax_out, attention_out = ge.op("FlashAttentionScore", inputs, attrs, outputs=outputs)
    # No dropout: the seed, offset and count TorchAir returns are Python 0s.
    return attention_out, softmax_max, softmax_sum, softmax_out, 0, 0, 0


def _fa_grad_samples() -> list[Sample]:
    q, k, v, dy = (torch.randn(1, 2, 4, 8) for _ in range(4))
    causal = torch.ones(4, 4, dtype=torch.bool).triu(1)
    return [
        Sample((q, k, v, dy, 2, "BNSD"), {"atten_mask": causal, "scale_value": 0.35}),
        Sample((torch.randn(2, 3, 16), torch.randn(2, 3, 8), torch.randn(2, 3, 8), torch.randn(2, 3, 16), 2, "BSH")),
    ]


@npu_converter("npu_fusion_attention_grad.default", _fa_grad_samples)
def convert_fusion_attention_grad(
    query: ge.Tensor,
    key: ge.Tensor,
    value: ge.Tensor,
    dy: ge.Tensor,
    head_num: int,
    input_layout: str,
    *,
    meta_outputs: Any = None,
    **options: Any,
) -> list[ge.Tensor]:
    """npu_fusion_attention_grad(Tensor query, Tensor key, Tensor value, Tensor dy, int head_num, str input_layout, *, Tensor? pse=None, Tensor? padding_mask=None, Tensor? atten_mask=None, Tensor? softmax_max=None, ...) -> (Tensor, Tensor, Tensor, Tensor, Tensor)"""
    _check("npu_fusion_attention_grad", input_layout, float(options.get("keep_prob", 1.0)))
    stats = {n: options.get(n) for n in ("softmax_max", "softmax_sum", "softmax_in", "attention_in")}
    inputs = {"query": query, "key": key, "value": value, "dy": dy, "pse_shift": None, "drop_mask": None}
    inputs.update({**_shared(options), **stats, **_tail(options)})
    attrs = _attrs(head_num, input_layout, options.get("scale_value", 1.0), options)
    grads = ge.op("FlashAttentionScoreGrad", inputs, attrs, outputs=("dq", "dk", "dv", "dpse"))
    # TorchAir stops here, one output short of the schema's five, and fails (see
    # torchair_refusals.FAILS_WHEN_RUN); converting it anyway, dsink is empty (no sink).
    return [*grads, ge.const(torch.empty(0))]
