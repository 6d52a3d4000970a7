"""nll_loss converters."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from tests.passes.converters.lowering import lower, types


def test_nll_loss_casts_int64_targets_to_int32():
    graph = lower(lambda x, t: F.nll_loss(x, t, reduction="sum", ignore_index=2), torch.log_softmax(torch.randn(4, 5), -1), torch.tensor([0, 1, 2, 3]))
    assert types(graph) == ["Cast", "NLLLoss"]
    op = graph.ops_of_type("NLLLoss")[0]
    assert (op.attr_value("reduction"), op.attr_value("ignore_index")) == ("sum", 2)
