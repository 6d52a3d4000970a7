"""Kernels of the GE ops TorchAir makes for torch_npu's scatter operators
(``ScatterNdUpdate``, ``Scatter``, ``QuantUpdateScatter``, ``ScatterList``), on the math of
:mod:`fxlab.ir.kernels.npu_scatter_reference`. Each writes its ref inputs (``var``) in
place and returns them, as GE does."""

from __future__ import annotations

from typing import Any

from fxlab.ir.kernels import npu_scatter_reference as ref
from fxlab.ir.kernels.npu_io import dynamic_inputs
from fxlab.ir.kernels.registry import named_inputs, register_kernel
from fxlab.ir.model import IrOp


@register_kernel("ScatterNdUpdate")
def scatter_nd_update(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    return [ref.scatter_nd_update_(n["var"], n["indices"], n["updates"])]


@register_kernel("Scatter")
def scatter(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    if attrs.get("reduce", "update") != "update":
        raise NotImplementedError(f"Scatter: reduce={attrs['reduce']!r} has no CPU reference kernel (update has)")
    return [ref.write_slices(n["var"], n["indices"], n["updates"], int(attrs.get("axis", 0)))]


@register_kernel("QuantUpdateScatter")
def quant_update_scatter(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    n = named_inputs(op, inputs)
    options = {key: attrs[key] for key in ("axis", "quant_axis", "reduce", "round_mode") if key in attrs}
    return [ref.quant_scatter_(n["var"], n["indices"], n["updates"], n["quant_scales"], n.get("quant_zero_points"), **options)]


@register_kernel("ScatterList")
def scatter_list(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Writes each ``var`` tensor in place and returns them."""
    n = named_inputs(op, inputs)
    tensors = dynamic_inputs(n, "var")
    written = ref.scatter_list(tensors, n["indice"], n["updates"], n.get("mask"), attrs.get("reduce", "update"), int(attrs.get("axis", -2)))
    for tensor, value in zip(tensors, written):
        tensor.copy_(value)
    return tensors
