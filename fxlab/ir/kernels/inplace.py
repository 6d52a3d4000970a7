"""Kernels of the in-place GE ops: ``ViewCopy``, and any custom op made by TorchAir's
auto converter, run through the torch op it came from; and the one GE op a user's
converter emits for a custom op, when no reference kernel of its type is registered, run
through that op's own CPU kernel (:data:`TORCH_CALL_ATTR` says how its inputs and outputs
map to the op's arguments and returns).

GE in-place semantics: an op writes into its ref input's memory and its ref output *is*
that memory. A custom op's kernel here mutates its ref input tensor (always a
``TensorMove`` copy or an ``AsStrided`` of one in TorchAir's graphs) and returns that same
tensor object as the ref output, so a ``ViewCopy`` ordered after it reads the update.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import torch

from fxlab.ir.kernels.registry import KERNEL_RESOLVERS, KERNELS, register_kernel
from fxlab.ir.model import DataType, IrOp, torch_dtype

# Attr keys written by the auto converter (fxlab.passes.converters.auto).
TORCH_OP_ATTR = "_fxlab_torch_op"
INPUT_GROUPS_ATTR = "_fxlab_input_groups"
ATTR_NAMES_ATTR = "_fxlab_attr_names"
_TENSOR_TYPES = ("Tensor", "Optional[Tensor]", "List[Tensor]")


def _strided(t: torch.Tensor, size: Any, stride: Any, offset: Any) -> torch.Tensor:
    """``t``'s memory seen through (size, stride, offset), as GE sees a tensor: its own
    contiguous buffer."""
    return torch.as_strided(t, _ints(size), _ints(stride), int(offset))


def _ints(value: Any) -> list[int]:
    return [int(v) for v in (value.tolist() if isinstance(value, torch.Tensor) else value)]


@register_kernel("ViewCopy")
def view_copy(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """``ViewCopy``: ``dst`` with ``src`` (seen through src_size/stride/offset) written into
    the window (dst_size/stride/offset).

    The result is new memory, not ``dst`` itself: GE never writes a plain ``Data`` input in
    place (only ``Assign`` mapped to an output does), and in every graph TorchAir builds the
    readers of the update read this op's output, never ``dst``.
    """
    dst, dst_size, dst_stride, dst_offset, src, src_size, src_stride, src_offset = inputs
    result = dst.detach().clone().contiguous()
    source = src.detach().contiguous()
    with torch.no_grad():
        _strided(result, dst_size, dst_stride, dst_offset).copy_(_strided(source, src_size, src_stride, src_offset))
    return [result]


def expand_dims(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """``ExpandDims(x, axis)``: a size-1 dim inserted at ``axis``."""
    x, axis = inputs
    return [x.unsqueeze(int(axis.reshape(-1)[0])).clone()]


# ExpandDims is a shape op other families may emit too: register it only if none is yet,
# so whichever module ships it first owns it (this module is imported last).
if "ExpandDims" not in KERNELS:
    register_kernel("ExpandDims")(expand_dims)


def _torch_op(qualname: str) -> Any:
    namespace, name, overload = qualname.split(".")
    return getattr(getattr(getattr(torch.ops, namespace), name), overload)


def _attr_value(value: Any) -> Any:
    if isinstance(value, DataType):
        return torch_dtype(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def _call_arguments(target: Any, inputs: list[Any], attrs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The torch call that the GE op stands for: GE inputs back to the tensor arguments
    (grouped as the converter recorded), GE attrs back to the other arguments."""
    groups = iter(attrs[INPUT_GROUPS_ATTR])
    attr_names = iter(attrs[ATTR_NAMES_ATTR])
    position = 0
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for arg in target._schema.arguments:
        if str(arg.type) in _TENSOR_TYPES:
            count = next(groups)
            value: Any = list(inputs[position : position + count]) if str(arg.type) == "List[Tensor]" else inputs[position]
            position += count
        else:
            name = next(attr_names)
            if name:
                value = _attr_value(attrs[name])
            else:
                value = arg.default_value if arg.has_default_value() else None
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
    return args, kwargs


def _flat_returns(result: Any) -> list[Any]:
    if result is None:
        return []
    if isinstance(result, (list, tuple)):
        return [x for item in result for x in _flat_returns(item)] if result else []
    return [result]


def run_torch_op(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Run the torch op an auto-converted GE op came from (its CPU kernel mutates the
    ref inputs in place); outputs in GE order: ref outputs are the mutated inputs."""
    target = _torch_op(attrs[TORCH_OP_ATTR])
    args, kwargs = _call_arguments(target, inputs, attrs)
    returns = iter(_flat_returns(target(*args, **kwargs)))
    mutated = {a.name for a in target._schema.arguments if a.alias_info is not None and a.alias_info.is_write}
    input_index = {desc.name: i for i, desc in enumerate(op.input_desc)}
    outputs = []
    for desc in op.output_desc:
        if mutated and desc.name in input_index:
            outputs.append(inputs[input_index[desc.name]])
        else:
            outputs.append(next(returns))
    return outputs


# The torch call one GE op stands for (JSON): {"op": "ns.name.overload", "args": [spec...],
# "kwargs": {name: spec}, "outputs": [spec...]}; an argument spec is {"input": i} (the op's
# i-th data input), {"inputs": [i, ...]} (a tensor list), {"attr": name} (the op's attr) or
# {"value": v} (as the converter got it); an output spec is
# {"return": k} (the call's k-th tensor) or {"input": i} (that input, written in place);
# "by_name" says whether the inputs were bound to the arguments by their names.
TORCH_CALL_ATTR = "_fxlab_torch_call"


def run_torch_call(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    """Run the custom op's own CPU kernel for ``op``, as :data:`TORCH_CALL_ATTR` maps it."""
    call = json.loads(attrs[TORCH_CALL_ATTR])

    def value(spec: dict[str, Any]) -> Any:
        if "input" in spec:
            return inputs[spec["input"]]
        if "inputs" in spec:
            return [inputs[i] for i in spec["inputs"]]
        if "attr" in spec:  # the value the converter wrote into the op
            return _attr_value(attrs[spec["attr"]])
        return spec["value"]

    target = _torch_op(call["op"])
    args = [value(spec) for spec in call["args"]]
    kwargs = {name: value(spec) for name, spec in call["kwargs"].items()}
    returns = _flat_returns(target(*args, **kwargs))
    return [returns[spec["return"]] if "return" in spec else inputs[spec["input"]] for spec in call["outputs"]]


def ops_run_by_their_torch_op(ops: Sequence[IrOp]) -> list[tuple[IrOp, dict[str, Any]]]:
    """The ops :func:`run_torch_call` runs (no kernel of their type), with their call."""
    return [(op, json.loads(str(op.attr_value(TORCH_CALL_ATTR)))) for op in ops if _runs_torch_call(op)]


def _runs_torch_call(op: IrOp) -> bool:
    # A kernel registered for the type (a user's, for a converter that emits several ops) wins.
    return TORCH_CALL_ATTR in op.attrs and op.type not in KERNELS


def _resolve_custom_op(op: IrOp) -> Callable[..., Any] | None:
    if TORCH_OP_ATTR in op.attrs:
        return run_torch_op
    return run_torch_call if _runs_torch_call(op) else None


def _install() -> None:
    if _resolve_custom_op not in KERNEL_RESOLVERS:
        KERNEL_RESOLVERS.append(_resolve_custom_op)


_install()
