"""CPU reference math of torch_npu's activation operators (SwiGLU and its quantised and
clipped forms, GeGLU, GELU, fast GELU and their backward), shared by their eager CPU
kernels (registered here) and the kernels of the GE ops TorchAir makes for them
(:mod:`fxlab.ir.kernels.npu_activation`). Computed in float32.

A gated unit splits its input in halves A (first) and B (second) along ``dim``;
``activate_left`` picks which half the activation applies to (GeGLU: the right half
unless asked). The clipped (GPT-OSS) SwiGLU takes the even and odd elements instead:
``clamp(a, max=limit) * sigmoid(alpha * a) * (clamp(b, -limit, limit) + bias)``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from fxlab.ir.kernels.npu_mx_reference import mx_quantize
from fxlab.ir.kernels.npu_norm_reference import quantised_rows
from fxlab.ir.kernels.npu_reference import cpu_kernel

FAST_GELU_ALPHA = 1.702
_GELU_APPROXIMATIONS = {0: "none", 1: "tanh"}


# -- SwiGLU ---------------------------------------------------------------------------------------
@cpu_kernel("npu_swiglu")
def swiglu(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """silu(first half) * second half, halves split along ``dim``."""
    first, second = x.float().chunk(2, dim=dim)
    return (F.silu(first) * second).to(x.dtype)


@cpu_kernel("npu_swiglu_backward")
def swiglu_backward(grad_output: torch.Tensor, x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """The gradient of :func:`swiglu` with respect to ``x``."""
    first, second = x.float().chunk(2, dim=dim)
    sig = torch.sigmoid(first)
    grad = grad_output.float()
    d_first = grad * second * sig * (1 + first * (1 - sig))
    return torch.cat([d_first, grad * first * sig], dim=dim).to(x.dtype)


def clipped_glu(x: torch.Tensor, alpha: float, limit: float, bias: float) -> torch.Tensor:
    """GPT-OSS's clipped SwiGLU of the even (gate) and odd (linear) elements, last dim."""
    gate, linear = x[..., ::2].clamp(max=limit), x[..., 1::2].clamp(-limit, limit)
    return gate * torch.sigmoid(alpha * gate) * (linear + bias)


@cpu_kernel("npu_clipped_swiglu")
def clipped_swiglu(
    x: torch.Tensor,
    *,
    group_index: torch.Tensor | None = None,
    dim: int = -1,
    alpha: float = 1.702,
    limit: float = 7.0,
    bias: float = 1.0,
    interleaved: bool = True,
) -> torch.Tensor:
    """Clipped SwiGLU over ``dim``: gate and linear parts interleaved, or in halves."""
    if group_index is not None:
        raise NotImplementedError("npu_clipped_swiglu: group_index (rows past the groups left unwritten) has no CPU reference kernel")
    moved = x.float().movedim(dim, -1)
    if not interleaved:
        first, second = moved.chunk(2, dim=-1)
        moved = torch.stack([first, second], dim=-1).flatten(-2)
    return clipped_glu(moved, alpha, limit, bias).movedim(-1, dim).to(x.dtype)


# -- GELU family -----------------------------------------------------------------------------------
@cpu_kernel("npu_gelu")
def gelu(self: torch.Tensor, *, approximate: str = "none") -> torch.Tensor:
    return F.gelu(self.float(), approximate=approximate).to(self.dtype)


@cpu_kernel("npu_gelu_backward")
def gelu_backward(grad_output: torch.Tensor, self: torch.Tensor, *, approximate: str = "none") -> torch.Tensor:
    return torch.ops.aten.gelu_backward(grad_output.float(), self.float(), approximate=approximate).to(self.dtype)


@cpu_kernel("npu_fast_gelu", "fast_gelu")
def fast_gelu(self: torch.Tensor) -> torch.Tensor:
    """``x * sigmoid(1.702 x)``."""
    x = self.float()
    return (x * torch.sigmoid(FAST_GELU_ALPHA * x)).to(self.dtype)


@cpu_kernel("npu_fast_gelu_backward")
def fast_gelu_backward(grad: torch.Tensor, self: torch.Tensor) -> torch.Tensor:
    x = self.float()
    sig = torch.sigmoid(FAST_GELU_ALPHA * x)
    return (grad.float() * (sig + FAST_GELU_ALPHA * x * sig * (1 - sig))).to(self.dtype)


@cpu_kernel("npu_geglu")
def geglu(self: torch.Tensor, dim: int = -1, approximate: int = 1, activate_left: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """(A * gelu(B), gelu(B)), or (gelu(A) * B, gelu(A)) with ``activate_left``;
    approximate 0 is the erf form, 1 the tanh form."""
    first, second = self.float().chunk(2, dim=dim)
    gated, other = (first, second) if activate_left else (second, first)
    activated = F.gelu(gated, approximate=_GELU_APPROXIMATIONS[approximate])
    return (activated * other).to(self.dtype), activated.to(self.dtype)


@cpu_kernel("npu_gelu_quant")
def gelu_quant(
    self: torch.Tensor,
    *,
    input_scale: torch.Tensor | None = None,
    input_offset: torch.Tensor | None = None,
    approximate: str = "none",
    quant_mode: str = "dynamic",
    dst_type: int | None = None,
    round_mode: str = "rint",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Dynamic per-row quantisation of ``gelu(x) * input_scale``: (values, scales)."""
    if quant_mode != "dynamic" or input_offset is not None or round_mode != "rint":
        raise NotImplementedError(
            "npu_gelu_quant: static quantisation, input_offset and round modes other than rint have no CPU reference kernel"
        )
    return quantised_rows(F.gelu(self.float(), approximate=approximate), input_scale, dst_type)


# -- quantised SwiGLU ----------------------------------------------------------------------------
def _gated(x: torch.Tensor, activate_left: bool, swiglu_mode: int, clamp_limit: float, glu_alpha: float, glu_bias: float) -> torch.Tensor:
    if swiglu_mode == 1:
        return clipped_glu(x, glu_alpha, clamp_limit, glu_bias)
    first, second = x.chunk(2, dim=-1)
    gated, other = (first, second) if activate_left else (second, first)
    return F.silu(gated) * other


@cpu_kernel("npu_dequant_swiglu_quant")
def dequant_swiglu_quant(
    x: torch.Tensor,
    *,
    weight_scale: torch.Tensor | None = None,
    activation_scale: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    quant_scale: torch.Tensor | None = None,
    quant_offset: torch.Tensor | None = None,
    group_index: torch.Tensor | None = None,
    activate_left: bool = False,
    quant_mode: int = 0,
    dst_type: int | None = None,
    round_mode: int | None = None,
    activate_dim: int | None = None,
    swiglu_mode: int = 0,
    clamp_limit: float = 7.0,
    glu_alpha: float = 1.702,
    glu_bias: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """int32 matmul results dequantised (``* weight_scale * activation_scale`` per row,
    ``+ bias``), gated, then dynamically quantised per row after ``quant_scale``."""
    if quant_mode != 1 or group_index is not None or quant_offset is not None or (round_mode or 0) != 0 or (activate_dim or -1) != -1:
        raise NotImplementedError(
            "npu_dequant_swiglu_quant: static quantisation, group_index, quant_offset, round modes and activate_dim have no CPU reference kernel"
        )
    values = x.float()
    if weight_scale is not None:
        values = values * weight_scale.float()
    if activation_scale is not None:
        values = values * activation_scale.float().reshape(*values.shape[:-1], 1)
    if bias is not None:
        values = values + bias.float()
    gated = _gated(values, activate_left, swiglu_mode, clamp_limit, glu_alpha, glu_bias)
    return quantised_rows(gated, quant_scale, dst_type)


@cpu_kernel("npu_swiglu_mx_quant")
def swiglu_mx_quant(
    x: torch.Tensor,
    *,
    group_index: torch.Tensor | None = None,
    activate_dim: int = -1,
    activate_left: bool = False,
    swiglu_mode: int = 0,
    clamp_limit: float = 7.0,
    glu_alpha: float = 1.702,
    glu_bias: float = 1.0,
    group_mode: int = 0,
    axis: int = -1,
    dst_type: int = 296,
    round_mode: str = "rint",
    scale_alg: int = 0,
    max_dtype_value: float = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gated SwiGLU over the last dim, MX-quantised along the last dim."""
    if group_index is not None or activate_dim not in (-1, x.dim() - 1) or axis not in (-1, x.dim() - 1) or round_mode != "rint":
        raise NotImplementedError("npu_swiglu_mx_quant: group_index, other dims and round modes have no CPU reference kernel")
    gated = _gated(x.float(), activate_left, swiglu_mode, clamp_limit, glu_alpha, glu_bias).to(x.dtype)
    return mx_quantize(gated, dst_type, scale_alg, max_dtype_value)
