"""Converters of torch_npu's scatter operators (KV-cache writes), making the GE ops
TorchAir makes.

From TorchAir's converters (``ge_converter/custom/`` of torch_npu 2.13.0): the functional
forms write a ``TensorMove`` of their input (GE's scatter ops write in place), the
in-place forms write the input itself and are kept in the graph although no output
reads them (a control edge into ``NetOutput``): ``npu_scatter_nd_update(_)`` →
``ScatterNdUpdate``, ``scatter_update(_)`` → ``Scatter`` (reduce ``update``),
``npu_quant_scatter(_)`` → ``QuantUpdateScatter``, ``npu_scatter_list`` → a
``TensorMove`` per tensor + ``ScatterList``; ``npu_gather_backward`` → ``Fill`` of zeros +
``ScatterElements`` (reduction ``add``). Kernels: :mod:`fxlab.ir.kernels.npu_scatter`.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.model import DataType
from fxlab.ir.npu_dtypes import HIFLOAT8
from fxlab.passes.converters.npu import npu_converter
from fxlab.passes.converters.npu_builders import bitcast, npu_dtype, refuse
from fxlab.passes.converters.promotion import index_input
from fxlab.passes.converters.registry import Sample


# -- ScatterNdUpdate -----------------------------------------------------------------------------
def _scatter_nd_samples() -> list[Sample]:
    return [
        Sample((torch.zeros(2, 6, 4), torch.tensor([[[0, 1]], [[1, 3]]]), torch.randn(2, 1, 4))),
        Sample((torch.zeros(4, 8).half(), torch.tensor([[1], [3]], dtype=torch.int32), torch.randn(2, 8).half())),
    ]


def _scatter_nd(var: ge.Tensor, indices: ge.Tensor, updates: ge.Tensor) -> ge.Tensor:
    return ge.op("ScatterNdUpdate", {"var": var, "indices": indices, "updates": updates}, {"use_locking": False}, outputs=("var",))[0]


@npu_converter("npu_scatter_nd_update.default", _scatter_nd_samples)
def convert_scatter_nd_update(self: ge.Tensor, indices: ge.Tensor, updates: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_scatter_nd_update(Tensor self, Tensor indices, Tensor updates) -> Tensor"""
    return _scatter_nd(ge.op1("TensorMove", {"x": self}), indices, updates)


@npu_converter("npu_scatter_nd_update_.default", _scatter_nd_samples)
def convert_scatter_nd_update_(self: ge.Tensor, indices: ge.Tensor, updates: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_scatter_nd_update_(Tensor(a!) self, Tensor indices, Tensor updates) -> Tensor(a!)"""
    return ge.keep_to_the_end(_scatter_nd(self, indices, updates))


# -- Scatter (scatter_update) ---------------------------------------------------------------------
def _scatter_update_samples() -> list[Sample]:
    cache = torch.zeros(2, 2, 8, 4).half()
    return [
        Sample((cache, torch.tensor([3, 5]), torch.randn(2, 2, 1, 4).half(), -2)),
        Sample((torch.zeros(2, 6, 4), torch.tensor([1, 2], dtype=torch.int32), torch.randn(2, 2, 4), 1)),
    ]


def _scatter(data: ge.Tensor, indices: ge.Tensor, updates: ge.Tensor, axis: int) -> ge.Tensor:
    inputs = {"var": data, "indices": indices, "updates": updates}
    return ge.op("Scatter", inputs, {"reduce": "update", "axis": int(axis)}, outputs=("var",))[0]


@npu_converter("scatter_update.default", _scatter_update_samples)
def convert_scatter_update(self: ge.Tensor, indices: ge.Tensor, updates: ge.Tensor, axis: int, *, meta_outputs: Any = None) -> ge.Tensor:
    """scatter_update(Tensor self, Tensor indices, Tensor updates, int axis) -> Tensor"""
    return _scatter(ge.op1("TensorMove", {"x": self}), indices, updates, axis)


@npu_converter("scatter_update_.default", _scatter_update_samples)
def convert_scatter_update_(self: ge.Tensor, indices: ge.Tensor, updates: ge.Tensor, axis: int, *, meta_outputs: Any = None) -> ge.Tensor:
    """scatter_update_(Tensor(a!) self, Tensor indices, Tensor updates, int axis) -> Tensor(a!)"""
    return ge.keep_to_the_end(_scatter(self, indices, updates, axis))


# -- QuantUpdateScatter ----------------------------------------------------------------------------
def _quant_scatter_samples() -> list[Sample]:
    cache = torch.zeros(3, 8, 32, dtype=torch.int8)
    updates = torch.randn(3, 1, 32).bfloat16()
    return [
        Sample(
            (
                cache,
                torch.tensor([1, 4, 7], dtype=torch.int32),
                updates,
                torch.rand(1, 1, 32).bfloat16() * 20,
                torch.zeros(1, 1, 32).bfloat16(),
            )
        ),
        Sample(
            (cache, torch.tensor([0, 2, 3], dtype=torch.int32), updates, torch.rand(1, 1, 32).bfloat16() * 20),
            {"axis": -2, "quant_axis": -1},
        ),
    ]


_QUANT_SCATTER_ROUND_MODES = {DataType.DT_HIFLOAT8: ("round", "hybrid")}


@npu_converter("npu_quant_scatter.default", _quant_scatter_samples)
def convert_quant_scatter(
    self: ge.Tensor,
    indices: ge.Tensor,
    updates: ge.Tensor,
    quant_scales: ge.Tensor,
    quant_zero_points: ge.Tensor | None = None,
    axis: int = -2,
    quant_axis: int = -1,
    reduce: str = "update",
    dst_type: int | None = None,
    round_mode: str | None = "rint",
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_quant_scatter(Tensor self, Tensor indices, Tensor updates, Tensor quant_scales, Tensor? quant_zero_points=None, int axis=-2, int quant_axis=-1, str reduce='update', int? dst_type=None, str? round_mode='rint') -> Tensor"""
    target = DataType.DT_INT8 if dst_type is None else npu_dtype(dst_type)
    where = "custom/npu_quant_scatter.py"
    if target not in (DataType.DT_INT8, DataType.DT_FLOAT8_E4M3FN, DataType.DT_FLOAT8_E5M2, DataType.DT_HIFLOAT8):
        refuse(f"RuntimeError: dst_type:{dst_type} not supported", where)
    round_mode = round_mode or "rint"
    if round_mode not in _QUANT_SCATTER_ROUND_MODES.get(target, ("rint",)):
        refuse(f"RuntimeError: round_mode not supported for dst_type:{dst_type}", where)
    # TorchAir types the input itself as the result type (its desc, which its users copy).
    ge.set_dtype(self, target)
    if dst_type == HIFLOAT8:
        self = bitcast(self, DataType.DT_HIFLOAT8)
    copy = ge.set_dtype(ge.op1("TensorMove", {"x": self}), target)
    inputs = {"var": copy, "indices": indices, "updates": updates, "quant_scales": quant_scales, "quant_zero_points": quant_zero_points}
    attrs = {"reduce": reduce, "axis": int(axis), "quant_axis": int(quant_axis), "round_mode": round_mode}
    return ge.set_dtype(ge.op("QuantUpdateScatter", inputs, attrs, outputs=("var",))[0], target)


@npu_converter("npu_quant_scatter_.default", _quant_scatter_samples)
def convert_quant_scatter_(
    self: ge.Tensor,
    indices: ge.Tensor,
    updates: ge.Tensor,
    quant_scales: ge.Tensor,
    quant_zero_points: ge.Tensor | None = None,
    axis: int = 0,
    quant_axis: int = 1,
    reduce: str = "update",
    dst_type: int | None = None,
    round_mode: str | None = "rint",
    *,
    meta_outputs: Any = None,
) -> ge.Tensor:
    """npu_quant_scatter_(Tensor(a!) self, Tensor indices, Tensor updates, Tensor quant_scales, Tensor? quant_zero_points=None, int axis=-2, int quant_axis=-1, str reduce='update', int? dst_type=None, str? round_mode='rint') -> Tensor(a!)

    TorchAir's converter of the in-place form defaults axis to 0 and quant_axis to 1
    (the schema says -2 and -1) and writes no round_mode."""
    inputs = {"var": self, "indices": indices, "updates": updates, "quant_scales": quant_scales, "quant_zero_points": quant_zero_points}
    attrs = {"reduce": reduce, "axis": int(axis), "quant_axis": int(quant_axis), "round_mode": "rint"}
    return ge.keep_to_the_end(ge.op("QuantUpdateScatter", inputs, attrs, outputs=("var",))[0])


# -- ScatterList -----------------------------------------------------------------------------------
def _scatter_list_samples() -> list[Sample]:
    caches = [torch.zeros(2, 8, 4).half() for _ in range(3)]
    indices = torch.tensor([1, 6, 3], dtype=torch.int32)
    return [
        Sample((caches, indices, torch.randn(3, 2, 1, 4).half(), torch.tensor([1, 0, 1], dtype=torch.uint8))),
        Sample((caches, indices, torch.randn(3, 2, 2, 4).half(), torch.ones(3, dtype=torch.uint8)), {"axis": -2}),
    ]


@npu_converter("npu_scatter_list.default", _scatter_list_samples)
def convert_scatter_list(
    self: list[ge.Tensor],
    indices: ge.Tensor,
    updates: ge.Tensor,
    mask: ge.Tensor | None = None,
    reduce: str = "update",
    axis: int = -2,
    *,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_scatter_list(Tensor[] self, Tensor indices, Tensor updates, Tensor? mask=None, str reduce='update', int axis=-2) -> Tensor[]"""
    inputs: dict[str, ge.Tensor | None] = {f"var{i}": ge.op1("TensorMove", {"x": t}) for i, t in enumerate(self)}
    inputs.update(indice=indices, updates=updates, mask=mask)
    outputs = [f"var{i}" for i in range(len(self))]
    return ge.op("ScatterList", inputs, {"reduce": reduce, "axis": int(axis)}, outputs=outputs)


# -- gather backward -------------------------------------------------------------------------------
@npu_converter(
    "npu_gather_backward.default",
    lambda: [Sample((torch.randn(3, 2), [3, 5], 1, torch.tensor([[0, 4], [1, 1], [2, 3]]), False))],
)
def convert_gather_backward(
    grad: ge.Tensor, self_size: list[int], dim: int, index: ge.Tensor, sparse_grad: bool, *, meta_outputs: Any = None
) -> ge.Tensor:
    """npu_gather_backward(Tensor grad, SymInt[] self_size, int dim, Tensor index, bool sparse_grad) -> Tensor"""
    zero = ge.cast(ge.const(0), grad.dtype)
    # a size list with symbols arrives packed; an int list becomes its Const after the Cast
    zeros = ge.op1("Fill", {"dims": index_input(self_size), "value": zero})
    inputs = {"data": zeros, "indices": index, "updates": grad}
    return ge.op1("ScatterElements", inputs, {"axis": int(dim), "reduction": "add"})
