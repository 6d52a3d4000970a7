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



def test_functional_batch_norm_above_5d_runs_folded_to_5d_as_in_torchair():
    args = (torch.randn(2, 3, 2, 2, 3, 2), torch.rand(3) + 0.5, torch.randn(3), torch.randn(3), torch.rand(3) + 0.5, True, 0.1, 1e-5)
    gm, tensors = one_node_graph(aten._native_batch_norm_legit_functional.default, Sample(args))
    graph = convert_to_ascend_ir(gm, "g").graph
    gathers = ["Const", "Gather"] * 4
    assert types(graph) == ["Shape", *gathers, "Const", "Pack", "Reshape", "TensorMove", "TensorMove", "BatchNormV3", "Reshape"]
    batch_norm, restore = graph.ops_of_type("BatchNormV3")[0], graph.ops_of_type("Reshape")[1]
    assert batch_norm.attr_value("input_layout_info") == ((0, "NCDHW"),)
    assert restore.attr_value("input_layout_info") == ((0, "ND"), (1, "ND"))
    assert restore.inputs[1] == f"{graph.ops_of_type('Shape')[0].name}:0"  # back to the input's own shape
    actual = execute(graph, [t.clone() for t in tensors])
    out, save_mean, save_invstd, new_mean, new_var = aten._native_batch_norm_legit_functional(*args)
    for got, want in zip(actual, [out, new_mean, new_var, save_mean, save_invstd]):
        torch.testing.assert_close(got, want)

def test_instance_norm_is_refused_as_torchair_fails_on_atlas_a2_and_converted_when_asked():
    from tests.functional_graphs import functional_graph
    from fxlab.passes.conversion_result import Status

    x = torch.randn(2, 3, 4, 4)
    gm = functional_graph(lambda t: torch.nn.functional.instance_norm(t), x)
    refused = convert_to_ascend_ir(gm, "g")
    record = next(r for r in refused.nodes if r.target == "aten._native_batch_norm_legit.no_stats")
    assert refused.partial and record.status == Status.REFUSED
    assert "not implemented! on SoCs before arch35 (Atlas A2/A3" in record.message and "--convert-refused" in record.message
    converted = convert_to_ascend_ir(gm, "g", convert_refused=True).graph
    # TorchAir's arch35 form: zeros and ones for the absent affine and running statistics.
    assert types(converted) == ["Const", "Reshape", "Shape", "Const", "Gather", "Const", "Cast", "Fill", "Const", "Gather", "Const", "Cast", "Fill",
                                "Const", "Gather", "Const", "Cast", "Fill", "Const", "Gather", "Const", "Cast", "Fill", "BatchNormV3", "Const", "Reshape"]
    norm = converted.ops_of_type("BatchNormV3")[0]
    assert norm.attr_value("input_layout_info") == ((0, "NCHW"),) and norm.attr_value("is_training") is True
    torch.testing.assert_close(execute(converted, [x])[0], torch.nn.functional.instance_norm(x), rtol=1e-4, atol=1e-5)


def test_batch_norm_legit_updates_the_running_statistics_it_is_given_in_place():
    x, mean, var = torch.randn(4, 3, 2, 2), torch.zeros(3), torch.ones(3)
    gm, _ = one_node_graph(aten._native_batch_norm_legit.default, Sample((x, None, None, mean, var, True, 0.5, 1e-5)))
    graph = convert_to_ascend_ir(gm, "g", convert_refused=True).graph
    assert "TensorMove" not in types(graph)  # the op's own statistics (a!, b!), not copies
    ir_mean, ir_var = mean.clone(), var.clone()
    execute(graph, [x, ir_mean, ir_var])
    aten._native_batch_norm_legit.default(x, None, None, mean, var, True, 0.5, 1e-5)
    torch.testing.assert_close((ir_mean, ir_var), (mean, var))
