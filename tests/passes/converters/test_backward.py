"""*_backward converters: GE's gradient ops, in their operand order."""
from __future__ import annotations

import torch

from tests.passes.converters.lowering import types
from tests.passes.converters.node_lowering import lower_call

aten = torch.ops.aten


def test_threshold_backward_at_zero_is_relu_grad():
    assert types(lower_call(aten.threshold_backward.default, torch.randn(3), torch.randn(3), 0)) == ["ReluGrad"]
    graph = lower_call(aten.threshold_backward.default, torch.randn(3), torch.randn(3), 0.5)
    assert types(graph) == ["ThresholdGradV2D"] and graph.ops[-2].attr_value("threshold") == 0.5


def test_sigmoid_backward_takes_the_output_first():
    graph = lower_call(aten.sigmoid_backward.default, torch.randn(3), torch.rand(3))
    op = graph.ops_of_type("SigmoidGrad")[0]
    assert op.inputs == [f"{graph.inputs[1]}:0", f"{graph.inputs[0]}:0"]


def test_slice_backward_concatenates_zeros_around_the_gradient():
    graph = lower_call(aten.slice_backward.default, torch.randn(3, 2), [3, 5], 1, 1, 3, 1)
    assert types(graph) == ["Const", "Cast", "Const", "Fill", "Const", "Cast", "Const", "Fill", "Const", "ConcatV2"]


def test_convolution_backward_builds_input_filter_and_bias_gradients():
    args = (torch.randn(2, 4, 4, 4), torch.randn(2, 3, 6, 6), torch.randn(4, 3, 3, 3), [4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True])
    graph = lower_call(aten.convolution_backward.default, *args)
    assert types(graph) == ["Const", "Conv2DBackpropInput", "Shape", "Conv2DBackpropFilter", "FlattenV2", "Const", "ReduceSum"]
    assert graph.ops_of_type("Conv2DBackpropInput")[0].attr_value("input_layout_info") == ((0, "ND"), (1, "NCHW"), (2, "NCHW"))


def test_max_pool_backward_pools_again_for_the_argmax():
    x = torch.randn(1, 2, 4, 4)
    _, indices = aten.max_pool2d_with_indices(x, [2, 2], [2, 2])
    graph = lower_call(aten.max_pool2d_with_indices_backward.default, torch.randn(1, 2, 2, 2), x, [2, 2], [2, 2], [0, 0], [1, 1], False, indices)
    assert types(graph) == ["MaxPoolWithArgmaxV1", "MaxPoolGradWithArgmaxV1"]
