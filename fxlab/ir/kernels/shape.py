"""Kernels of GE shape, view, join/split and indexing ops.

GE tensors are dense, so each kernel returns a tensor of its own (``contiguous``/
``clone`` where torch would hand back a view): a later in-place op must never write
through to the input the way a torch view would.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import DTYPE_FROM_TORCHAIR_NUMBER, IrOp, torch_dtype

Inputs = list[Any]
Attrs = dict[str, Any]


def _ints(t: torch.Tensor) -> list[int]:
    return [int(v) for v in t.reshape(-1).tolist()]


def _dense(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().clone()


@register_kernel("Reshape")
def reshape(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    return [_dense(inputs[0]).reshape(_ints(inputs[1]))]


@register_kernel("Transpose")
def transpose(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    return [_dense(inputs[0].permute(_ints(inputs[1])))]


@register_kernel("Squeeze")
def squeeze(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    axes = list(attrs.get("axis", ()))
    x = inputs[0]
    return [_dense(x.squeeze(tuple(axes)) if axes else x.squeeze())]


@register_kernel("Unsqueeze")
def unsqueeze(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    x = inputs[0]
    rank = x.dim() + len(attrs["axes"])
    for axis in sorted(a % rank for a in attrs["axes"]):
        x = x.unsqueeze(axis)
    return [_dense(x)]


@register_kernel("BroadcastTo")
def broadcast_to(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    return [_dense(inputs[0].expand(_ints(inputs[1])))]


@register_kernel("Tile")
def tile(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    return [inputs[0].repeat(_ints(inputs[1]))]


@register_kernel("ReverseV2")
def reverse_v2(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    return [torch.flip(inputs[0], _ints(inputs[1]))]


@register_kernel("Bitcast")
def bitcast(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    try:
        target = torch_dtype(attrs["type"])
    except KeyError:
        raise NotImplementedError(f"Bitcast to {attrs['type'].name}: torch has no such CPU type") from None
    return [_dense(inputs[0]).view(target)]


@register_kernel("AsStrided")
def as_strided(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    x, size, stride, offset = inputs
    return [_dense(_dense(x).as_strided(_ints(size), _ints(stride), int(offset.item())))]


@register_kernel("Shape")
def shape(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    dtype = torch_dtype(DTYPE_FROM_TORCHAIR_NUMBER[attrs.get("dtype", 3)])
    return [torch.tensor(list(inputs[0].shape), dtype=dtype)]


def _gather(x: torch.Tensor, indices: torch.Tensor, axis: int, negative: bool) -> torch.Tensor:
    axis %= max(x.dim(), 1)
    flat = indices.reshape(-1).long()
    if negative:
        flat = torch.where(flat < 0, flat + x.shape[axis], flat)
    picked = x.index_select(axis, flat)
    return picked.reshape(tuple(x.shape[:axis]) + tuple(indices.shape) + tuple(x.shape[axis + 1 :]))


@register_kernel("Gather")
def gather(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    return [_gather(inputs[0], inputs[1], 0, attrs.get("negative_index_support", False))]


@register_kernel("GatherV2")
def gather_v2(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    x, indices, axis = inputs
    return [_gather(x, indices, _ints(axis)[0], attrs.get("negative_index_support", False))]


@register_kernel("GatherElements")
def gather_elements(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    return [torch.gather(inputs[0], attrs.get("dim", 0), inputs[1].long())]


@register_kernel("ScatterElements")
def scatter_elements(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    data, indices, updates = inputs
    reduction = attrs.get("reduction", "none")
    if reduction == "none":
        return [torch.scatter(data, attrs.get("axis", 0), indices.long(), updates)]
    return [
        torch.scatter_reduce(
            data, attrs.get("axis", 0), indices.long(), updates, {"add": "sum", "mul": "prod"}.get(reduction, str(reduction))
        )
    ]


@register_kernel("IndexByTensor")
def index_by_tensor(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    x, indices = inputs[0], iter(inputs[1:])
    key = tuple(next(indices).long() if flag else slice(None) for flag in attrs["indices_mask"])
    return [x[key]]


@register_kernel("StridedSliceV2")
def strided_slice_v2(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    x, begin, end, axes, strides = inputs
    begin, end = _ints(begin), _ints(end)
    axes = _ints(axes) if axes is not None else list(range(len(begin)))
    strides = _ints(strides) if strides is not None else [1] * len(begin)
    key: list[Any] = [slice(None)] * x.dim()
    for axis, start, stop, step in zip(axes, begin, end, strides):
        key[axis % x.dim()] = slice(start, stop, step)
    return [_dense(x[tuple(key)])]


@register_kernel("ConcatV2")
def concat_v2(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    *tensors, dim = inputs
    # GE joins scalars as one-element tensors (TorchAir's RNG offsets: ConcatV2 of two).
    tensors = [t.reshape(1) if t.dim() == 0 else t for t in tensors]
    return [torch.cat(tensors, int(dim.item()))]


@register_kernel("Pack")
def pack(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    tensors = [t if isinstance(t, torch.Tensor) else torch.tensor(t) for t in inputs]
    return [torch.stack(tensors, attrs.get("axis", 0))]


@register_kernel("SplitV")
def split_v(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    x, sizes, dim = inputs
    axis, sizes = int(dim.item()), _ints(sizes)
    if -1 in sizes:  # "the rest", as GE allows for one entry
        sizes[sizes.index(-1)] = x.shape[axis] - sum(s for s in sizes if s != -1)
    return [_dense(part) for part in torch.split(x, sizes, axis)]


@register_kernel("Unpack")
def unpack(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    return [_dense(part) for part in torch.unbind(inputs[0], attrs.get("axis", 0))]


@register_kernel("Fill")
def fill(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    dims, value = inputs
    return [torch.full(_ints(dims), value.item(), dtype=value.dtype)]


@register_kernel("Tril")
def tril(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    return [torch.tril(inputs[0], attrs.get("diagonal", 0))]


@register_kernel("Triu")
def triu(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    return [torch.triu(inputs[0], attrs.get("diagonal", 0))]


@register_kernel("ReduceProdD")
def reduce_prod_d(op: IrOp, inputs: Inputs, attrs: Attrs) -> list[Any]:
    x = inputs[0]
    axes = [a % max(x.dim(), 1) for a in attrs.get("axes", ())] or list(range(x.dim()))
    for axis in sorted(axes, reverse=True):
        x = torch.prod(x, axis, keepdim=attrs.get("keep_dims", False))
    return [x]
