"""Training batch-norm converters in the Atlas A2 form."""
from __future__ import annotations

import torch

from tests.passes.converters.lowering import types
from tests.passes.converters.node_lowering import lower_call

aten = torch.ops.aten


def test_native_batch_norm_backward_in_training():
    x = torch.randn(2, 3, 4, 4)
    mean, invstd = x.mean((0, 2, 3)), torch.rsqrt(x.var((0, 2, 3), unbiased=False) + 1e-5)
    args = (torch.randn(2, 3, 4, 4), x, torch.rand(3) + 0.5, torch.zeros(3), torch.ones(3), mean, invstd, True, 1e-5, [True, True, True])
    graph = lower_call(aten.native_batch_norm_backward.default, *args)
    assert types(graph) == ["Shape", "BNTrainingUpdateGrad", "BNTrainingReduceGrad"]
    assert graph.ops_of_type("BNTrainingReduceGrad")[0].attr_value("input_layout_info") == tuple((i, "NCHW") for i in range(7))


def test_max_pool3d_casts_the_argmax_to_int64():
    graph = lower_call(aten.max_pool3d_with_indices.default, torch.randn(1, 2, 4, 4, 4), [2, 2, 2])
    assert types(graph) == ["MaxPool3DWithArgmaxV2", "Cast"]
