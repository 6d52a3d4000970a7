"""DeepSeek-V3.2's lightning indexer and sparse attention, against plain torch."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from fxlab.ir.kernels import npu_sparse_attention_reference as ref


def test_indexer_picks_the_best_causal_positions():
    q, k, w = torch.randn(1, 3, 2, 8), torch.randn(1, 5, 1, 8), torch.rand(1, 3, 2)
    indices, values = ref.lightning_indexer(q, k, w, sparse_count=4, sparse_mode=3, return_value=True)
    scores = torch.einsum("sn,snt->st", w[0], torch.einsum("snd,td->snt", q[0], k[0, :, 0]).relu())
    for s in range(3):
        allowed = s + 3  # bottom-right diagonal: 5 keys for 3 queries
        best = torch.argsort(-scores[s, :allowed], stable=True)[:4].tolist()
        assert indices[0, s, 0].tolist() == best + [-1] * (4 - len(best))
        torch.testing.assert_close(values[0, s, 0, : len(best)], scores[s, best])


def test_sparse_flash_attention_attends_to_the_picked_positions_only():
    q, kv = torch.randn(1, 2, 4, 8), torch.randn(1, 6, 1, 8)
    indices = torch.tensor([[[[0, 3, 5]], [[1, -1, 4]]]], dtype=torch.int32)  # -1 ends the second list
    out, _, _ = ref.sparse_flash_attention(q, kv, kv, indices, 0.5, sparse_mode=0)
    for s, picked in enumerate([[0, 3, 5], [1]]):
        keys = kv[0, picked, 0]
        expected = F.scaled_dot_product_attention(q[0, s].unsqueeze(1), keys.expand(4, -1, -1), keys.expand(4, -1, -1), scale=0.5)
        torch.testing.assert_close(out[0, s], expected[:, 0])
