"""Softmax and normalization converters."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from fxlab.ir.model import DataType
from tests.passes.converters.test_shape import body_types, convert


def test_softmax_and_log_softmax() -> None:
    graph = convert(lambda x: (F.softmax(x, -1), F.log_softmax(x, 1)), torch.randn(2, 3, 4))
    assert body_types(graph) == ["SoftmaxV2", "LogSoftmaxV2"]
    softmax, log_softmax = graph.ops_of_type("SoftmaxV2")[0], graph.ops_of_type("LogSoftmaxV2")[0]
    assert softmax.attr_value("axes") == (-1,) and softmax.attr_value("half_to_float") is False
    assert [d.name for d in log_softmax.input_desc] == ["logits"] and log_softmax.output_desc[0].name == "logsoftmax"


def test_layer_norm_is_layer_norm_v4_and_fills_missing_affine() -> None:
    x, w, b = torch.randn(2, 3, 8), torch.randn(8), torch.randn(8)
    graph = convert(lambda x, w, b: F.layer_norm(x, [8], w, b), x, w, b)
    assert body_types(graph) == ["Const", "LayerNormV4"]
    op = graph.ops_of_type("LayerNormV4")[0]
    assert [d.name for d in op.input_desc] == ["x", "normalized_shape", "gamma", "beta"]
    assert [d.name for d in op.output_desc] == ["y", "mean", "rstd"] and op.attr_value("epsilon") == 1e-5
    graph = convert(lambda x: F.layer_norm(x, [8]), x)
    assert body_types(graph) == ["Const", "Const", "Fill", "Const", "Const", "Fill", "Const", "LayerNormV4"]
    assert graph.ops_of_type("Const")[0].output_desc[0].dtype is DataType.DT_INT32


def test_group_norm_turns_variance_into_rstd() -> None:
    graph = convert(lambda x, w, b: F.group_norm(x, 2, w, b), torch.randn(2, 4, 3, 3), torch.randn(4), torch.randn(4))
    types = body_types(graph)
    assert types[types.index("GroupNorm") :][:4] == ["GroupNorm", "Const", "Add", "Rsqrt"]
    assert graph.ops_of_type("GroupNorm")[0].attr_value("num_groups") == 2


def test_inference_batch_norm_is_bninfer() -> None:
    bn = torch.nn.BatchNorm2d(3).eval()
    bn.running_mean.normal_()
    args = (bn.weight.detach(), bn.bias.detach(), bn.running_mean, bn.running_var)
    graph = convert(lambda x, w, b, m, v: F.batch_norm(x, m, v, w, b, False), torch.randn(2, 3, 4, 4), *args)
    assert body_types(graph) == ["Shape", "Const", "Cast", "Const", "Fill", "BNInfer"]  # TorchAir's order
    graph = convert(lambda x, w, b, m, v: F.batch_norm(x, m, v, w, b, False), torch.randn(5, 3), *args)
    types = body_types(graph)
    assert types[-3:] == ["Unsqueeze", "BNInfer", "Squeeze"]
    assert graph.ops_of_type("Unsqueeze")[0].attr_value("axes") == (2, 3)
    assert graph.ops_of_type("Squeeze")[0].attr_value("axis") == (3, 2)
