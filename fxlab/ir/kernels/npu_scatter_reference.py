"""CPU reference math of torch_npu's scatter operators (KV-cache writes), shared by their
eager CPU kernels (registered here) and the kernels of the GE ops TorchAir makes for
them (:mod:`fxlab.ir.kernels.npu_scatter`).

``scatter_update`` and ``npu_quant_scatter`` write, for each batch ``b``, the slice of
``updates[b]`` into ``self[b]`` starting at ``indices[b]`` along ``axis`` (with 2-D
indices, row ``(batch, start)``), as torch_npu documents. The in-place forms write
``self`` and return it; the functional forms write a copy.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from fxlab.ir.kernels.npu_reference import cpu_kernel


@cpu_kernel("npu_scatter_nd_update_")
def scatter_nd_update_(self: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
    """``self[indices[..., 0], indices[..., 1], ...] = updates``, in place."""
    with torch.no_grad():
        self[tuple(indices.long().unbind(-1))] = updates.to(self.dtype)
    return self


@cpu_kernel("npu_scatter_nd_update")
def scatter_nd_update(self: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
    return scatter_nd_update_(self.clone(), indices, updates)


def _starts(indices: torch.Tensor) -> list[tuple[int, int]]:
    """(batch, start) pairs: 1-D indices give one start per batch, 2-D ones the pairs."""
    if indices.dim() == 1:
        return [(b, int(start)) for b, start in enumerate(indices.tolist())]
    return [(int(b), int(start)) for b, start in indices.tolist()]


def write_slices(self: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, axis: int) -> torch.Tensor:
    """``self[b]`` along ``axis`` from each start gets ``updates[b]``, in place."""
    axis = axis % self.dim()
    length = updates.shape[axis]
    with torch.no_grad():
        for row, (batch, start) in enumerate(_starts(indices)):
            self[batch].narrow(axis - 1, start, length).copy_(updates[row].to(self.dtype))
    return self


@cpu_kernel("scatter_update_")
def scatter_update_(self: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, axis: int) -> torch.Tensor:
    return write_slices(self, indices, updates, axis)


@cpu_kernel("scatter_update")
def scatter_update(self: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, axis: int) -> torch.Tensor:
    return write_slices(self.clone(), indices, updates, axis)


def quantised_updates(updates: torch.Tensor, scales: torch.Tensor, zero_points: torch.Tensor | None) -> torch.Tensor:
    """``round(updates * scales + zero_points)`` (half to even) as int8, the scales and
    zero points broadcast along the quantisation axis."""
    shifted = updates.float() * scales.float() + (zero_points.float() if zero_points is not None else 0.0)
    return torch.round(shifted).clamp(-128, 127).to(torch.int8)


@cpu_kernel("npu_quant_scatter_")
def quant_scatter_(
    self: torch.Tensor,
    indices: torch.Tensor,
    updates: torch.Tensor,
    quant_scales: torch.Tensor,
    quant_zero_points: torch.Tensor | None = None,
    axis: int = -2,
    quant_axis: int = -1,
    reduce: str = "update",
    dst_type: int | None = None,
    round_mode: str | None = "rint",
) -> torch.Tensor:
    """:func:`write_slices` of the int8-quantised updates, in place."""
    if reduce != "update" or dst_type not in (None, 1) or (round_mode or "rint") != "rint" or quant_axis not in (-1, updates.dim() - 1):
        raise NotImplementedError(
            "npu_quant_scatter: only reduce='update', int8 results, round_mode 'rint' and quant_axis -1 have a CPU reference kernel"
        )
    return write_slices(self, indices, quantised_updates(updates, quant_scales, quant_zero_points), axis)


@cpu_kernel("npu_quant_scatter")
def quant_scatter(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
    return quant_scatter_(self.clone(), *args, **kwargs)  # type: ignore[arg-type]


@cpu_kernel("npu_scatter_list")
def scatter_list(
    self: Sequence[torch.Tensor],
    indices: torch.Tensor,
    updates: torch.Tensor,
    mask: torch.Tensor | None = None,
    reduce: str = "update",
    axis: int = -2,
) -> list[torch.Tensor]:
    """Copies of the tensors of ``self``, one per batch: tensor ``b`` gets ``updates[b]``
    along ``axis`` from ``indices[b]`` on, unless ``mask[b]`` is 0."""
    if reduce != "update":
        raise NotImplementedError(f"npu_scatter_list: reduce={reduce!r} has no CPU reference kernel (update has)")
    out = [t.clone() for t in self]
    for batch, tensor in enumerate(out):
        if mask is None or bool(mask[batch]):
            dim = axis % tensor.dim()
            length = updates.shape[dim + 1]
            tensor.narrow(dim, int(indices[batch]), length).copy_(updates[batch].to(tensor.dtype))
    return out


@cpu_kernel("npu_gather_backward")
def gather_backward(grad: torch.Tensor, self_size: Sequence[int], dim: int, index: torch.Tensor, sparse_grad: bool) -> torch.Tensor:
    """The gradient of ``gather(self, dim, index)``: ``grad`` added into zeros at ``index``."""
    if sparse_grad:
        raise NotImplementedError("npu_gather_backward: sparse gradients have no CPU reference kernel")
    return torch.zeros(list(self_size), dtype=grad.dtype).scatter_add(dim, index.long(), grad)
