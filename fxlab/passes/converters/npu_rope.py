"""Converters of torch_npu's rotary position embeddings, as TorchAir makes them on an
Atlas A2/A3 SoC (not arch35).

``npu_apply_rotary_pos_emb`` → ``TensorMove`` of query and key + ``ApplyRotaryPosEmb``
(the op writes its inputs), ``npu_rotary_mul`` → ``RotaryMul`` (``rotary_mode`` is not
passed on), or ``RotaryPositionEmbedding`` with a rotation matrix, ``npu_rotary_mul_backward``
→ ``RotaryMulGrad`` (4-D, last dim a multiple of 64), ``npu_interleave_rope`` →
``InterleaveRope``. The reference kernels are in :mod:`fxlab.ir.kernels.npu_rope`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import compact_op, refuse, tensor_move
from fxlab.passes.converters.registry import Sample

# ApplyRotaryPosEmb's layout attr: TorchAir's numbers for the layout strings.
ROTARY_LAYOUTS = {"BSH": 1, "BSND": 1, "SBND": 2, "BNSD": 3, "TND": 4}
ROTARY_MODES = ("half", "quarter", "interleave")
# RotaryPositionEmbedding's mode attr on A2/A3
MATRIX_MODES = {"half": 0, "interleave": 1}
# Broadcast elements RotaryMulGrad reduces over at most
MAX_BROADCAST = 1024


def _rotary_samples() -> list[Sample]:
    q, k = torch.randn(2, 3, 4, 8), torch.randn(2, 3, 2, 8)
    cos, sin = torch.randn(2, 3, 1, 8), torch.randn(2, 3, 1, 8)
    return [
        Sample((q, k, cos, sin, "BSND")),
        Sample(
            (q.transpose(1, 2).contiguous(), k.transpose(1, 2).contiguous(), cos.transpose(1, 2), sin.transpose(1, 2), "BNSD", "interleave")
        ),
        Sample(
            (torch.randn(5, 4, 16).half(), torch.randn(5, 1, 16).half(), torch.randn(5, 1, 16).half(), torch.randn(5, 1, 16).half(), "TND")
        ),
    ]


@npu_converter("npu_apply_rotary_pos_emb.default", _rotary_samples)
def convert_apply_rotary_pos_emb(
    query: ge.Tensor,
    key: ge.Tensor,
    cos: ge.Tensor,
    sin: ge.Tensor,
    layout: str = "BSND",
    rotary_mode: str = "half",
    *,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_apply_rotary_pos_emb(Tensor query, Tensor key, Tensor cos, Tensor sin, str layout='BSND', str rotary_mode='half') -> (Tensor, Tensor)"""
    if layout not in ROTARY_LAYOUTS:
        refuse(f"NotImplementedError: layout {layout!r} (only BSH, BSND, SBND, BNSD, TND)")
    if rotary_mode not in ROTARY_MODES:
        refuse(f"NotImplementedError: rotary_mode {rotary_mode!r} (only half, quarter, interleave)")
    inputs = {"query": tensor_move(query), "key": tensor_move(key), "cos": cos, "sin": sin}
    attrs = {"layout": ROTARY_LAYOUTS[layout], "rotary_mode": rotary_mode}
    return compact_op("ApplyRotaryPosEmb", inputs, attrs, {"layout": 1, "rotary_mode": "half"}, outputs=("query", "key"))


def _half_matrix(dim: int) -> torch.Tensor:
    """The matrix ``m`` with ``x @ m`` = half mode's rotation of ``x``."""
    m = torch.zeros(dim, dim)
    half = dim // 2
    m[:half, half:] = torch.eye(half)
    m[half:, :half] = -torch.eye(half)
    return m


def _rotary_mul_samples() -> list[Sample]:
    x = torch.randn(2, 4, 3, 64).half()
    cos, sin = torch.randn(1, 1, 3, 64).half(), torch.randn(1, 1, 3, 64).half()
    return [
        Sample((x, cos, sin)),
        Sample((x, cos, sin, "half", _half_matrix(64).half())),
        Sample((torch.randn(2, 3, 4, 8), torch.randn(1, 3, 1, 8), torch.randn(1, 3, 1, 8))),
    ]


@npu_converter("npu_rotary_mul.default", _rotary_mul_samples)
def convert_rotary_mul(
    self: ge.Tensor, r1: ge.Tensor, r2: ge.Tensor, rotary_mode: str = "half", rotate: ge.Tensor | None = None, *, meta_outputs: Any = None
) -> ge.Tensor:
    """npu_rotary_mul(Tensor self, Tensor r1, Tensor r2, str rotary_mode="half", Tensor? rotate=None) -> Tensor"""
    if rotate is None:
        # TorchAir does not pass rotary_mode to RotaryMul, which rotates halves.
        return ge.op1("RotaryMul", {"x": self, "r1": r1, "r2": r2})
    if rotary_mode not in MATRIX_MODES:
        refuse(f"NotImplementedError: rotary_mode {rotary_mode!r} (only half and interleave on Atlas A2/A3)")
    inputs = {"x": self, "cos": r1, "sin": r2, "rotate": rotate}
    return compact_op("RotaryPositionEmbedding", inputs, {"mode": MATRIX_MODES[rotary_mode]}, {"mode": 0})[0]


def _rotary_mul_backward_samples() -> list[Sample]:
    x, grad = torch.randn(2, 3, 2, 64), torch.randn(2, 3, 2, 64)
    return [
        Sample((grad, x, torch.randn(1, 3, 1, 64), torch.randn(1, 3, 1, 64))),
        Sample((grad.half(), x.half(), torch.randn(2, 3, 2, 64).half(), torch.randn(2, 3, 2, 64).half())),
    ]


def _broadcast_fits(x: ge.Tensor, r1: ge.Tensor) -> bool:
    count = 1
    for x_dim, r_dim in zip(x.shape, r1.shape):
        if x_dim != r_dim:
            count *= x_dim
        if count > MAX_BROADCAST:
            return False
    return True


@npu_converter("npu_rotary_mul_backward.default", _rotary_mul_backward_samples)
def convert_rotary_mul_backward(
    grad: ge.Tensor,
    self: ge.Tensor,
    r1: ge.Tensor,
    r2: ge.Tensor,
    rotary_mode: str = "half",
    *,
    need_backward: bool = True,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_rotary_mul_backward(Tensor grad, Tensor self, Tensor r1, Tensor r2, str rotary_mode="half") -> (Tensor, Tensor, Tensor)"""
    if self.rank != 4 or r1.rank != 4 or r2.rank != 4:
        refuse("RuntimeError: inputs that are not 4-D")
    if any(not isinstance(d, int) for t in (grad, self, r1, r2) for d in (t.symsize or t.shape)):  # TorchAir reads symsize
        refuse("NotImplementedError: symbolic sizes")
    if self.shape[3] % 64 != 0 or not _broadcast_fits(self, r1):
        refuse("NotImplementedError: a last dimension that is not a multiple of 64, or r1 not broadcasting to x")
    inputs = {"x": self, "r1": r1, "r2": r2, "dy": grad}
    return ge.op("RotaryMulGrad", inputs, {"need_backward": need_backward}, outputs=("dx", "dr1", "dr2"))


@npu_converter(
    "npu_interleave_rope.default",
    lambda: [Sample((torch.randn(2, 1, 3, 64).half(), torch.randn(2, 1, 3, 64).half(), torch.randn(2, 1, 3, 64).half()))],
)
def convert_interleave_rope(x: ge.Tensor, cos: ge.Tensor, sin: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_interleave_rope(Tensor x, Tensor cos, Tensor sin) -> Tensor"""
    return ge.op1("InterleaveRope", {"x": x, "cos": cos, "sin": sin})
