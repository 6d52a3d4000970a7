"""torch_npu's rotary embedding converters: what TorchAir refuses."""
from __future__ import annotations

import torch

from fxlab.passes.convert_to_ascend_ir import Status
from tests.passes.converters.npu_fixtures import convert, npu_ops  # noqa: F401 - the fixture


def test_a_refusal_names_the_file_torchair_registers_the_converter_in(npu_ops):
    x, cos, sin, rotate = torch.randn(1, 2, 3, 8), torch.randn(1, 2, 1, 8), torch.randn(1, 2, 1, 8), torch.eye(8)
    result = convert("npu_rotary_mul", x, cos, sin, "quarter", rotate)
    (record,) = [r for r in result.nodes if r.target.startswith("npu.")]
    assert record.status is Status.REFUSED
    assert record.message == (
        "TorchAir refuses npu.npu_rotary_mul.default with these arguments: its converter raises NotImplementedError: "
        "rotary_mode 'quarter' (only half and interleave on Atlas A2/A3) (ge_converter/custom/npu_rotary_mul.py)"
    )
