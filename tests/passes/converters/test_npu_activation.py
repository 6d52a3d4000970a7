"""torch_npu's activation converters: TorchAir's ops, default attrs and refusals."""
from __future__ import annotations

import torch

from fxlab.passes.convert_to_ascend_ir import Status
from tests.passes.converters.npu_fixtures import convert, npu_ops, op_types  # noqa: F401 - the fixture


def test_geglu_writes_only_attrs_off_their_defaults(npu_ops):
    default = next(op for op in convert("npu_geglu", torch.randn(3, 8).half()).graph.ops if op.type == "GeGluV2")
    assert not dict(default.attrs) and [d.name for d in default.output_desc] == ["y", "gelu"]
    left = next(op for op in convert("npu_geglu", torch.randn(4, 3), 0, 0, True).graph.ops if op.type == "GeGluV2")
    assert (left.attr_value("dim"), left.attr_value("approximate"), left.attr_value("activate_left")) == (0, 0, True)


def test_gelu_quant_refuses_what_torchair_refuses(npu_ops):
    result = convert("npu_gelu_quant", torch.randn(3, 16).half(), round_mode="round")
    (record,) = [r for r in result.nodes if r.target.startswith("npu.")]
    assert record.status is Status.REFUSED and "round_mode not supported for dst_type" in record.message


def test_swiglu_mx_quant_packs_float4_results(npu_ops):
    result = convert("npu_swiglu_mx_quant", torch.randn(4, 128).half())
    assert op_types(result)[0] == "SwigluMxQuant" and op_types(result)[-2:] == ["Bitcast", "Reshape"]
    mx = result.graph.ops[1]
    assert mx.output_desc[1].dtype.name == "DT_FLOAT8_E8M0"
