"""The math of torch_npu's training flash attention (``npu_fusion_attention`` and its
gradient, GE's ``FlashAttentionScore`` and ``FlashAttentionScoreGrad``), on CPU.

The forward is the attention of :mod:`npu_attention_reference` with the training op's
conventions: the position bias is added before the scale (``scale * (q k^T + pse)``),
``TND`` batches are cut by the cumulative ``actual_seq_qlen``/``actual_seq_kvlen``, and
the softmax statistics are returned as the NPU keeps them for the backward: the row max
and the row sum of ``exp(score - max)``, each repeated eight times in the last dim
(``(B, N, S, 8)``, ``(T, N, 8)`` for TND). The gradient is recomputed from the inputs
(what the statistics stand for) by autograd in float32. Dropout (``keep_prob`` below 1)
draws the device's random numbers and has no kernel here.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from fxlab.ir.kernels.npu_attention_reference import (
    INT32_MAX,
    PACKED_LAYOUTS,
    AttentionOptions,
    AttentionTensors,
    as_lengths,
    attention_parts,
    merge_heads,
    unsupported,
)
from fxlab.ir.kernels.npu_reference import cpu_kernel

STATS_REPEAT = 8  # the NPU keeps each row's softmax max and sum eight times
FORWARD_OPTIONS = (
    "pse",
    "padding_mask",
    "atten_mask",
    "scale",
    "keep_prob",
    "pre_tockens",
    "next_tockens",
    "inner_precise",
    "prefix",
    "actual_seq_qlen",
    "actual_seq_kvlen",
    "sparse_mode",
)


def kv_heads_of(query: torch.Tensor, key: torch.Tensor, layout: str, heads: int) -> int:
    """The key's head count, from its shape in ``layout``."""
    if layout in ("BSH", "SBH"):
        return key.shape[-1] // (query.shape[-1] // heads)
    if layout in PACKED_LAYOUTS:
        return key.shape[1] if layout == "TND" else key.shape[0]
    return key.shape[1] if layout == "BNSD" else key.shape[2]


def _check(op: str, options: dict[str, Any]) -> None:
    unsupported(op, options, ("padding_mask", "prefix", "sink", "dropout_mask"))
    if not math.isclose(float(options.get("keep_prob", 1.0)), 1.0, rel_tol=1e-9):
        raise NotImplementedError(f"{op}: dropout (keep_prob below 1) draws the device's random numbers and has no CPU reference kernel")


def _inputs(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, heads: int, layout: str, options: dict[str, Any]) -> Any:
    scale = float(options.get("scale", options.get("scale_value", 1.0)))
    pse = options.get("pse")
    tensors = AttentionTensors(
        query=q,
        key=k,
        value=v,
        atten_mask=options.get("atten_mask"),
        pse_shift=pse.float() * scale if pse is not None else None,
        actual_seq_lengths=as_lengths(options.get("actual_seq_qlen")),
        actual_seq_lengths_kv=as_lengths(options.get("actual_seq_kvlen")),
    )
    attention = AttentionOptions(
        input_layout=layout,
        num_heads=int(heads),
        num_key_value_heads=kv_heads_of(q, k, layout, int(heads)),
        scale=scale,
        sparse_mode=int(options.get("sparse_mode", 0)),
        pre_tokens=int(options.get("pre_tockens", INT32_MAX)),
        next_tokens=int(options.get("next_tockens", INT32_MAX)),
    )
    return tensors, attention


def _stats(parts: list[torch.Tensor], layout: str) -> torch.Tensor:
    rows = merge_heads([p.unsqueeze(-1) for p in parts], "TND" if layout in PACKED_LAYOUTS else "BNSD")
    return rows.expand(*rows.shape[:-1], STATS_REPEAT).contiguous()


def flash_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, head_num: int, input_layout: str, options: dict[str, Any]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(attention_out, softmax_max, softmax_sum)."""
    _check("npu_fusion_attention", options)
    tensors, attention = _inputs(query, key, value, head_num, input_layout, options)
    outs, maxes, sums = attention_parts(tensors, attention)
    out = merge_heads(outs, input_layout).to(query.dtype).contiguous()
    return out, _stats(maxes, input_layout), _stats(sums, input_layout)


@cpu_kernel("npu_fusion_attention")
def npu_fusion_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, head_num: int, input_layout: str, *args: Any, **kwargs: Any
) -> tuple[Any, ...]:
    """``npu_fusion_attention``: (attention_out, softmax_max, softmax_sum, softmax_out (empty),
    seed, offset, numels (0: no dropout))."""
    options = {**dict(zip(FORWARD_OPTIONS, args)), **kwargs}
    out, row_max, row_sum = flash_attention(query, key, value, head_num, input_layout, options)
    return out, row_max, row_sum, query.new_empty(0), 0, 0, 0


def flash_attention_grad(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    dy: torch.Tensor,
    head_num: int,
    input_layout: str,
    options: dict[str, Any],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dq, dk, dv, dpse): the attention recomputed in float32 and differentiated; dpse is
    empty without a position bias."""
    _check("npu_fusion_attention_grad", options)
    leaves = [t.detach().float().requires_grad_() for t in (query, key, value)]
    pse = options.get("pse")
    pse_leaf = pse.detach().float().requires_grad_() if pse is not None else None
    with torch.enable_grad():
        q, k, v = leaves
        tensors, attention = _inputs(q, k, v, head_num, input_layout, {**options, "pse": pse_leaf})
        out = merge_heads(attention_parts(tensors, attention)[0], input_layout)
        wrt = [*leaves, pse_leaf] if pse_leaf is not None else leaves
        grads = torch.autograd.grad(out, wrt, dy.float())
    dq, dk, dv = (g.to(query.dtype) for g in grads[:3])
    dpse = grads[3].to(pse.dtype) if pse is not None else query.new_empty(0)
    return dq, dk, dv, dpse


@cpu_kernel("npu_fusion_attention_grad")
def npu_fusion_attention_grad(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, dy: torch.Tensor, head_num: int, input_layout: str, **options: Any
) -> tuple[torch.Tensor, ...]:
    """``npu_fusion_attention_grad``: (dq, dk, dv, dpse, dsink (empty without a sink))."""
    return (*flash_attention_grad(query, key, value, dy, head_num, input_layout, options), query.new_empty(0))
