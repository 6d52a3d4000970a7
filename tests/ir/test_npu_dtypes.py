"""torch_npu's dtype values: torch_npu's own, torch's ScalarType numbers, and their GE types."""

from __future__ import annotations

import pytest
import torch

from fxlab.ir.model import DataType
from fxlab.ir.npu_dtypes import FLOAT4_X2, FLOAT8_TYPES, HIFLOAT8, INT4, TORCH_NPU_DTYPES, ge_dtype_of_code, torch_dtype_of_code

# What TorchAir's mapping of a dtype value gives (``torch_dtype_value_to_ge_type``).
TORCHAIR_GE_TYPES = {
    0: DataType.DT_UINT8,
    1: DataType.DT_INT8,
    3: DataType.DT_INT32,
    5: DataType.DT_FLOAT16,
    6: DataType.DT_FLOAT,
    11: DataType.DT_BOOL,
    15: DataType.DT_BF16,
    16: DataType.DT_INT4,
    23: DataType.DT_FLOAT8_E5M2,
    24: DataType.DT_FLOAT8_E4M3FN,
    285: DataType.DT_INT4,
    290: DataType.DT_HIFLOAT8,
    291: DataType.DT_FLOAT8_E5M2,
    292: DataType.DT_FLOAT8_E4M3FN,
    293: DataType.DT_FLOAT8_E8M0,
    296: DataType.DT_FLOAT4_E2M1,
    297: DataType.DT_FLOAT4_E1M2,
}


@pytest.mark.parametrize("code,ge_type", sorted(TORCHAIR_GE_TYPES.items()))
def test_dtype_values_name_torchairs_ge_types(code, ge_type):
    assert ge_dtype_of_code(code) is ge_type


def test_values_ge_has_no_type_for_and_torchs_counterparts():
    assert ge_dtype_of_code(TORCH_NPU_DTYPES["uint1"]) is None and ge_dtype_of_code(TORCH_NPU_DTYPES["float6_e3m2"]) is None
    assert (INT4, HIFLOAT8, FLOAT4_X2) == (285, 290, (296, 297))
    assert torch_dtype_of_code(15) is torch.bfloat16 and torch_dtype_of_code(292) is torch.float8_e4m3fn
    assert torch_dtype_of_code(HIFLOAT8) is None and torch_dtype_of_code(INT4) is None
    assert FLOAT8_TYPES == {23: torch.float8_e5m2, 24: torch.float8_e4m3fn, 291: torch.float8_e5m2, 292: torch.float8_e4m3fn}
