"""torch_npu's recurrent gated delta rule, against its documented recurrence."""

from __future__ import annotations

import torch

from fxlab.ir.kernels import npu_linear_attention_reference as ref


def test_delta_rule_follows_the_recurrence_and_writes_each_tokens_state():
    torch.manual_seed(0)
    q, k = torch.nn.functional.normalize(torch.randn(2, 1, 4), dim=-1), torch.nn.functional.normalize(torch.randn(2, 1, 4), dim=-1)
    v, state = torch.randn(2, 2, 4), torch.randn(3, 2, 4, 4)
    beta, g = torch.rand(2, 2), -torch.rand(2, 2)
    out, new_state = ref.npu_recurrent_gated_delta_rule_functional(
        q, k, v, state, beta=beta, g=g, scale=0.5, actual_seq_lengths=torch.tensor([2]), ssm_state_indices=torch.tensor([2, 0])
    )
    s = state[2].clone()
    for t, slot in enumerate([2, 0]):
        alpha = torch.exp(g[t]).reshape(2, 1, 1)
        kt = k[t].expand(2, -1)
        s = alpha * s + beta[t].reshape(2, 1, 1) * torch.einsum("hv,hk->hvk", v[t] - torch.einsum("hvk,hk->hv", alpha * s, kt), kt)
        torch.testing.assert_close(new_state[slot], s.to(state.dtype))
        torch.testing.assert_close(out[t].float(), (torch.einsum("hvk,hk->hv", s, q[t].expand(2, -1)) * 0.5).to(torch.bfloat16).float())
