"""Matrix-product converters: mm, addmm, bmm, baddbmm, matmul.

What TorchAir does, and so fxlab: ``mm`` → ``MatMul``; ``addmm`` → ``MatMulV2`` then
``Mul`` by alpha and ``Add`` of the bias (``AxpyV2`` when beta is neither 0 nor 1; a
float16/bfloat16 row bias goes into ``MatMulV2``'s bias input instead). The
``Transpose`` of a Linear's weight comes from the ``t`` node before ``addmm``/``mm``, which
converts on its own. ``bmm`` → ``BatchMatMul``; ``baddbmm`` → ``BatchMatMul`` + ``Mul`` +
``Mul`` + ``Cast`` x2 + ``Add``.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType, ge_dtype
from fxlab.passes.converters.promotion import scalar_input
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten
_HALF_TYPES = (DataType.DT_FLOAT16, DataType.DT_BF16)


def _reject_int8(*tensors: ge.Tensor) -> None:
    if any(t.dtype == DataType.DT_INT8 for t in tensors):
        raise NotImplementedError("int8 matrix products have no GE mapping in TorchAir's converters")


def matmul(x1: ge.Tensor, x2: ge.Tensor, bias: ge.Tensor | None = None, *, dtype: DataType | None = None) -> ge.Tensor:
    attrs = {"transpose_x1": False, "transpose_x2": False}
    return ge.op1("MatMul", {"x1": x1, "x2": x2, "bias": bias}, attrs, dtypes=dtype)


def matmul_v2(x1: ge.Tensor, x2: ge.Tensor, bias: ge.Tensor | None = None, *, dtype: DataType | None = None) -> ge.Tensor:
    attrs = {"transpose_x1": False, "transpose_x2": False, "offset_x": 0}
    return ge.op1("MatMulV2", {"x1": x1, "x2": x2, "bias": bias, "offset_w": None}, attrs, dtypes=dtype)


def batch_matmul(x1: ge.Tensor, x2: ge.Tensor) -> ge.Tensor:
    return ge.op1("BatchMatMul", {"x1": x1, "x2": x2}, {"adj_x1": False, "adj_x2": False})


def mul(x1: ge.Tensor, x2: ge.Tensor) -> ge.Tensor:
    return ge.op1("Mul", {"x1": x1, "x2": x2})


def add(x1: ge.Tensor, x2: ge.Tensor) -> ge.Tensor:
    return ge.op1("Add", {"x1": x1, "x2": x2})


@register_converter(
    aten.mm.default,
    samples=lambda: [Sample((torch.randn(3, 4), torch.randn(4, 5))), Sample((torch.randn(2, 3).half(), torch.randn(3, 2).half()))],
)
def convert_mm(self: ge.Tensor, mat2: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """mm(Tensor self, Tensor mat2) -> Tensor"""
    _reject_int8(self, mat2)
    return matmul(self, mat2)


def _addmm_samples() -> list[Sample]:
    return [
        Sample((torch.randn(5), torch.randn(3, 4), torch.randn(4, 5))),
        Sample((torch.randn(3, 5), torch.randn(3, 4), torch.randn(4, 5)), {"beta": 0.5, "alpha": 2.0}),
        Sample((torch.randn(5), torch.randn(3, 4), torch.randn(4, 5)), {"beta": 0}),
        Sample((torch.randn(3, 5), torch.randn(3, 4), torch.randn(4, 5)), {"alpha": 0}),
        Sample((torch.randn(5).half(), torch.randn(3, 4).half(), torch.randn(4, 5).half()), {"beta": 2}),
    ]


def _bias_fits_matmul(bias: ge.Tensor, mat2: ge.Tensor) -> bool:
    """TorchAir feeds a half-precision bias of shape [N] or [1, N] to MatMulV2 directly."""
    if bias.dtype not in _HALF_TYPES:
        return False
    if bias.rank == 1:
        return True
    return bias.rank == 2 and bias.shape[0] == 1 and bias.shape[1] == mat2.shape[1]


@register_converter(aten.addmm.default, samples=_addmm_samples)
def convert_addmm(
    self: ge.Tensor, mat1: ge.Tensor, mat2: ge.Tensor, *, beta: Any = 1, alpha: Any = 1, meta_outputs: Any = None
) -> ge.Tensor:
    """addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    target = ge_dtype(meta_outputs.dtype)
    mat1, mat2, self = ge.promote(target, mat1, mat2, self)
    alpha_t, beta_t = ge.promote(target, alpha, beta)
    if float(alpha) == 0.0:
        return mul(self, beta_t)
    if _bias_fits_matmul(self, mat2):
        if float(beta) != 1.0:
            self = mul(self, beta_t)
        if float(alpha) != 1.0:
            mat1 = mul(mat1, alpha_t)
        return matmul_v2(mat1, mat2, self)
    product = mul(matmul_v2(mat1, mat2, dtype=target), alpha_t)
    if float(beta) == 0.0:
        return product
    if float(beta) == 1.0:
        return add(product, self)
    return ge.op1("AxpyV2", {"x1": product, "x2": self, "alpha": beta_t})


@register_converter(aten.bmm.default, samples=lambda: [Sample((torch.randn(2, 3, 4), torch.randn(2, 4, 5)))])
def convert_bmm(self: ge.Tensor, mat2: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """bmm(Tensor self, Tensor mat2) -> Tensor"""
    _reject_int8(self, mat2)
    self, mat2 = ge.promote(ge_dtype(meta_outputs.dtype), self, mat2)
    return batch_matmul(self, mat2)


def _baddbmm_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5))),
        Sample((torch.randn(3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5)), {"beta": 0.5, "alpha": 2.0}),
    ]


@register_converter(aten.baddbmm.default, samples=_baddbmm_samples)
def convert_baddbmm(
    self: ge.Tensor, batch1: ge.Tensor, batch2: ge.Tensor, *, beta: Any = 1, alpha: Any = 1, meta_outputs: Any = None
) -> ge.Tensor:
    """baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    target = ge_dtype(meta_outputs.dtype)
    product = batch_matmul(batch1, batch2)
    # TorchAir lets the raw-op wrapper type alpha and beta (an int becomes an int64 Const:
    # GE's Mul promotes its two input types), then casts both products to the output type
    # (their types are unknown to it at that point), so the two Casts are there even when
    # they change nothing.
    scaled_product = mul(product, scalar_input(alpha, product))
    scaled_self = mul(self, scalar_input(beta, self))
    return add(ge.cast(scaled_product, target), ge.cast(scaled_self, target))


def _matmul_samples() -> list[Sample]:
    return [
        Sample((torch.randn(3, 4), torch.randn(4, 5))),
        Sample((torch.randn(2, 3, 4), torch.randn(4, 5))),
        Sample((torch.randn(2, 3, 4), torch.randn(2, 4, 2))),
    ]


@register_converter(aten.matmul.default, samples=_matmul_samples)
def convert_matmul(self: ge.Tensor, other: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """matmul(Tensor self, Tensor other) -> Tensor"""
    # ATen decomposes matmul before a functional graph is made; the converter exists for
    # graphs built by hand or by custom passes, as TorchAir's does.
    _reject_int8(self, other)
    if self.rank >= 3 or other.rank >= 3:
        self, other = ge.promote(ge_dtype(meta_outputs.dtype), self, other)
        return batch_matmul(self, other)
    return matmul(self, other)
