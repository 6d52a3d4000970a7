"""The math of torch_npu's gated delta rule (Qwen3-Next's linear attention), on CPU, from
the operator's documentation: per token ``t`` of a sequence, with ``alpha = exp(g)``,

    S_t = alpha_t S_{t-1} + beta_t (v_t - alpha_t S_{t-1} k_t) k_t^T,    o_t = scale S_t q_t

``S`` is ``(Dv, Dk)`` per value head (value head ``h`` reads key head ``h / (Nv / Nk)``).
A sequence starts from ``state[ssm_state_indices[first + accepted - 1]]`` (``accepted``
is its ``num_accepted_tokens``, 1 without) and writes each token's state to
``state[ssm_state_indices[t]]``. Float32 math; the output is bfloat16, as the NPU's.

The causal convolutions (``npu_fused_causal_conv1d``, ``npu_masked_causal_conv1d``) have no
kernel here: their tensor layouts are not documented publicly enough to compute them.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.npu_attention_reference import as_lengths, unsupported
from fxlab.ir.kernels.npu_reference import no_cpu_kernel, cpu_kernel

UNDOCUMENTED = "its tensor layouts (x, weight, conv_states) are not documented publicly enough to compute it"


def _sequence(
    state: torch.Tensor, tokens: range, inputs: tuple[Any, ...], indices: list[int], start_slot: int, scale: float
) -> list[torch.Tensor]:
    query, key, value, beta, g = inputs
    s = state[start_slot].float()  # (Nv, Dv, Dk)
    per_key = value.shape[1] // key.shape[1]
    outs = []
    for t in tokens:
        q = query[t].float().repeat_interleave(per_key, 0)
        k = key[t].float().repeat_interleave(per_key, 0)
        alpha = torch.exp(g[t].float()).reshape(-1, 1, 1) if g is not None else 1.0
        s = alpha * s
        b = beta[t].float().reshape(-1, 1) if beta is not None else 1.0
        delta = b * (value[t].float() - torch.einsum("hvk,hk->hv", s, k))
        s = s + torch.einsum("hv,hk->hvk", delta, k)
        state[indices[t]] = s.to(state.dtype)
        outs.append(torch.einsum("hvk,hk->hv", s, q) * scale)
    return outs


def recurrent_gated_delta_rule_(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, state: torch.Tensor, **options: Any
) -> torch.Tensor:
    """The output ``(T, Nv, Dv)`` bf16; ``state`` written in place."""
    unsupported("npu_recurrent_gated_delta_rule", options, ("gk",))
    if options.get("scale") is None:
        raise NotImplementedError("npu_recurrent_gated_delta_rule: scale is required")
    lengths = as_lengths(options.get("actual_seq_lengths")) or [query.shape[0]]
    indices = as_lengths(options.get("ssm_state_indices")) or list(range(query.shape[0]))
    accepted = as_lengths(options.get("num_accepted_tokens")) or [1] * len(lengths)
    inputs = (query, key, value, options.get("beta"), options.get("g"))
    outs: list[torch.Tensor] = []
    start = 0
    with torch.no_grad():
        for length, first in zip(lengths, accepted):
            tokens = range(start, start + length)
            outs += _sequence(state, tokens, inputs, indices, indices[start + first - 1], float(options["scale"]))
            start += length
    return torch.stack(outs).to(torch.bfloat16)


@cpu_kernel("npu_recurrent_gated_delta_rule_functional")
def npu_recurrent_gated_delta_rule_functional(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, state: torch.Tensor, **options: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, the new state)."""
    new_state = state.clone()
    return recurrent_gated_delta_rule_(query, key, value, new_state, **options), new_state


for _name in ("npu_fused_causal_conv1d", "npu_masked_causal_conv1d"):
    cpu_kernel(_name)(no_cpu_kernel(_name, UNDOCUMENTED))
