"""The CPU reference math of torch_npu's scatter operators (KV-cache writes)."""

from __future__ import annotations

import torch

from fxlab.ir.kernels import npu_scatter_reference as ref


def test_scatter_nd_update_writes_in_place():
    cache = torch.zeros(2, 4, 3)
    updates = torch.randn(2, 1, 3)
    out = ref.scatter_nd_update_(cache, torch.tensor([[[0, 1]], [[1, 3]]]), updates)
    assert out is cache
    torch.testing.assert_close(cache[0, 1], updates[0, 0])
    torch.testing.assert_close(cache[1, 3], updates[1, 0])
    assert int((cache != 0).sum()) == 6  # nothing else written


def test_scatter_update_writes_each_batch_from_its_start():
    cache = torch.zeros(2, 3, 8, 4)
    updates = torch.randn(2, 3, 2, 4)
    out = ref.scatter_update(cache, torch.tensor([5, 1]), updates, -2)
    assert int(cache.count_nonzero()) == 0  # the functional form writes a copy
    torch.testing.assert_close(out[0, :, 5:7], updates[0])
    torch.testing.assert_close(out[1, :, 1:3], updates[1])
    assert int((out != 0).sum()) == updates.numel()
    ref.scatter_update_(cache, torch.tensor([[1, 0]]), updates[:1], -2)  # 2-D rows: (batch, start)
    torch.testing.assert_close(cache[1, :, 0:2], updates[0])


def test_quant_scatter_writes_quantised_updates():
    cache = torch.zeros(2, 6, 4, dtype=torch.int8)
    updates = torch.tensor([[[0.5, 1.5, -2.5, 10.0]], [[1.0, 2.0, 3.0, 4.0]]])
    out = ref.quant_scatter(cache, torch.tensor([2, 4]), updates, torch.full((1, 1, 4), 2.0))
    assert out[0, 2].tolist() == [1, 3, -5, 20] and out[1, 4].tolist() == [2, 4, 6, 8]


def test_scatter_list_writes_one_tensor_per_batch_under_the_mask():
    caches = [torch.zeros(2, 5, 3) for _ in range(2)]
    updates = torch.randn(2, 2, 1, 3)
    out = ref.scatter_list(caches, torch.tensor([4, 1]), updates, torch.tensor([1, 0], dtype=torch.uint8))
    torch.testing.assert_close(out[0][:, 4:5], updates[0])
    assert int(out[1].count_nonzero()) == 0 and int(caches[0].count_nonzero()) == 0


def test_gather_backward_adds_into_zeros():
    grad, index = torch.ones(2, 2), torch.tensor([[0, 0], [1, 2]])
    out = ref.gather_backward(grad, [2, 3], 1, index, False)
    assert out.tolist() == [[2.0, 0.0, 0.0], [0.0, 1.0, 1.0]]
