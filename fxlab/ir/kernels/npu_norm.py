"""Kernels of the GE ops TorchAir makes for torch_npu's normalisation operators
(``RmsNorm``, ``AddRmsNorm``, ``AddRmsNormDynamicQuant``, ``RmsNormGrad``,
``GroupNormSilu`` ...), on the math of :mod:`fxlab.ir.kernels.npu_norm_reference`."""

from __future__ import annotations

from typing import Any

from fxlab.ir.kernels import npu_norm_reference as ref
from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.model import IrOp

# TorchAir's GE type numbers of quantised results -> torch_npu dtype codes.
_QUANT_CODES = {2: 1, 35: 23, 36: 24}


def _quant_code(number: int) -> int:
    if int(number) not in _QUANT_CODES:
        raise NotImplementedError(f"quantised results of GE type number {number} (int4, hifloat8) have no CPU reference kernel")
    return _QUANT_CODES[int(number)]


@register_kernel("RmsNorm")
def rms_norm(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return list(ref.rms_norm(n["x"], n["gamma"], attrs.get("epsilon", 1e-6)))


@register_kernel("AddRmsNorm")
def add_rms_norm(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return list(ref.add_rms_norm(n["x1"], n["x2"], n["gamma"], attrs.get("epsilon", 1e-6)))


@register_kernel("AddRmsNormCast")
def add_rms_norm_cast(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return list(ref.add_rms_norm_cast(n["x1"], n["x2"], n["gamma"], attrs.get("epsilon", 1e-6)))


@register_kernel("AddRmsNormDynamicQuant")
def add_rms_norm_dynamic_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Outputs not asked for are computed anyway (the graph replaces them by empty
    ``Const`` ops), as the device computes every output."""
    return _add_rms_norm_dynamic_quant(op, inputs, attrs, unfused=False)


def add_rms_norm_dynamic_quant_unfused(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """The same op with the rounding of the unfused operators TorchAir's pattern pass
    replaced by it (:mod:`fxlab.ir.approximations`)."""
    return _add_rms_norm_dynamic_quant(op, inputs, attrs, unfused=True)


def _add_rms_norm_dynamic_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any], unfused: bool) -> list[Any]:
    n = named_inputs(op, inputs)
    mask = attrs.get("output_mask") or None
    return list(
        ref.add_rms_norm_dynamic_quant(
            n["x1"],
            n["x2"],
            n["gamma"],
            smooth_scale1=n.get("smooth_scale1"),
            smooth_scale2=n.get("smooth_scale2"),
            beta=n.get("beta"),
            epsilon=attrs.get("epsilon", 1e-6),
            output_mask=mask,
            y_dtype=_quant_code(attrs.get("dst_type", 1)),
            unfused=unfused,
        )
    )


@register_kernel("RmsNormGrad")
def rms_norm_grad(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    dx, dgamma = ref.rms_norm_grads(n["dy"], n["x"], n["rstd"], n["gamma"])
    return [dx.to(n["x"].dtype), dgamma]


@register_kernel("RmsNormGradQuant")
def rms_norm_grad_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options = {
        "offset_x": n.get("offset_x"),
        "div_mode": attrs.get("div_mode", True),
        "quant_mode": attrs.get("quant_mode", "static"),
        "dst_type": _quant_code(attrs.get("dst_type", 2)),
    }
    return list(ref.rms_norm_backward_quant(n["dy"], n["x"], n["rstd"], n["gamma"], n["scale_x"], **options))


@register_kernel("GroupNormSilu")
def group_norm_silu(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return list(ref.group_norm_silu(n["x"], n.get("gamma"), n.get("beta"), int(attrs["num_groups"]), attrs.get("eps", 1e-4)))


@register_kernel("SyncBatchNormGatherStats")
def sync_batch_norm_gather_stats(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """(batch mean, batch invstd, running mean, running var) updated with momentum and the
    unbiased batch variance."""
    n = named_inputs(op, inputs)
    total_sum, total_square_sum, counts = n["total_sum"], n["total_square_sum"], n["sample_count"]
    eps, momentum = float(attrs.get("eps", 1e-5)), float(attrs.get("momentum", 0.1))
    mean, invstd = ref.gathered_statistics(total_sum, total_square_sum, counts, eps)
    total = counts.double().sum()
    unbiased = (1.0 / invstd.double().pow(2) - eps) * total / (total - 1)
    running_mean = (1 - momentum) * n["mean"].double() + momentum * mean.double()
    running_var = (1 - momentum) * n["variance"].double() + momentum * unbiased
    return [mean, invstd, running_mean.to(mean.dtype), running_var.to(mean.dtype)]


# TorchAir's GE type numbers of MX element types -> torch_npu dtype codes.
_MX_CODES = {35: 23, 36: 24}


def _mx_options(attrs: dict[str, Any]) -> dict[str, Any]:
    """The kernel options of an MX-quantising op; a float4 result (its default) has no
    CPU representation before TorchAir's graph packs it into bytes."""
    number = int(attrs.get("dst_type", 40))
    if number not in _MX_CODES:
        raise NotImplementedError(f"MX quantisation to GE type number {number} (float4) has no unpacked CPU representation")
    keys = ("epsilon", "scale_alg", "round_mode")
    return {"dst_type": _MX_CODES[number], **{k: attrs[k] for k in keys if k in attrs}}


@register_kernel("RmsNormDynamicMxQuant")
def rms_norm_dynamic_mx_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return list(ref.rms_norm_dynamic_mx_quant(n["x"], n["gamma"], beta=n.get("beta"), **_mx_options(attrs)))


@register_kernel("AddRmsNormDynamicMxQuant")
def add_rms_norm_dynamic_mx_quant(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return list(ref.add_rms_norm_dynamic_mx_quant(n["x1"], n["x2"], n["gamma"], beta=n.get("beta"), **_mx_options(attrs)))
