"""torch_npu's communication-fused operators on one rank."""

from __future__ import annotations

import pytest
import torch

from fxlab.ir.kernels import npu_comm_reference as ref


def test_one_rank_collectives_are_the_rank_own_matmul():
    x1, x2, bias = torch.randn(4, 8), torch.randn(8, 3), torch.randn(3)
    y, gathered = ref.all_gather_mm(x1, x2, 1, {"bias": bias}, torch.float32)
    torch.testing.assert_close(y, x1 @ x2 + bias)
    torch.testing.assert_close(gathered, x1)
    with pytest.raises(NotImplementedError, match="over 2 ranks needs the other ranks' data"):
        ref.all_gather_mm(x1, x2, 2, {}, torch.float32)


def test_dispatch_then_combine_gives_each_token_its_weighted_experts():
    x = torch.randn(4, 6)
    expert_ids = torch.tensor([[0, 2], [1, 2], [3, 0], [2, 1]], dtype=torch.int32)
    scales = torch.rand(4, 2)
    shapes = ((8, 6), (8,), (8,), (4,), (4,), (0,), (8,))
    expand_x, _, expand_idx, counts, ends, _, _ = ref.moe_dispatch(x, expert_ids, 4, {}, shapes)
    assert counts.tolist() == [2, 2, 3, 1] and ends.tolist() == [2, 4, 7, 8]
    assert expand_idx.tolist() == [0, 0, 0, 1, 0, 1, 2, 1]
    torch.testing.assert_close(expand_x[4:7], x[[0, 1, 3]])  # expert 2's tokens, in token order
    experts = [torch.randn(6, 6) for _ in range(4)]
    processed = torch.cat([expand_x[s:e] @ experts[i] for i, (s, e) in enumerate(zip([0, 2, 4, 7], [2, 4, 7, 8]))])
    combined = ref.moe_combine(processed, expert_ids, expand_idx, ends, scales)
    expected = torch.stack([sum(scales[t, j] * (x[t] @ experts[int(expert_ids[t, j])]) for j in range(2)) for t in range(4)])
    torch.testing.assert_close(combined, expected)
