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
