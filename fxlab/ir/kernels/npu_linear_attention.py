"""Kernel of ``RecurrentGatedDeltaRule`` (TorchAir's GE op for torch_npu's gated delta
rule), on the math of :mod:`fxlab.ir.kernels.npu_linear_attention_reference`: the state
(a ref input) is written in place and returned with the output.
"""

from __future__ import annotations

from typing import Any

from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.kernels import npu_linear_attention_reference as ref
from fxlab.ir.model import IrOp


@register_kernel("RecurrentGatedDeltaRule")
def recurrent_gated_delta_rule(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    names = ("beta", "actual_seq_lengths", "ssm_state_indices", "num_accepted_tokens", "g", "gk")
    options = {k: n.get(k) for k in names}
    out = ref.recurrent_gated_delta_rule_(n["query"], n["key"], n["value"], n["state"], scale=attrs.get("scale_value", 1.0), **options)
    return [out, n["state"]]
