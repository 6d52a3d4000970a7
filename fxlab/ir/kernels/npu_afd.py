"""Kernel of ``FFN`` (TorchAir's GE op for ``npu_ffn``), on the math of
:mod:`fxlab.ir.kernels.npu_afd_reference`. The attention-FFN disaggregation ops
(``AttentionToFFN``, ``FFNToAttention``, the worker schedulers and batching) have none:
they work on a schedule context the attention and FFN ranks share on the device.
"""

from __future__ import annotations

from typing import Any

from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.kernels import npu_afd_reference as ref
from fxlab.ir.model import IrOp


@register_kernel("FFN")
def ffn(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    counts = ref.counts_from(n.get("expert_tokens"), bool(attrs.get("tokens_index_flag", False)))
    options = {k: v for k, v in n.items() if k not in ("x", "weight1", "weight2", "expert_tokens")}
    return [ref.ffn(n["x"], n["weight1"], n["weight2"], attrs["activation"], counts, options)]
