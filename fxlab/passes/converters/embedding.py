"""``_embedding_bag`` / ``_embedding_bag_forward_only`` → ``EmbeddingBag`` (the forward-only
form casts indices and offsets to int32 first, as TorchAir does)."""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.passes.converters.promotion import dtype_promote
from fxlab.passes.converters.registry import Sample, register_converter

aten = torch.ops.aten
MODES = {0: "sum", 1: "mean", 2: "max"}  # any other mode reads as mean, as in TorchAir
# TorchAir's converters default a missing mode to 1 (mean), ATen's schema to 0 (sum): the GE
# graph is TorchAir's (its departure from ATen is named in torchair_refusals.WRONG_RESULTS).
TORCHAIR_DEFAULT_MODE = 1


def _samples() -> list[Sample]:
    weight = torch.randn(10, 4)
    indices = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = torch.tensor([0, 3, 5])
    return [
        Sample((weight, indices, offsets), {"mode": 0}),
        Sample((weight, indices, offsets, False, 1)),
        Sample((weight, indices, offsets, False, 2)),
        Sample((weight, indices, offsets, False, 0, False, torch.rand(8))),
    ]


def _embedding_bag(
    weight: ge.Tensor,
    indices: ge.Tensor,
    offsets: ge.Tensor,
    scale_grad_by_freq: bool,
    mode: int,
    sparse: bool,
    per_sample_weights: ge.Tensor | None,
    include_last_offset: bool,
    padding_idx: int,
) -> list[ge.Tensor]:
    inputs = {"weight": weight, "indices": indices, "offsets": offsets, "per_sample_weights": per_sample_weights}
    attrs = {
        "mode": MODES.get(mode, "mean"),
        "scale_grad_by_freq": scale_grad_by_freq,
        "sparse": sparse,
        "include_last_offset": include_last_offset,
        "padding_idx": padding_idx,
    }
    return ge.op("EmbeddingBag", inputs, attrs, outputs=("y", "offset2bag", "bag_size", "max_indices"))


@register_converter(aten._embedding_bag.default, samples=_samples)
def convert_embedding_bag(
    weight: ge.Tensor,
    indices: ge.Tensor,
    offsets: ge.Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = TORCHAIR_DEFAULT_MODE,
    sparse: bool = False,
    per_sample_weights: ge.Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int = -1,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)"""
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset, padding_idx)


@register_converter(aten._embedding_bag_forward_only.default, samples=_samples)
def convert_embedding_bag_forward_only(
    weight: ge.Tensor,
    indices: ge.Tensor,
    offsets: ge.Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = TORCHAIR_DEFAULT_MODE,
    sparse: bool = False,
    per_sample_weights: ge.Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int = -1,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """_embedding_bag_forward_only(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)"""
    indices = dtype_promote(DataType.DT_INT32, indices)
    offsets = dtype_promote(DataType.DT_INT32, offsets)
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset, padding_idx)
