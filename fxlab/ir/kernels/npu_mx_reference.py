"""MX (microscaling) quantisation as torch_npu's ``*_mx_quant`` operators compute it,
for their eager CPU kernels and the GE op kernels.

The OCP MX rule (scale_alg 0): values go in blocks of 32 along the last dim; a block's
shared scale is ``2 ** (floor(log2(max|x|)) - emax)`` with ``emax`` the element type's
largest exponent (float8 e4m3fn 8, e5m2 15, float4 e2m1 2), stored as an e8m0 byte
(exponent + 127); elements are ``x / scale`` rounded to the nearest value of the type,
ties to even, saturated. The scales of two neighbouring blocks sit side by side
(``(..., ceil(n / 64), 2)``), as torch_npu lays them out. float4 results are packed two
to a byte, the first in the low nibble (torch's ``float4_e2m1fn_x2`` order).
"""

from __future__ import annotations

import torch

from fxlab.ir.npu_dtypes import FLOAT4_X2, FLOAT8_TYPES

BLOCK = 32
_EMAX = {torch.float8_e5m2: 15, torch.float8_e4m3fn: 8, "e2m1": 2}
# float4 e2m1 magnitudes by code (sign in bit 3).
_E2M1_VALUES = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def element_type(code: int) -> torch.dtype | str:
    if code in FLOAT8_TYPES:
        return FLOAT8_TYPES[code]
    if code == FLOAT4_X2[0]:
        return "e2m1"
    raise NotImplementedError(f"MX quantisation to dtype code {code} (float4 e1m2, hifloat8) has no CPU reference kernel")


def e2m1_codes(x: torch.Tensor) -> torch.Tensor:
    """float4 e2m1 codes (uint8, 0-15) of ``x``: nearest value, ties to the even code."""
    magnitude = x.abs().clamp(max=6.0)
    distance = (magnitude.unsqueeze(-1) - _E2M1_VALUES).abs()
    best = distance.min(-1, keepdim=True).values
    tied = distance == best
    codes = torch.arange(8).expand_as(distance)
    # Among the nearest codes prefer an even one (mantissa bit 0), as ties go to even.
    choice = torch.where(tied, (codes % 2) * 16 + codes, torch.full_like(codes, 99)).argmin(-1)
    return (choice | ((x < 0) & (choice > 0)).to(torch.int64) << 3).to(torch.uint8)


def pack_e2m1(codes: torch.Tensor) -> torch.Tensor:
    """Two e2m1 codes to a byte along the last dim, the first in the low nibble."""
    pairs = codes.unflatten(-1, (-1, 2)).to(torch.int32)
    return (pairs[..., 0] | (pairs[..., 1] << 4)).to(torch.uint8)


def mx_quantize(x: torch.Tensor, code: int, scale_alg: int = 0, dst_type_max: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(values, e8m0 scale bytes (..., ceil(n / 64), 2)) of ``x`` along its last dim."""
    if scale_alg != 0 or dst_type_max:
        raise NotImplementedError("MX quantisation: scale_alg other than 0 and dst_type_max have no CPU reference kernel")
    kind = element_type(code)
    n = x.shape[-1]
    padded = -(-n // (2 * BLOCK)) * 2 * BLOCK
    blocks = torch.nn.functional.pad(x.float(), (0, padded - n)).unflatten(-1, (-1, BLOCK))
    amax = blocks.abs().amax(-1, keepdim=True)
    exponent = torch.where(amax > 0, torch.floor(torch.log2(amax)) - _EMAX[kind], torch.full_like(amax, -127.0)).clamp(-127, 127)
    scaled = (blocks / torch.exp2(exponent)).flatten(-2)[..., :n]
    scale_bytes = (exponent.squeeze(-1) + 127).to(torch.uint8).unflatten(-1, (-1, 2))
    if kind == "e2m1":
        return pack_e2m1(e2m1_codes(scaled)), scale_bytes
    assert isinstance(kind, torch.dtype)
    limit = float(torch.finfo(kind).max)
    return scaled.clamp(-limit, limit).to(kind), scale_bytes
