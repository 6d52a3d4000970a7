"""A reference executor: run an Ascend IR graph on CPU with torch, to check conversion
numerically against eager.

Each GE op type has a kernel: ``kernel(op, inputs, attrs) -> list[Tensor]`` where
``inputs`` are torch tensors (``None`` for absent optional inputs) and ``attrs`` plain
Python values. Semantics that matter for in-place conversion:

- ``Data`` reads graph input ``index`` itself (not a copy), so ops that write their
  input in place (``Assign``, ref outputs of in-place GE ops) mutate the caller's tensor,
  as GE does with memory the user passed in;
- ``TensorMove`` copies; an in-place op's kernel writes into its ref input and returns
  that same tensor as its ref output (a ref output is named as its input, GE's rule);
- every other output is the op's own memory, as GE allocates it: a kernel may return a
  view of its input (``Identity``, ``Reshape``), and the executor copies such an output,
  so a later write into the input (an ``Assign`` mapped to a graph output) leaves it be.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from fxlab.ir import kernels  # noqa: F401 - registers the reference kernels
from fxlab.ir.concrete_shapes import size_bindings, with_concrete_descs
from fxlab.ir.graph_inputs import graph_input_index, sym_pack_value
from fxlab.ir.kernels.registry import KERNEL_RESOLVERS, KERNELS, Kernel
from fxlab.ir.kernels.rng import rng_offsets
from fxlab.ir.model import Attr, AttrKind, IrGraph, IrOp


class ExecutionError(RuntimeError):
    """An op of the graph could not run; ``fx_node``: the FX node it came from."""

    def __init__(self, message: str, fx_node: str | None = None) -> None:
        super().__init__(message)
        self.fx_node = fx_node


def plain_attrs(op: IrOp) -> dict[str, Any]:
    return {k: _plain(v) for k, v in op.attrs.items()}


def _plain(attr: Attr) -> Any:
    if attr.kind is AttrKind.TENSOR:
        return attr.value.to_torch()
    return attr.value


def _kernel_for(op: IrOp) -> Kernel | None:
    for resolve in KERNEL_RESOLVERS:
        kernel = resolve(op)
        if kernel is not None:
            return kernel
    return KERNELS.get(op.type)


def execute(
    graph: IrGraph, inputs: Sequence[torch.Tensor], values: dict[str, Any] | None = None, kernels_by_op: Mapping[str, Kernel] | None = None
) -> list[torch.Tensor]:
    """Run ``graph`` on the graph inputs ``inputs`` (each ``Data`` reads the one its
    index stands for: :mod:`fxlab.ir.graph_inputs`); return the ``NetOutput`` inputs.
    ``values``, when given, receives every tensor of the run by ``op:index`` (the values
    of ops nothing reads too). ``kernels_by_op`` runs the named ops with other kernels
    than their type's (e.g. the exact form of a GE approximation). Raises
    :class:`ExecutionError` naming the op that failed."""
    values = {} if values is None else values
    outputs: list[Any] = []
    # Inputs first: a Data op may follow the ops reading it (TorchAir appends the one its
    # optimize_sym_pack makes after the graph's other ops).
    for op in graph.ops:
        if op.type == "Data":
            values[f"{op.name}:0"] = _graph_input(graph, op, inputs)
    sizes = size_bindings(graph, values)  # a graph with symbolic sizes: this run's
    for op in graph.ops:
        if op.type == "Data":
            continue
        args = [None if not ref else values[ref] for ref in op.data_inputs]
        if op.type == "NetOutput":
            outputs = list(args)
            continue
        kernel = kernels_by_op.get(op.name) if kernels_by_op else None
        kernel = kernel or _kernel_for(op)
        if kernel is None:
            raise ExecutionError(f"no reference kernel for GE op type {op.type} (op {op.name}, from FX node {op.fx_node})", op.fx_node)
        try:
            results = _own_buffers(op, args, kernel(with_concrete_descs(op, sizes), args, plain_attrs(op)))
        except Exception as exc:
            raise ExecutionError(f"{op.type} op {op.name} (from FX node {op.fx_node}) failed: {exc}", op.fx_node) from exc
        for index, value in enumerate(results):
            values[f"{op.name}:{index}"] = value
    return outputs


def _graph_input(graph: IrGraph, op: IrOp, inputs: Sequence[torch.Tensor]) -> torch.Tensor:
    """What a ``Data`` op reads: the RNG offsets, which the runtime feeds (see
    :func:`fxlab.ir.kernels.rng.rng_offsets`), or the graph input its index stands for
    (:mod:`fxlab.ir.graph_inputs`)."""
    offsets = rng_offsets(op, len(inputs))
    if offsets is not None:
        return offsets
    packed = sym_pack_value(op, inputs)
    return packed if packed is not None else inputs[graph_input_index(graph, op.attr_value("index"))]


def _own_buffers(op: IrOp, inputs: list[Any], results: list[Any]) -> list[Any]:
    """``results`` with each output that shares memory with an input copied, except ref
    outputs (named as the input they write)."""
    input_names = [d.name for d in op.input_desc]
    names_by_storage: dict[int, set[str | None]] = {}
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            names_by_storage.setdefault(_storage(x), set()).add(input_names[i] if i < len(input_names) else None)
    if not names_by_storage:
        return results
    owned = list(results)
    for index, value in enumerate(results):
        if not isinstance(value, torch.Tensor) or _storage(value) not in names_by_storage:
            continue
        name = op.output_desc[index].name if index < len(op.output_desc) else None
        if name is not None and name in names_by_storage[_storage(value)]:
            continue  # a ref output: the input's memory, written in place
        owned[index] = value.clone()
    return owned


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()
