"""Kernels of the GE ops TorchAir makes for torch_npu's casts and prefetch that no other
family has: ``Cmo`` (a cache prefetch: it computes nothing and has no outputs), and the
eager CPU kernels of the cast operators.

``npu_format_cast`` changes how the device lays a tensor out in memory (ND, NZ, NC1HWC0
...), never its values or shape: on CPU every overload returns a copy, and its Meta
function (which torch_npu's Meta file has only for ``_npu_format_cast``) the same shape."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.npu_reference import cpu_kernel, meta_kernel
from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import IrOp
from fxlab.ir.npu_dtypes import torch_dtype_of_code


@register_kernel("Cmo")
def cmo(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return []


@cpu_kernel("_npu_dtype_cast", "_npu_dtype_cast_backward")
def npu_dtype_cast_old(self: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return self.to(dtype)


def _torch_type(code: int) -> torch.dtype:
    dtype = torch_dtype_of_code(code)
    if dtype is None:
        raise NotImplementedError(f"a cast to or from dtype code {code} (int4, float4, hifloat8) has no CPU reference kernel")
    return dtype


@cpu_kernel("npu_dtype_cast")
def npu_dtype_cast(self: torch.Tensor, dtype: int, input_dtype: int | None = None) -> torch.Tensor:
    """``self`` (read as ``input_dtype`` when given) cast to torch_npu dtype ``dtype``."""
    source = self.view(_torch_type(input_dtype)) if input_dtype is not None else self
    return source.to(_torch_type(dtype))


@cpu_kernel("npu_dtype_cast_backward")
def npu_dtype_cast_backward(
    self: torch.Tensor, dtype: torch.dtype, grad_dtype: int | None = None, input_dtype: int | None = None
) -> torch.Tensor:
    source = self.view(_torch_type(grad_dtype)) if grad_dtype is not None else self
    return source.to(_torch_type(input_dtype) if input_dtype is not None else dtype)


@cpu_kernel("npu_prefetch")
def npu_prefetch(self: torch.Tensor, dependency: torch.Tensor | None, max_size: int, offset: int = 0) -> None:
    """A prefetch into the device's cache: nothing to compute on CPU."""
    return None


@meta_kernel("npu_format_cast", "npu_format_cast.Tensor")
@cpu_kernel("npu_format_cast", "npu_format_cast.Tensor", "_npu_format_cast", "_npu_format_cast.aclnn", "_npu_format_cast.input_dtype")
def format_cast(self: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    return self.clone()
