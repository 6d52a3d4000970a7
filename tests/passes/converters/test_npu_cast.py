"""torch_npu's casts, prefetch and format casts: TorchAir's graphs and its refusals."""
from __future__ import annotations

import torch

from fxlab.passes.convert_to_ascend_ir import Status
from tests.passes.converters.npu_fixtures import convert, npu_ops, op_types  # noqa: F401 - the fixture


def test_float4_casts_are_packed_two_to_a_byte(npu_ops):
    result = convert("npu_dtype_cast", torch.randn(2, 8).bfloat16(), 296)
    assert op_types(result) == ["Cast", "Const", "Cast", "Shape", "Div", "Const", "Cast", "Const", "ConcatV2", "Reshape", "Bitcast", "Reshape"]


def test_prefetch_is_a_cmo_after_its_dependency_kept_by_netoutput(npu_ops):
    result = convert("npu_prefetch", torch.randn(8, 8), torch.randn(2), 256)
    cmo = next(op for op in result.graph.ops if op.type == "Cmo")
    assert cmo.inputs == ["arg1:-1", "arg0:0"] and dict(cmo.attrs)["type"].value == 6 and "offset" not in dict(cmo.attrs)
    assert result.graph.ops[-1].inputs == ["Cmo:-1"]
    refused = convert("npu_prefetch", torch.randn(8, 8), None, 64)
    assert [r.status for r in refused.nodes if r.target == "npu.npu_prefetch.default"] == [Status.REFUSED]


def test_every_format_cast_is_refused_as_torchair_has_no_converter_for_it(npu_ops):
    for name, args in (("npu_format_cast", (29,)), ("npu_format_cast.Tensor", (torch.randn(4, 16),)), ("_npu_format_cast", (29,))):
        result = convert(name, torch.randn(4, 16), *args)
        (record,) = [r for r in result.nodes if r.target.startswith("npu.")]
        assert record.status is Status.REFUSED and "NpuFormatCast, which GE does not register" in record.message


def test_format_cast_keeps_values_on_cpu(npu_ops):
    x = torch.randn(4, 16)
    assert torch.equal(torch.ops.npu.npu_format_cast(x, 29), x)
    assert torch.ops.npu.npu_format_cast(x.to("meta"), 29).shape == (4, 16)
