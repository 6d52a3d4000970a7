"""Kernels of the GE ops TorchAir makes for torch_npu's attention operators
(``FusedInferAttentionScore``, ``IncreFlashAttention``, ``PromptFlashAttention``,
``FlashAttentionScore``, ``FlashAttentionScoreGrad``), on the math of
:mod:`fxlab.ir.kernels.npu_attention_reference` and
:mod:`fxlab.ir.kernels.npu_flash_attention_reference`, read from the ops' input names
and attrs.
"""

from __future__ import annotations

from typing import Any

from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.kernels import npu_attention_parts_reference as parts
from fxlab.ir.kernels import npu_attention_reference as ref
from fxlab.ir.kernels import npu_flash_attention_reference as flash
from fxlab.ir.model import IrOp


@register_kernel("FusedInferAttentionScore")
def fused_infer_attention_score(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return list(ref.fused_infer_attention(named_inputs(op, inputs), attrs))


@register_kernel("IncreFlashAttention")
def incre_flash_attention(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [ref.incre_flash_attention(named_inputs(op, inputs), attrs)]


@register_kernel("PromptFlashAttention")
def prompt_flash_attention(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [ref.prompt_flash_attention(named_inputs(op, inputs), attrs)]


def _flash_options(named: dict[str, Any], attrs: dict[str, Any]) -> dict[str, Any]:
    if named.get("drop_mask") is not None:
        raise NotImplementedError("FlashAttentionScore: a dropout mask has no CPU reference kernel")
    pse = named.get("real_shift", named.get("pse_shift"))
    options = {k: named.get(k) for k in ("padding_mask", "atten_mask", "prefix", "actual_seq_qlen", "actual_seq_kvlen")}
    options.update(pse=pse, scale=attrs.get("scale_value", 1.0))
    options.update({k: attrs[k] for k in ("keep_prob", "pre_tockens", "next_tockens", "sparse_mode") if k in attrs})
    return options


@register_kernel("FlashAttentionScore")
def flash_attention_score(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """(softmax_max, softmax_sum, softmax_out (empty), attention_out)."""
    named = named_inputs(op, inputs)
    query = named["query"]
    out, row_max, row_sum = flash.flash_attention(
        query, named["key"], named["value"], attrs["head_num"], attrs["input_layout"], _flash_options(named, attrs)
    )
    return [row_max, row_sum, query.new_empty(0), out]


@register_kernel("FlashAttentionScoreGrad")
def flash_attention_score_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """(dq, dk, dv, dpse), recomputed from query, key and value."""
    named = named_inputs(op, inputs)
    grads = flash.flash_attention_grad(
        named["query"], named["key"], named["value"], named["dy"], attrs["head_num"], attrs["input_layout"], _flash_options(named, attrs)
    )
    return list(grads)


@register_kernel("AttentionUpdate")
def attention_update(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Inputs ``lse0..`` then ``go0..``, ``sp`` of each."""
    sp = int(attrs["sp"])
    return list(parts.attention_update(inputs[:sp], inputs[sp : 2 * sp], attrs["update_type"]))


@register_kernel("MaskedSoftmaxWithRelPosBias")
def masked_softmax_with_rel_pos_bias(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    scale = float(attrs.get("scale_value", 1.0))
    return [parts.masked_softmax_with_rel_pos_bias(n["x"], n.get("atten_mask"), n["relative_pos_bias"], scale)]
