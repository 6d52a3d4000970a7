"""Convolution, pooling, resize and pad converters, and the coverage of a small CNN and a
Llama-style decoder's functional graphs."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from tests.functional_graphs import functional_graph
from fxlab.passes.conversion_result import Status
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from tests.passes.converters.test_shape import body_types, convert


def test_conv2d_attrs_are_nchw_four_element_lists() -> None:
    graph = convert(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=(1, 0), dilation=(1, 2)), torch.randn(1, 3, 9, 9), torch.randn(4, 3, 3, 3), torch.randn(4))
    (op,) = graph.ops_of_type("Conv2D")
    assert op.attr_value("strides") == (1, 1, 2, 2) and op.attr_value("pads") == (1, 1, 0, 0)
    assert op.attr_value("dilations") == (1, 1, 1, 2) and op.attr_value("data_format") == "NCHW"
    assert [d.name for d in op.input_desc] == ["x", "filter", "bias", "offset_w"]


def test_conv1d_runs_as_conv2d_between_unsqueeze_and_squeeze() -> None:
    graph = convert(lambda x, w: F.conv1d(x, w, padding=1), torch.randn(2, 3, 10), torch.randn(5, 3, 3))
    assert body_types(graph) == ["Unsqueeze", "Unsqueeze", "Conv2D", "Squeeze"]


def test_max_pool_returns_identity_cast_as_indices() -> None:
    graph = convert(lambda x: F.max_pool2d(x, 2), torch.randn(1, 2, 4, 4))
    # TorchAir's indices output: the pooled values through Identity, cast to int64.
    assert body_types(graph) == ["MaxPoolWithArgmaxV1", "Identity", "Cast"]
    identity = graph.ops_of_type("Identity")[0]
    assert identity.inputs == ["MaxPoolWithArgmaxV1:0"]
    op = graph.ops_of_type("MaxPoolWithArgmaxV1")[0]
    assert op.attr_value("ksize") == (1, 2, 2, 1) and op.attr_value("pads") == (1, 0, 0, 1)


def test_pools_resize_and_pad() -> None:
    graph = convert(lambda x: F.avg_pool2d(x, 2, 1, 1, count_include_pad=False), torch.randn(1, 2, 5, 5))
    op = graph.ops_of_type("AvgPoolV2")[0]
    assert op.attr_value("exclusive") is True and op.attr_value("pads") == (1, 1, 1, 1)
    graph = convert(lambda x: F.pad(x, (1, 2), value=0.5), torch.randn(2, 3, 4))
    assert body_types(graph) == ["Const", "Const", "PadV3"]
    paddings = graph.ops_of_type("Const")[0]
    assert paddings.attr_value("_readable_value") == "[0, 0, 0, 0, 1, 2]"


class SmallCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.gn = nn.GroupNorm(2, 4)
        self.fc = nn.Linear(4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        x = F.interpolate(F.avg_pool2d(x, 2, 1), scale_factor=2, mode="nearest")
        x = self.gn(F.pad(x, (1, 1, 1, 1)))
        return F.log_softmax(self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1)), -1)


def _functional_of(model: nn.Module, *inputs: torch.Tensor) -> torch.fx.GraphModule:
    """Parameters and buffers as graph inputs, as at inference under TorchAir."""
    state = dict(model.named_parameters()) | dict(model.named_buffers())
    names = list(state)
    tensors = [t.detach() for t in state.values()]

    def call(*args: torch.Tensor) -> torch.Tensor:
        return torch.func.functional_call(model, dict(zip(names, args[: len(names)])), args[len(names) :])

    return functional_graph(call, *tensors, *inputs)


def test_small_cnn_converts_completely_and_matches_eager() -> None:
    from fxlab.ir.execute import execute

    model, x = SmallCnn().eval(), torch.randn(2, 3, 16, 16)
    gm = _functional_of(model, x)
    result = convert_to_ascend_ir(gm, name="cnn")
    assert not result.partial, [(n.target, n.message) for n in result.nodes if n.status in (Status.UNSUPPORTED, Status.RAISED)]
    inputs = [t.detach() for t in list(model.parameters()) + list(model.buffers())] + [x]
    (out,) = execute(result.graph, inputs)
    torch.testing.assert_close(out, model(x))
    assert {"Conv2D", "BNInfer", "MaxPoolWithArgmaxV1", "AvgPoolV2", "IndexByTensor", "PadV3", "GroupNorm", "LogSoftmaxV2"} <= set(result.graph.types)


class TinyDecoder(nn.Module):
    """RMSNorm, rotary embedding (slice/neg/cat), attention (matmul/softmax), a KV cache
    written through slices, SwiGLU MLP."""

    def __init__(self, dim: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.gate, self.up, self.down = nn.Linear(dim, 32, bias=False), nn.Linear(dim, 32, bias=False), nn.Linear(32, dim, bias=False)
        self.norm = nn.Parameter(torch.ones(dim))
        self.register_buffer("k_cache", torch.zeros(1, heads, 8, dim // heads))

    def rms(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)

    @staticmethod
    def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), -1) * sin

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.rms(x)).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
        q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
        self.k_cache[:, :, :t] = k
        scores = torch.softmax(q @ self.k_cache[:, :, :t].transpose(-1, -2) / self.head_dim**0.5, -1)
        h = x + self.out((scores @ v).transpose(1, 2).reshape(b, t, d))
        return h + self.down(F.silu(self.gate(self.rms(h))) * self.up(h))


def test_decoder_ops_of_this_family_all_convert() -> None:
    model, x = TinyDecoder().eval(), torch.randn(1, 4, 16)
    gm = _functional_of(model, x, torch.randn(4, 8), torch.randn(4, 8))
    result = convert_to_ascend_ir(gm, name="decoder")
    family = {"aten.view.default", "aten._unsafe_view.default", "aten.permute.default", "aten.unbind.int", "aten.slice.Tensor", "aten.cat.default", "aten.transpose.int", "aten.t.default", "aten.expand.default", "aten.bmm.default", "aten.mm.default", "aten._softmax.default", "aten.clone.default"}
    seen = {n.target for n in result.nodes}
    assert {"aten.bmm.default", "aten._softmax.default", "aten.slice.Tensor", "aten.cat.default", "aten.mm.default"} <= seen
    failed = [(n.target, n.message) for n in result.nodes if n.target in family and n.status is not Status.CONVERTED]
    assert failed == []


def test_a_transposed_convolution_is_left_to_torchairs_converter_with_the_option_that_uses_it():
    weight, bias = torch.randn(3, 4, 3, 3), torch.randn(4)
    deconv = lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)  # noqa: E731
    result = convert_to_ascend_ir(functional_graph(deconv, torch.randn(1, 3, 5, 5), weight, bias), "g")
    (node,) = [n for n in result.nodes if n.target == "aten.convolution.default"]
    assert node.status is Status.UNSUPPORTED
    assert "transposed=True (Conv2DTranspose / Conv3DTranspose): not converted by the built-in conversion; TorchAir converts it" in node.message
    assert node.message.endswith("use --converter torchair")
