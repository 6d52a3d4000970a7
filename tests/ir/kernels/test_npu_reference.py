"""The CPU reference math of torch_npu's common operators, against torch's own ops."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from fxlab.ir.kernels import npu_reference as ref


def test_rms_norm_and_add_rms_norm():
    x, x2, gamma = torch.randn(2, 3, 8), torch.randn(2, 3, 8), torch.randn(8)
    y, rstd = ref.rms_norm(x, gamma, 1e-5)
    torch.testing.assert_close(rstd, 1 / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5))
    torch.testing.assert_close(y, F.rms_norm(x, (8,), gamma, 1e-5))
    y2, _, total = ref.add_rms_norm(x, x2, gamma)
    torch.testing.assert_close(total, x + x2)
    torch.testing.assert_close(y2, F.rms_norm(x + x2, (8,), gamma, 1e-6))


def test_swiglu_splits_along_dim():
    x = torch.randn(4, 6)
    torch.testing.assert_close(ref.swiglu(x, 0), F.silu(x[:2]) * x[2:])


def test_scatter_nd_update_writes_in_place():
    cache = torch.zeros(2, 4, 3)
    updates = torch.randn(2, 1, 3)
    out = ref.scatter_nd_update_(cache, torch.tensor([[[0, 1]], [[1, 3]]]), updates)
    assert out is cache
    torch.testing.assert_close(cache[0, 1], updates[0, 0])
    torch.testing.assert_close(cache[1, 3], updates[1, 0])
    assert int((cache != 0).sum()) == 6  # nothing else written


def test_moe_gating_top_k_softmax():
    x = torch.randn(5, 6)
    y, experts, rows = ref.moe_gating_top_k_softmax(x, None, 2)
    values, indices = torch.softmax(x, -1).topk(2)
    torch.testing.assert_close(y, values)
    assert experts.tolist() == indices.tolist() and experts.dtype == torch.int32
    assert rows.tolist() == [[i, i + 5] for i in range(5)]


def test_dynamic_quant_and_quant_matmul():
    x = torch.randn(3, 16)
    q, scale = ref.dynamic_quant(x)
    assert q.dtype == torch.int8 and q.abs().max() == 127
    torch.testing.assert_close(q.float() * scale.unsqueeze(-1), x, atol=scale.max().item(), rtol=0)
    w = torch.randint(-5, 5, (16, 4), dtype=torch.int8)
    out = ref.quant_matmul(q, w, torch.full((4,), 0.5), pertoken_scale=scale, output_dtype=6)
    torch.testing.assert_close(out, (q.float() @ w.float()) * 0.5 * scale.unsqueeze(-1))


def test_grouped_matmul_by_group_list():
    x, w = torch.randn(5, 3), torch.randn(2, 3, 4)
    out = ref.grouped_matmul([x], [w], group_list=torch.tensor([2, 5]), split_item=2, group_type=0)
    torch.testing.assert_close(out[0], torch.cat([x[:2] @ w[0], x[2:] @ w[1]]))
