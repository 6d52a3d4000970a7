"""torch_npu's own dtypes, as torch_npu 2.13 exports them on its module.

torch_npu sets one module attribute per member of its extension's ``DType`` enum
(``torch_npu/_init/core/_exports.py``); each value is the ACL data type's number plus 256
(``TORCH_NPU_ENUM_OFFSET`` in ``torch_npu/csrc/custom_dtype/Init.h``), so it never
collides with a torch ScalarType number. Operators take these integers where torch has no
dtype of its own (``int? x1_dtype``): TorchAir's converters compare against
``torch_npu.hifloat8``, ``torch_npu.float4_e2m1fn_x2`` ..., and torch_npu's Meta functions
name them too. The stand-ins of ``torch_npu`` carry every one of them.
"""

from __future__ import annotations

import torch

from fxlab.ir.model import DTYPE_FROM_TORCHAIR_NUMBER, DataType, ge_dtype

ACL_OFFSET = 256

# name -> ACL data type number (CANN's aclDataType).
_ACL_DATA_TYPES = {
    "int4": 29,
    "uint1": 30,
    "hifloat8": 34,
    "float8_e5m2": 35,
    "float8_e4m3fn": 36,
    "float8_e8m0fnu": 37,
    "float6_e3m2": 38,
    "float6_e2m3": 39,
    "float4_e2m1fn_x2": 40,
    "float4_e1m2fn_x2": 41,
}

# ``torch_npu.<name>`` -> its value (``torch_npu.hifloat8 == 290``).
TORCH_NPU_DTYPES: dict[str, int] = {name: ACL_OFFSET + number for name, number in _ACL_DATA_TYPES.items()}
# Older spellings torch_npu's Meta functions still use for the float4 types.
TORCH_NPU_DTYPES.update(float4_e2m1=TORCH_NPU_DTYPES["float4_e2m1fn_x2"], float4_e1m2=TORCH_NPU_DTYPES["float4_e1m2fn_x2"])

# The torch_npu values of the types its operators take as ``int`` dtype arguments.
INT4 = TORCH_NPU_DTYPES["int4"]
HIFLOAT8 = TORCH_NPU_DTYPES["hifloat8"]
FLOAT8_E5M2 = TORCH_NPU_DTYPES["float8_e5m2"]
FLOAT8_E4M3FN = TORCH_NPU_DTYPES["float8_e4m3fn"]
FLOAT8_E8M0 = TORCH_NPU_DTYPES["float8_e8m0fnu"]
# The packed 4-bit float types (two values per byte).
FLOAT4_X2 = (TORCH_NPU_DTYPES["float4_e2m1fn_x2"], TORCH_NPU_DTYPES["float4_e1m2fn_x2"])

# torch's ScalarType numbers (c10's ``ScalarType`` enum), which the same arguments carry
# for torch's own types; ``torch.quint4x2``'s stands for int4 there.
QUINT4X2 = 16
TORCH_SCALAR_TYPES: dict[int, torch.dtype] = {
    0: torch.uint8,
    1: torch.int8,
    2: torch.int16,
    3: torch.int32,
    4: torch.int64,
    5: torch.float16,
    6: torch.float32,
    7: torch.float64,
    11: torch.bool,
    15: torch.bfloat16,
    23: torch.float8_e5m2,
    24: torch.float8_e4m3fn,
}
_TORCH_TYPES_OF_NPU_CODES = {FLOAT8_E5M2: torch.float8_e5m2, FLOAT8_E4M3FN: torch.float8_e4m3fn}
# The values naming a float8 type torch has, either way.
FLOAT8_TYPES: dict[int, torch.dtype] = {
    code: dtype
    for code, dtype in (*TORCH_SCALAR_TYPES.items(), *_TORCH_TYPES_OF_NPU_CODES.items())
    if dtype in (torch.float8_e5m2, torch.float8_e4m3fn)
}


def torch_dtype_of_code(code: int) -> torch.dtype | None:
    """The torch dtype a dtype argument's value names: a ScalarType number, or a
    torch_npu value of a type torch has too (float8); ``None`` for the others (int4,
    hifloat8, float4 ...)."""
    return TORCH_SCALAR_TYPES.get(code, _TORCH_TYPES_OF_NPU_CODES.get(code))


def ge_dtype_of_code(code: int) -> DataType | None:
    """The GE type a dtype argument's value names (a ScalarType number or a torch_npu
    value: its ACL number is TorchAir's ``ge.DataType`` number), ``None`` for a value GE
    has no type for."""
    if code == QUINT4X2:
        return DataType.DT_INT4
    if code in TORCH_SCALAR_TYPES:
        return ge_dtype(TORCH_SCALAR_TYPES[code])
    return DTYPE_FROM_TORCHAIR_NUMBER.get(code - ACL_OFFSET) if code > ACL_OFFSET else None
