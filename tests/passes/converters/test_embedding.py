"""_embedding_bag converters."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from tests.passes.converters.lowering import lower, types


def test_embedding_bag_forward_only_casts_indices_and_offsets():
    graph = lower(lambda w, i, o: F.embedding_bag(i, w, o, mode="max"), torch.randn(10, 3), torch.tensor([1, 2, 4, 5]), torch.tensor([0, 2]))
    assert types(graph) == ["Cast", "Cast", "EmbeddingBag"]
    assert graph.ops_of_type("EmbeddingBag")[0].attr_value("mode") == "max"
