"""The CPU reference math of torch_npu's grouped matmul against per-group matmuls."""

from __future__ import annotations

import torch

from fxlab.ir.kernels import npu_grouped_matmul_reference as ref


def test_grouped_matmul_splits_rows_by_group_list():
    x, w = torch.randn(5, 3), torch.randn(2, 3, 4)
    out = ref.grouped_matmul([x], [w], group_list=torch.tensor([2, 5]), split_item=2, group_type=0)
    torch.testing.assert_close(out[0], torch.cat([x[:2] @ w[0], x[2:] @ w[1]]))
    counts = ref.grouped_matmul([x], [w], group_list=torch.tensor([2, 3]), group_list_type=1, split_item=0, group_type=0)
    torch.testing.assert_close(counts, [x[:2] @ w[0], x[2:] @ w[1]])


def test_grouped_matmul_pairs_lists_of_x_and_weight():
    xs, ws, bs = [torch.randn(2, 3), torch.randn(4, 3)], [torch.randn(3, 5), torch.randn(3, 5)], [torch.randn(5), torch.randn(5)]
    out = ref.grouped_matmul(xs, ws, bias=bs)
    torch.testing.assert_close(out, [x @ w + b for x, w, b in zip(xs, ws, bs)])
