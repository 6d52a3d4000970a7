"""The CPU reference math of torch_npu's MoE routing operators: routing a few tokens by
hand and checking every output."""

from __future__ import annotations

import torch

from fxlab.ir.kernels import npu_moe_reference as ref


def test_gating_top_k_softmax_and_row_ids():
    x = torch.randn(5, 6)
    y, experts, rows = ref.moe_gating_top_k_softmax(x, None, 2)
    values, indices = torch.softmax(x, -1).topk(2)
    torch.testing.assert_close(y, values)
    assert experts.tolist() == indices.tolist() and experts.dtype == torch.int32
    assert rows.tolist() == [[i, i + 5] for i in range(5)]
    _, finished_experts, _ = ref.moe_gating_top_k_softmax(x, torch.tensor([False, True, False, False, False]), 2)
    assert finished_experts[1].tolist() == [6, 6]


def test_gating_top_k_chooses_within_the_best_groups():
    x = torch.tensor([[5.0, 4.0, -9.0, -9.0, 0.0, 3.0, -9.0, -9.0]])
    weights, experts, scores = ref.moe_gating_top_k(x, 2, k_group=1, group_count=4, norm_type=1, out_flag=True)
    # group 0 (experts 0, 1) has the best expert: both choices come from it
    assert experts.tolist() == [[0, 1]]
    chosen = torch.sigmoid(x)[0, :2]
    torch.testing.assert_close(weights[0], chosen / chosen.sum())
    torch.testing.assert_close(scores, torch.sigmoid(x))


def _route(x: torch.Tensor, expert_idx: torch.Tensor):
    rows, k = expert_idx.shape
    row_idx = torch.arange(rows * k, dtype=torch.int32).reshape(k, rows).t()
    return ref.moe_init_routing(x, row_idx, expert_idx, rows)


def test_init_routing_then_finalize_routing_restores_each_token():
    x = torch.arange(4.0).unsqueeze(-1).expand(4, 3).contiguous()
    expert_idx = torch.tensor([[1, 0], [0, 2], [2, 1], [0, 1]], dtype=torch.int32)
    expanded_x, expanded_row_idx, expanded_experts = _route(x, expert_idx)
    assert expanded_experts.tolist() == [0, 0, 0, 1, 1, 1, 2, 2]
    # tokens of expert 0 in token order: 0 (choice 1), 1, 3
    assert expanded_x[:3, 0].tolist() == [0.0, 1.0, 3.0]
    tokens = ref.moe_compute_expert_tokens(expanded_experts, 3)
    assert tokens.tolist() == [3, 6, 8]
    scales = torch.tensor([[0.25, 0.75]] * 4)
    out = ref.moe_finalize_routing(expanded_x, None, None, None, scales, expanded_row_idx, expert_idx, 0, 2)
    torch.testing.assert_close(out, x)


def test_init_routing_v2_counts_drops_and_quantises():
    x = torch.randn(4, 8)
    expert_idx = torch.tensor([[1, 0], [0, 2], [2, 1], [0, 3]], dtype=torch.int32)
    expanded, row_idx, counts, scales = ref.moe_init_routing_v2(
        x, expert_idx, expert_num=4, active_expert_range=[0, 3], expert_tokens_num_flag=True, expert_tokens_num_type=1
    )
    assert counts.tolist() == [3, 2, 2]  # expert 3 is outside the active range
    assert row_idx[7].item() == -1 and sorted(row_idx.tolist())[1:] == list(range(7))
    torch.testing.assert_close(expanded[:3], x[[0, 1, 3]])
    assert expanded.shape == (8, 8) and scales.shape == (8,)
    quantised, _, cumulative, row_scales = ref.moe_init_routing_v2(
        x, expert_idx, expert_num=4, active_expert_range=[0, 4], quant_mode=1, expert_tokens_num_flag=True
    )
    assert quantised.dtype == torch.int8 and cumulative.tolist() == [3, 5, 7, 8]
    torch.testing.assert_close(row_scales[0], x[0].abs().max() / 127)


def test_re_routing_groups_tokens_by_expert_across_ranks():
    counts = torch.tensor([[2, 1], [1, 1]], dtype=torch.int32)  # rank 0 sent 2 tokens to expert 0, 1 to expert 1
    tokens = torch.arange(5.0).unsqueeze(-1)
    permuted, _, index, per_expert = ref.moe_re_routing(tokens, counts)
    assert index.tolist() == [0, 1, 3, 2, 4] and per_expert.tolist() == [3, 2]
    assert permuted.squeeze(-1).tolist() == [0.0, 1.0, 3.0, 2.0, 4.0]


def test_update_expert_maps_each_expert_to_an_instance():
    table = torch.tensor([[1, 5, -1], [2, 1, 7]], dtype=torch.int32)
    ids, mask = ref.moe_update_expert(torch.tensor([[0, 1]], dtype=torch.int32), table, local_rank_id=3, world_size=4)
    # expert 1 has two instances: ranks 0-1 take the first, ranks 2-3 the second
    assert ids.tolist() == [[5, 7]] and mask.all()
