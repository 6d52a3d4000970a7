"""The reference of the one GE op a converter emits for a custom op: the op's own CPU kernel.

A TorchAir-style converter of a custom op (a plugin's ``register_fx_node_ge_converter``,
or the converter given to :func:`fxlab.ops.define_op`) usually emits one GE op of the
op's Ascend C type, which no CPU reference kernel of fxlab's knows. That one op computes
what the custom op computes, so the IR check runs the custom op's own CPU kernel in its
place: the GE op's data inputs are the converter's tensor arguments, its outputs the
tensors the converter returns, and an output named like an input is that input written in
place (GE's ref convention). The check then verifies the converter's wiring (which input
is which argument, which output is returned), not the Ascend C kernel, and says so. A
converter that emits several ops needs a reference kernel per GE type it emits
(:func:`fxlab.ops.reference_kernel`); so does an argument this cannot record (a dtype, a
size only known at run time).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from fxlab.ir.builder import Tensor
from fxlab.ir.kernels.inplace import TORCH_CALL_ATTR, TORCH_OP_ATTR
from fxlab.ir.kernels.registry import KERNELS
from fxlab.ir.model import Attr, AttrKind, IrOp
from fxlab.passes.converters.auto import bind_arguments
from fxlab.passes.torchair_refusals import is_protected

# Ops that compute nothing of the custom op's: a converter's constants (attrs as tensors).
NO_COMPUTE_TYPES = frozenset({"Const"})
_CPU_KEYS = ("CPU", "CompositeExplicitAutograd", "CompositeImplicitAutograd")


class _NotRecordable(Exception):
    """An argument or output the torch call cannot be written down for."""


def ascribe_torch_call(target: Any, args: Sequence[Any], kwargs: Mapping[str, Any], result: Any, made: Sequence[IrOp]) -> bool:
    """Give the one computing op ``made`` for a call of custom op ``target`` (converter
    arguments ``args``/``kwargs``, its ``result``) the op's own CPU kernel as reference,
    when no kernel of its type exists; True when it did."""
    if not _is_custom_op_with_cpu_kernel(target):
        return False
    computing = [op for op in made if op.type not in NO_COMPUTE_TYPES]
    if len(computing) != 1 or _has_reference(computing[0]):
        return False
    op = computing[0]
    try:
        call = _torch_call(target, bind_arguments(target, args, kwargs), result, op)
    except _NotRecordable:
        return False
    op.set_attrs({TORCH_CALL_ATTR: Attr(AttrKind.STR, json.dumps(call, allow_nan=False))})
    return True


def _is_custom_op_with_cpu_kernel(target: Any) -> bool:
    if not isinstance(target, torch._ops.OpOverload) or is_protected(str(target)):
        return False
    return any(torch._C._dispatch_has_kernel_for_dispatch_key(target.name(), key) for key in _CPU_KEYS)


def _has_reference(op: IrOp) -> bool:
    return op.type in KERNELS or TORCH_OP_ATTR in op.attrs or TORCH_CALL_ATTR in op.attrs


def _torch_call(target: Any, bound: dict[str, Any], result: Any, op: IrOp) -> dict[str, Any]:
    binding = _Binding(op, target, bound)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for arg in target._schema.arguments:
        spec = binding.argument(arg, bound[arg.name])
        if arg.kwarg_only:
            kwargs[arg.name] = spec
        else:
            args.append(spec)
    return {"op": str(target), "args": args, "kwargs": kwargs, "outputs": _outputs(result, op), "by_name": binding.by_name}


class _Binding:
    """Which input or attr of ``op`` each argument of the custom op is. By name when the
    op's inputs are named as the schema's tensor arguments (an Ascend C prototype made from
    the schema is): a converter that feeds ``x`` into input ``w`` is then caught by the
    check. Otherwise as the converter fed them (each tensor argument is the input it went
    into), which checks the outputs only. A non-tensor argument is the op's attr of its
    name when there is one (a converter writing a wrong value is caught), else its value."""

    def __init__(self, op: IrOp, target: Any, bound: dict[str, Any]) -> None:
        self.op = op
        fed = op.data_inputs
        self.position = {ref: i for i, ref in reversed(list(enumerate(fed)))}  # a tensor fed twice: its first input
        self.named = {desc.name: i for i, desc in enumerate(op.input_desc) if i < len(fed) and fed[i]}
        wanted = [name for arg in target._schema.arguments for name in self._names(arg.name, bound[arg.name])]
        self.by_name = bool(wanted) and all(name in self.named for name in wanted)

    @staticmethod
    def _names(name: str, value: Any) -> list[str]:
        if isinstance(value, Tensor):
            return [name]
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, Tensor) for v in value):
            return [f"{name}{i}" for i in range(len(value))]  # a dynamic input: x0, x1, ...
        return []

    def argument(self, arg: Any, value: Any) -> dict[str, Any]:
        if isinstance(value, Tensor):
            return {"input": self._input(arg.name, value)}
        names = self._names(arg.name, value)
        if names:
            return {"inputs": [self._input(name, tensor) for name, tensor in zip(names, value)]}
        if arg.name in self.op.attrs and value is not None:
            return {"attr": arg.name}
        if not _plain(value):
            raise _NotRecordable(f"{type(value).__name__} argument {arg.name}")
        return {"value": list(value) if isinstance(value, tuple) else value}

    def _input(self, name: str, tensor: Tensor) -> int:
        if self.by_name:
            return self.named[name]
        if tensor.tensor not in self.position:  # the converter fed the op something made from it
            raise _NotRecordable(f"{tensor.tensor} is not an input of the op")
        return self.position[tensor.tensor]


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, (list, tuple)) and all(_plain(v) for v in value)


def _outputs(result: Any, op: IrOp) -> list[dict[str, int]]:
    """Each output of ``op``: which returned tensor it is, or which input it writes."""
    returned = [result] if isinstance(result, Tensor) else list(result or ())
    specs: list[dict[str, int] | None] = [None] * len(op.output_desc)
    for k, tensor in enumerate(returned):
        if not isinstance(tensor, Tensor) or tensor.op is not op or specs[tensor.index] is not None:
            raise _NotRecordable("a returned value is not one output of the op")
        specs[tensor.index] = {"return": k}
    fed = op.data_inputs
    input_names = {desc.name: i for i, desc in enumerate(op.input_desc) if i < len(fed) and fed[i]}
    for j, desc in enumerate(op.output_desc):
        if specs[j] is None and desc.name in input_names:
            specs[j] = {"input": input_names[desc.name]}  # a ref output: that input, written in place
    if any(spec is None for spec in specs):
        raise _NotRecordable("an output is neither returned nor named like an input")
    return [spec for spec in specs if spec is not None]
