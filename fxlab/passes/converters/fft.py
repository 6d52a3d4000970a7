"""``_fft_c2c`` → ``FFT`` (one dim) or ``FFT2D`` (two dims), as TorchAir builds it: the
transformed dims are permuted last (through a float32 ``[..., 2]`` view of the complex
tensor, since ``Permute`` takes real types), transformed, normalised, and permuted back.

TorchAir's converter ignores ``forward``: an inverse transform (``ifft``) becomes the
forward ``FFT`` too, so its result differs from eager; fxlab builds the same graph and the
reference run shows that difference.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.converters.promotion import dtype_promote, scalar_input
from fxlab.passes.converters.registry import Sample, register_converter
from fxlab.passes.converters.shape import gather_dim, shape_of, squeeze

aten = torch.ops.aten
BY_SIZE, BY_ROOT_SIZE = 2, 1  # ATen's normalization codes: 1/n, 1/sqrt(n) (0: none)


def _complex_to_float(x: ge.Tensor) -> ge.Tensor:
    """A complex64 tensor as float32 ``[..., 2]`` (real, imaginary)."""
    real = ge.op("Real", {"input": x}, {"Tout": DataType.DT_FLOAT}, outputs=("output",), dtypes=DataType.DT_FLOAT)[0]
    imag = ge.op("Imag", {"input": x}, {"Tout": DataType.DT_FLOAT}, outputs=("output",), dtypes=DataType.DT_FLOAT)[0]
    return ge.op1("Pack", {"x0": real, "x1": imag}, {"axis": -1, "N": 2})


def _float_to_complex(x: ge.Tensor) -> ge.Tensor:
    sizes, split_dim = scalar_input([1, -1]), scalar_input(-1)
    real, imag = ge.op("SplitV", {"x": x, "size_splits": sizes, "split_dim": split_dim}, {"num_split": 2}, outputs=("y0", "y1"))
    real, imag = squeeze(real, [-1]), squeeze(imag, [-1])
    real, imag = dtype_promote(DataType.DT_FLOAT, real, imag)
    return ge.op("Complex", {"real": real, "imag": imag}, {"Tout": DataType.DT_COMPLEX64}, outputs=("out",), dtypes=DataType.DT_COMPLEX64)[
        0
    ]


def _permute(x: ge.Tensor, order: list[int]) -> ge.Tensor:
    return ge.op1("Permute", {"x": x}, {"order": list(order)})


def _normalize(x: ge.Tensor, normalization: int, rank: int, signal: int) -> ge.Tensor:
    """Divide by the transformed size (or its root); TorchAir computes that size in the
    graph even when nothing divides by it."""
    sizes = shape_of(x)
    count: Any = 1
    for s in range(signal):
        size = gather_dim(sizes, rank - 1 - s)
        count = ge.op1("Mul", {"x1": size, "x2": scalar_input(count) if not isinstance(count, ge.Tensor) else count})
    count = ge.cast(count, DataType.DT_COMPLEX64)
    if normalization == BY_ROOT_SIZE:
        return ge.op1("RealDiv", {"x1": x, "x2": ge.op1("Sqrt", {"x": count})})
    if normalization == BY_SIZE:
        return ge.op1("RealDiv", {"x1": x, "x2": count})
    return x


def _transform(self: ge.Tensor, op_type: str, order: list[int], back: list[int], normalization: int, signal: int) -> ge.Tensor:
    moved = _float_to_complex(_permute(_complex_to_float(self), order))
    transformed = _normalize(ge.op1(op_type, {"x": moved}), normalization, self.rank, signal)
    return _float_to_complex(_permute(_complex_to_float(transformed), back))


def _samples() -> list[Sample]:
    x = torch.randn(3, 4, 5, dtype=torch.complex64)
    return [
        Sample((x, [2], 0, True)),
        Sample((x, [1], 2, True)),
        Sample((torch.randn(4, 6, dtype=torch.complex64), [0], 1, True)),
        Sample((x, [1, 2], 0, True)),
        Sample((x, [0, 2], 2, True)),
    ]


@register_converter(aten._fft_c2c.default, samples=_samples)
def convert_fft_c2c(self: ge.Tensor, dim: Any, normalization: int, forward: bool, meta_outputs: Any = None) -> ge.Tensor:
    """_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor"""
    rank = self.rank
    if isinstance(dim, ge.Tensor):
        raise NotImplementedError("_fft_c2c over dims given as a tensor is not converted (as in TorchAir)")
    if any(d < 0 or d >= rank for d in dim):
        raise ValueError(f"_fft_c2c dims {list(dim)} are out of range for a {rank}-D input")
    order = list(range(rank))
    if len(dim) == 1:
        order[-1], order[dim[0]] = dim[0], order[-1]  # swap the dim with the last one
        return _transform(self, "FFT", order, order, normalization, 1)
    if len(dim) == 2:
        moved = [d for d in order if d not in dim] + [d for d in order if d in dim]
        back = [moved.index(d) for d in order]
        return _transform(self, "FFT2D", moved, back, normalization, 2)
    raise NotImplementedError("_fft_c2c over more than two dims is not converted (as in TorchAir)")
