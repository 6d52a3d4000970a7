"""torch_npu's quantisation converters: TorchAir's op choices, attrs and repacking."""
from __future__ import annotations

import torch

from fxlab.passes.convert_to_ascend_ir import Status
from tests.passes.converters.npu_fixtures import convert, npu_ops, op_types  # noqa: F401 - the fixture


def _op(result, op_type):
    return next(op for op in result.graph.ops if op.type == op_type)


def test_dynamic_quant_per_token_int8_writes_no_default_attrs(npu_ops):
    result = convert("npu_dynamic_quant", torch.randn(3, 16).half(), smooth_scales=torch.rand(16).half())
    op = _op(result, "DynamicQuant")
    assert [d.name for d in op.input_desc] == ["x", "smooth_scales"] and not dict(op.attrs)


def test_other_modes_take_dynamic_quant_v2_with_every_attr(npu_ops):
    op = _op(convert("npu_dynamic_quant", torch.randn(3, 16).half(), quant_mode="pertensor"), "DynamicQuantV2")
    assert (op.attr_value("quant_mode"), op.attr_value("is_symmetrical"), op.attr_value("dst_type")) == ("pertensor", True, 2)
    assert op.inputs[1:] == ["", ""]
    asym = _op(convert("npu_dynamic_quant_asymmetric", torch.randn(3, 16).half()), "DynamicQuantV2")
    assert asym.attr_value("is_symmetrical") is False


def test_int4_results_are_packed_into_int32_words(npu_ops):
    assert op_types(convert("npu_dynamic_quant", torch.randn(3, 16).half(), dst_type=16)) == [
        "DynamicQuant", "Const", "Shape", "Div", "Const", "Const", "ConcatV2", "Reshape", "Bitcast", "Reshape",
    ]


def test_quantize_div_mode_unsqueezes_the_scales_onto_the_axis(npu_ops):
    result = convert("npu_quantize", torch.randn(2, 3, 16), torch.rand(3) + 0.1, None, 12, 1)
    assert op_types(result) == ["Unsqueeze", "Quantize"]
    assert _op(result, "Unsqueeze").attr_value("axes") == (0, 2)
    assert (_op(result, "Quantize").attr_value("dtype"), _op(result, "Quantize").attr_value("axis")) == ("torch.qint8", 1)
    refused = convert("npu_quantize", torch.randn(2, 16), torch.rand(2, 16), None, 12, 1)
    assert [r.status for r in refused.nodes if r.target.startswith("npu.")] == [Status.REFUSED]


def test_anti_quant_of_int4_words_widens_them_first(npu_ops):
    result = convert("npu_anti_quant", torch.zeros(4, 2, dtype=torch.int32), torch.rand(16).half())
    assert op_types(result) == ["Const", "Shape", "Mul", "Bitcast", "Reshape", "AscendAntiQuantV2"]


def test_trans_quant_param_writes_round_mode_only_when_not_default(npu_ops):
    assert not dict(_op(convert("npu_trans_quant_param", torch.rand(8)), "TransQuantParamV2").attrs)
    assert _op(convert("npu_trans_quant_param", torch.rand(8), None, 1), "TransQuantParamV2").attr_value("round_mode") == 1
