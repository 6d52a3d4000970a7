"""CPU reference math of torch_npu's normalisation operators (RMSNorm and its fused
forms, their backward, GroupNorm+SiLU, the sync batch-norm statistics), shared by their
eager CPU kernels (registered here) and the kernels of the GE ops TorchAir makes for
them (:mod:`fxlab.ir.kernels.npu_norm`). Reductions run in float32, as the device's.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from fxlab.ir.kernels.npu_mx_reference import mx_quantize
from fxlab.ir.kernels.npu_quant_reference import cast_quantised, target_of, type_max
from fxlab.ir.kernels.npu_reference import cpu_kernel


# -- RMSNorm ------------------------------------------------------------------------------------
def _norm_dims(x: torch.Tensor, gamma: torch.Tensor) -> tuple[int, ...]:
    return tuple(range(x.dim() - gamma.dim(), x.dim()))


def normalised(x: torch.Tensor, gamma: torch.Tensor, epsilon: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(x * rstd * gamma in float32, rstd): rstd over gamma's (trailing) dims, kept as
    size-1 dims."""
    x32 = x.float()
    rstd = torch.rsqrt(x32.pow(2).mean(_norm_dims(x, gamma), keepdim=True) + epsilon)
    return x32 * rstd * gamma.float(), rstd


@cpu_kernel("npu_rms_norm")
def rms_norm(x: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, rstd)."""
    y, rstd = normalised(x, gamma, epsilon)
    return y.to(x.dtype), rstd


@cpu_kernel("npu_add_rms_norm")
def add_rms_norm(x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, ...]:
    """(y, rstd, x1 + x2)."""
    x = x1 + x2
    y, rstd = rms_norm(x, gamma, epsilon)
    return y, rstd, x


@cpu_kernel("npu_add_rms_norm_v2_functional")
def add_rms_norm_v2_functional(x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, ...]:
    """(rstd, y, x1 + x2): what the in-place form writes into x1 and x2, returned."""
    y, rstd, x = add_rms_norm(x1, x2, gamma, epsilon)
    return rstd, y, x


@cpu_kernel("npu_add_rms_norm_cast")
def add_rms_norm_cast(x1: torch.Tensor, x2: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, ...]:
    """(y as float32, y, rstd, x1 + x2)."""
    x = x1 + x2
    y, rstd = normalised(x, gamma, epsilon)
    return y, y.to(x.dtype), rstd, x


def quantised_rows(y: torch.Tensor, smooth: torch.Tensor | None, code: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row dynamic quantisation of ``y * smooth``: (values, scales)."""
    target = target_of(code)
    scaled = y * smooth.float() if smooth is not None else y
    scale = scaled.abs().amax(-1, keepdim=True) / type_max(target)
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    return cast_quantised(scaled / safe, target), scale.squeeze(-1)


@cpu_kernel("npu_add_rms_norm_dynamic_quant")
def add_rms_norm_dynamic_quant(
    x1: torch.Tensor,
    x2: torch.Tensor,
    gamma: torch.Tensor,
    *,
    smooth_scale1: torch.Tensor | None = None,
    smooth_scale2: torch.Tensor | None = None,
    beta: torch.Tensor | None = None,
    epsilon: float = 1e-6,
    output_mask: Sequence[bool] | None = None,
    y_dtype: int | None = None,
    unfused: bool = False,
) -> tuple[torch.Tensor, ...]:
    """(y1, y2, x1 + x2, scale1, scale2): y = RMSNorm(x1 + x2) * gamma (+ beta) quantised
    per row after each smoothing; an output not asked for (``output_mask``, or y2
    without both smoothings) is empty. The fused operator quantises y as computed, in
    float32 (its documented formula); ``unfused`` rounds y to the inputs' dtype first, as
    ``npu_add_rms_norm`` then ``npu_dynamic_quant`` compute it."""
    x = x1 + x2
    y, _ = normalised(x, gamma, epsilon)
    if beta is not None:
        y = y + beta.float()
    if unfused:
        y = y.to(x.dtype).float()
    wanted = list(output_mask) if output_mask is not None else [True, smooth_scale1 is not None and smooth_scale2 is not None]
    empty_y, empty_scale = torch.zeros(0, dtype=torch.int8), torch.zeros(0)
    y1, scale1 = quantised_rows(y, smooth_scale1, y_dtype) if wanted[0] else (empty_y, empty_scale)
    y2, scale2 = quantised_rows(y, smooth_scale2, y_dtype) if wanted[1] else (empty_y, empty_scale)
    return y1, y2, x, scale1, scale2


# -- backward -------------------------------------------------------------------------------------
def rms_norm_grads(dy: torch.Tensor, x: torch.Tensor, rstd: torch.Tensor, gamma: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(dx, dgamma) of ``y = x * rstd * gamma`` in float32."""
    dims = _norm_dims(x, gamma)
    rstd = rstd.reshape(*x.shape[: x.dim() - gamma.dim()], *([1] * gamma.dim()))  # given with or without the kept dims
    x_hat = x.float() * rstd.float()
    scaled = dy.float() * gamma.float()
    dx = rstd.float() * (scaled - x_hat * (scaled * x_hat).mean(dims, keepdim=True))
    dgamma = (dy.float() * x_hat).sum(tuple(range(x.dim() - gamma.dim())))
    return dx, dgamma


@cpu_kernel("npu_rms_norm_backward")
def rms_norm_backward(dy: torch.Tensor, x: torch.Tensor, gamma: torch.Tensor, rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(dx in x's dtype, dgamma in float32)."""
    dx, dgamma = rms_norm_grads(dy, x, rstd, gamma)
    return dx.to(x.dtype), dgamma


@cpu_kernel("_npu_rms_norm_backward_quant")
def rms_norm_backward_quant(
    dy: torch.Tensor,
    x: torch.Tensor,
    rstd: torch.Tensor,
    gamma: torch.Tensor,
    scale_x: torch.Tensor,
    *,
    offset_x: torch.Tensor | None = None,
    div_mode: bool | None = True,
    quant_mode: str = "static",
    dst_type: int | None = 1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(dx statically quantised: round(dx / scale (or * scale) + offset), dgamma)."""
    if quant_mode != "static":
        raise NotImplementedError(f"_npu_rms_norm_backward_quant: quant_mode {quant_mode!r} has no CPU reference kernel (static has)")
    dx, dgamma = rms_norm_grads(dy, x, rstd, gamma)
    scaled = dx / scale_x.float() if div_mode else dx * scale_x.float()
    if offset_x is not None:
        scaled = scaled + offset_x.float()
    return cast_quantised(scaled, target_of(dst_type)), dgamma


# -- GroupNorm + SiLU ----------------------------------------------------------------------------
@cpu_kernel("npu_group_norm_silu")
def group_norm_silu(
    input: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None, group: int, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(silu(group_norm(x) * weight + bias), mean, rstd); statistics per (sample, group)."""
    batch = input.shape[0]
    grouped = input.float().reshape(batch, group, -1)
    mean = grouped.mean(-1)
    rstd = torch.rsqrt(grouped.var(-1, unbiased=False) + eps)
    normed = ((grouped - mean.unsqueeze(-1)) * rstd.unsqueeze(-1)).reshape(input.shape)
    shape = [1, -1] + [1] * (input.dim() - 2)
    if weight is not None:
        normed = normed * weight.float().reshape(shape)
    if bias is not None:
        normed = normed + bias.float().reshape(shape)
    stats_dtype = weight.dtype if weight is not None and bias is not None else input.dtype
    return F.silu(normed).to(input.dtype), mean.to(stats_dtype), rstd.to(stats_dtype)


# -- sync batch norm -----------------------------------------------------------------------------
@cpu_kernel("batch_norm_gather_stats_update")
def batch_norm_gather_stats_update(
    input: torch.Tensor,
    mean: torch.Tensor,
    invstd: torch.Tensor,
    running_mean: torch.Tensor | None,
    running_var: torch.Tensor | None,
    momentum: float,
    eps: float,
    counts: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The global batch mean and invstd from each device's sum and sum of squares
    (``mean`` and ``invstd`` hold them, one row per device, as TorchAir's converter
    reads them) and sample counts."""
    return gathered_statistics(mean, invstd, counts, eps)


def gathered_statistics(
    sums: torch.Tensor, square_sums: torch.Tensor, counts: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean, 1 / sqrt(var + eps)) over every device's samples from their sums."""
    total = counts.to(torch.float64).sum()
    batch_mean = sums.double().sum(0) / total
    batch_var = square_sums.double().sum(0) / total - batch_mean.pow(2)
    return batch_mean.to(sums.dtype), torch.rsqrt(batch_var + eps).to(sums.dtype)


# -- RMSNorm with MX quantisation ---------------------------------------------------------------
@cpu_kernel("npu_rms_norm_dynamic_mx_quant")
def rms_norm_dynamic_mx_quant(
    x: torch.Tensor,
    gamma: torch.Tensor,
    *,
    beta: torch.Tensor | None = None,
    epsilon: float = 1e-6,
    scale_alg: int = 0,
    round_mode: str = "rint",
    dst_type: int = 296,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(MX-quantised RMSNorm(x) * gamma (+ beta), its e8m0 scales, rstd)."""
    if round_mode != "rint":
        raise NotImplementedError(f"MX quantisation with round_mode {round_mode!r} has no CPU reference kernel (rint has)")
    y, rstd = normalised(x, gamma, epsilon)
    if beta is not None:
        y = y + beta.float()
    values, scales = mx_quantize(y.to(x.dtype), dst_type, scale_alg)
    return values, scales, rstd


@cpu_kernel("npu_add_rms_norm_dynamic_mx_quant")
def add_rms_norm_dynamic_mx_quant(
    x1: torch.Tensor,
    x2: torch.Tensor,
    gamma: torch.Tensor,
    *,
    beta: torch.Tensor | None = None,
    epsilon: float = 1e-6,
    scale_alg: int = 0,
    round_mode: str = "rint",
    dst_type: int = 296,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(MX-quantised RMSNorm(x1 + x2) * gamma (+ beta), x1 + x2, scales, rstd)."""
    x = x1 + x2
    values, scales, rstd = rms_norm_dynamic_mx_quant(
        x, gamma, beta=beta, epsilon=epsilon, scale_alg=scale_alg, round_mode=round_mode, dst_type=dst_type
    )
    return values, x, scales, rstd
