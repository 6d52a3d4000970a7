"""TorchAir's layout hints on the ops that carry them, and their trip through the GE proto."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from fxlab.ir.ge_proto import decode_model_def, encode_model_def
from fxlab.ir.model import AttrKind
from fxlab.ir.pbtxt import graph_to_pbtxt
from tests.passes.converters.lowering import lower


def _layouts(graph, op_type):
    op = graph.ops_of_type(op_type)[0]
    return op.attr_value("input_layout_info"), op.attr_value("output_layout_info")


def test_conv2d_with_bias_tags_three_nchw_inputs_and_one_output():
    graph = lower(lambda x, w, b: F.conv2d(x, w, b), torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3), torch.randn(3))
    assert _layouts(graph, "Conv2D") == (((0, "NCHW"), (1, "NCHW"), (2, "NCHW")), ((0, "NCHW"),))


def test_conv3d_with_bias_tags_the_bias_nd_first():
    graph = lower(lambda x, w, b: F.conv3d(x, w, b), torch.randn(1, 2, 3, 4, 4), torch.randn(2, 2, 1, 3, 3), torch.randn(2))
    assert _layouts(graph, "Conv3D") == (((2, "ND"), (0, "NCDHW"), (1, "NCDHW")), ((0, "NCDHW"),))


def test_pooling_and_batch_norm_are_nchw():
    graph = lower(lambda x: F.avg_pool2d(x, 2), torch.randn(1, 2, 4, 4))
    assert _layouts(graph, "AvgPoolV2") == (((0, "NCHW"),), ((0, "NCHW"),))
    bn = lower(lambda x, m, v: F.batch_norm(x, m, v), torch.randn(2, 3, 4, 4), torch.randn(3), torch.rand(3) + 0.5)
    assert _layouts(bn, "BNInfer") == (tuple((i, "NCHW") for i in range(5)), ((0, "NCHW"),))


def test_layout_info_survives_the_proto_and_prints_ints_and_strings():
    graph = lower(lambda x: F.avg_pool2d(x, 2), torch.randn(1, 2, 4, 4))
    back = decode_model_def(encode_model_def(graph))
    attr = back.ops_of_type("AvgPoolV2")[0].attrs["input_layout_info"]
    assert attr.kind is AttrKind.LIST_INDEXED_STR and attr.value == ((0, "NCHW"),)
    text = graph_to_pbtxt(graph)
    block = text[text.index('key: "input_layout_info"'):]
    assert 's: "NCHW"' in block.split("}")[0] and "i: 0" in block.split("}")[0]
