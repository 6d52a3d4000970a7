"""Training batch-norm converters in the Atlas A2 form."""
from __future__ import annotations

import torch

from fxlab.ir.execute import execute
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.registry import Sample
from tests.passes.converters.lowering import types
from tests.passes.converters.node_lowering import lower_call
from tests.passes.converters.test_registry_walk import one_node_graph

aten = torch.ops.aten


def _batch_norm_backward_args(train: bool) -> tuple:
    x = torch.randn(2, 3, 4, 4)
    mean, invstd = x.mean((0, 2, 3)), torch.rsqrt(x.var((0, 2, 3), unbiased=False) + 1e-5)
    return (torch.randn(2, 3, 4, 4), x, torch.rand(3) + 0.5, torch.randn(3), torch.rand(3) + 0.5, mean, invstd, train, 1e-5, [True, True, True])


def test_native_batch_norm_backward_in_training_reduces_with_the_saved_stats():
    gm, _ = one_node_graph(aten.native_batch_norm_backward.default, Sample(_batch_norm_backward_args(True)))
    graph = convert_to_ascend_ir(gm, "g").graph
    assert types(graph) == ["Shape", "BNTrainingUpdateGrad", "BNTrainingReduceGrad"]
    reduce_grad = graph.ops_of_type("BNTrainingReduceGrad")[0]
    assert reduce_grad.attr_value("input_layout_info") == tuple((i, "NCHW") for i in range(7))
    assert reduce_grad.inputs[-1] == f"{graph.inputs[6]}:0"  # save_invstd, where GE reads a variance


def test_native_batch_norm_backward_outside_training_matches_eager():
    graph = lower_call(aten.native_batch_norm_backward.default, *_batch_norm_backward_args(False))
    assert types(graph) == ["Shape", "BNTrainingUpdateGrad", "BNInferGrad"]


def test_max_pool3d_casts_the_argmax_to_int64():
    graph = lower_call(aten.max_pool3d_with_indices.default, torch.randn(1, 2, 4, 4, 4), [2, 2, 2])
    assert types(graph) == ["MaxPool3DWithArgmaxV2", "Cast"]


def test_group_norm_backward_is_a_batch_norm_over_groups_with_variances():
    x, weight = torch.randn(2, 4, 3, 3), torch.rand(4) + 0.5
    _, mean, rstd = torch.native_group_norm(x, weight, None, 2, 4, 9, 2, 1e-5)
    graph = lower_call(aten.native_group_norm_backward.default, torch.randn(2, 4, 3, 3), x, mean, rstd, weight, 2, 4, 9, 2, [True, True, True])
    kinds = types(graph)
    assert kinds.index("Reciprocal") < kinds.index("BNTrainingUpdateGrad") < kinds.index("BNTrainingReduceGrad")
    assert kinds.count("ReduceSum") == 2


def test_functional_batch_norm_returns_ge_running_stats_where_aten_has_the_saved_ones():
    args = (torch.randn(2, 3, 4, 4), torch.rand(3) + 0.5, torch.randn(3), torch.randn(3), torch.rand(3) + 0.5, True, 0.1, 1e-5)
    gm, tensors = one_node_graph(aten._native_batch_norm_legit_functional.default, Sample(args))
    graph = convert_to_ascend_ir(gm, "g").graph
    assert types(graph) == ["Shape", "TensorMove", "TensorMove", "BatchNormV3"]
    actual = execute(graph, [t.clone() for t in tensors])
    out, save_mean, save_invstd, new_mean, new_var = aten._native_batch_norm_legit_functional(*args)
    for got, want in zip(actual, [out, new_mean, new_var, save_mean, save_invstd]):
        torch.testing.assert_close(got, want)
