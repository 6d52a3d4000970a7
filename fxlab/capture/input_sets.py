"""Several input sets for one model: a warm-up given by the model file, or a second size
fxlab derives for a dynamic graph.

A model file gives several input sets, run in order as a serving warm-up runs batch sizes,
in either way:

- module level: ``model`` and ``example_inputs_list = [inputs_1, inputs_2, ...]``;
- an entry function (``get_model_and_inputs()`` or ``--entry NAME``) returning
  ``(model, [inputs_1, inputs_2, ...])``: a *list* of two or more items, every one a
  *tuple* (each input set as ``example_inputs`` is written: a tuple of arguments, or
  ``(args, kwargs)``). Anything else is one input set, as before; a model whose arguments
  are all tuples gets them in a tuple, ``((k0, v0), (k1, v1))``, not a list.

With one input set and a graph with symbolic sizes, fxlab derives a second set from the
first: every input dim Dynamo made symbolic grows (×2, else +1 where the model does not
run at ×2), its values repeated along the dim, so token ids and masks stay valid.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._pytree import tree_leaves

INPUTS_LIST_NAME = "example_inputs_list"


def is_input_sets(inputs: Any) -> bool:
    """Whether ``inputs`` (what an entry function gave) is several input sets."""
    return isinstance(inputs, list) and len(inputs) > 1 and all(isinstance(item, tuple) for item in inputs)


def describe_inputs(args: Sequence[Any], kwargs: dict[str, Any], names: Sequence[str] = ()) -> str:
    """``x: f32[4, 8], mask: i64[4, 8]``: each tensor argument's shape and dtype."""
    parts: list[str] = []
    for i, value in enumerate(args):
        label = names[i] if i < len(names) else f"arg {i}"
        parts.extend(_describe_leaf(label, leaf) for leaf in tree_leaves(value))
    for key, value in kwargs.items():
        parts.extend(_describe_leaf(key, leaf) for leaf in tree_leaves(value))
    return ", ".join(p for p in parts if p)


def _describe_leaf(label: str, value: Any) -> str:
    if isinstance(value, torch.Tensor):
        dtype = {
            torch.float32: "f32",
            torch.float16: "f16",
            torch.bfloat16: "bf16",
            torch.int64: "i64",
            torch.int32: "i32",
            torch.bool: "b8",
        }
        return f"{label}: {dtype.get(value.dtype, str(value.dtype).replace('torch.', ''))}{list(value.shape)}"
    return f"{label}: {value!r}" if isinstance(value, (int, float, bool)) else ""


def argument_names(fn: Callable[..., Any]) -> list[str]:
    """The names of the positional arguments of ``fn`` (of ``forward`` for a module)."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, torch.nn.Module) and getattr(fn, "__name__", "") in ("_call_impl", "__call__"):  # nn.Module.compile()
        fn = owner
    target = fn.forward if isinstance(fn, torch.nn.Module) else fn
    try:
        return [p.name for p in inspect.signature(target).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


# -- the second size of a dynamic graph ------------------------------------------------------
@dataclass(frozen=True)
class DynamicDim:
    """One dim of a user input that a graph takes as a symbolic size."""

    path: tuple[Any, ...]  # how to reach the tensor from the call's arguments: ("x",), ("args", 0)
    dim: int
    symbol: str


def dynamic_dims(graphs: Sequence[Any]) -> list[DynamicDim]:
    """The input dims the captured Dynamo graphs take as symbols, found from Dynamo's own
    record of where each graph input comes from (its ``grapharg`` sources)."""
    found: list[DynamicDim] = []
    for captured in graphs:
        dynamo = captured.modules.get("dynamo")
        for node in dynamo.graph.nodes if dynamo is not None else ():
            value = node.meta.get("example_value")
            path = _source_path(getattr(node.meta.get("grapharg"), "source", None))
            if node.op != "placeholder" or not isinstance(value, torch.Tensor) or path is None:
                continue
            for dim, size in enumerate(value.shape):
                if isinstance(size, torch.SymInt) and size.node.expr.is_Symbol:
                    entry = DynamicDim(path, dim, str(size))
                    if entry not in found:
                        found.append(entry)
    return found


def _source_path(source: Any) -> tuple[Any, ...] | None:
    """``L['x']`` -> ("x",); ``L['args'][0]`` -> ("args", 0); ``L['kwargs']['mask']`` (a
    wrapper's ``**kwargs``) -> ("kwargs", "mask"); a module's own tensor -> None."""
    from torch._dynamo.source import DictGetItemSource, GetItemSource, LocalSource  # lazy: Dynamo, ~0.6 s; a saved trace's load skips it

    if isinstance(source, LocalSource):
        return (source.local_name,)
    if isinstance(source, (GetItemSource, DictGetItemSource)) and isinstance(source.index, (int, str)):
        base = _source_path(source.base)
        return None if base is None else (*base, source.index)
    return None


def grown_inputs(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], dims: Sequence[DynamicDim], grow: Callable[[int], int]
) -> tuple[tuple[Any, ...], dict[str, Any], str] | None:
    """The call's inputs with every dim of ``dims`` grown by ``grow`` (dims of one symbol
    alike), and what changed in words; None when no dim can be found in the arguments."""
    bound, original = _bind(fn, args, kwargs), _bind(fn, args, kwargs)
    if bound is None or original is None:
        return None
    is_module = isinstance(fn, torch.nn.Module)
    sizes: dict[str, int] = {}
    changes: list[str] = []
    for entry in dims:
        tensor = _at(bound.arguments, entry.path)
        if not isinstance(tensor, torch.Tensor) or entry.dim >= tensor.dim():
            continue
        old = tensor.shape[entry.dim]
        new = sizes.setdefault(entry.symbol, grow(old))
        _put(bound.arguments, entry.path, _resized(tensor, entry.dim, new))
        label = _label(_at(original.arguments, entry.path), args, kwargs, argument_names(fn))
        changes.append(f"dim {entry.dim} of {label}: {old} -> {new}")
    if not changes:
        return None
    new_args = tuple(bound.args)[1:] if is_module else tuple(bound.args)  # a module's forward gets itself first
    return new_args, dict(bound.kwargs), "; ".join(changes)


def _bind(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> inspect.BoundArguments | None:
    """The arguments as the frame Dynamo traces names them: the function itself (a
    decorator's wrapper, not what it wraps), for a module its class's ``forward`` called
    with the module first."""
    try:
        if isinstance(fn, torch.nn.Module):
            return inspect.signature(type(fn).forward, follow_wrapped=False).bind(fn, *args, **kwargs)
        return inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None


def _at(arguments: dict[str, Any], path: tuple[Any, ...]) -> Any:
    value: Any = arguments
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _put(arguments: dict[str, Any], path: tuple[Any, ...], tensor: torch.Tensor) -> None:
    """Replace the tensor at ``path`` (a tuple along the way is rebuilt)."""
    if len(path) == 1:
        arguments[path[0]] = tensor
        return
    container = _at(arguments, path[:-1])
    if isinstance(container, tuple):
        items = list(container)
        items[path[-1]] = tensor
        _put(arguments, path[:-1], type(container)(items))  # type: ignore[arg-type]
    else:
        container[path[-1]] = tensor


def _resized(tensor: torch.Tensor, dim: int, size: int) -> torch.Tensor:
    """``tensor`` with ``size`` along ``dim``: its values repeated, then cut; Dynamo's marks
    (``mark_dynamic`` ...) kept."""
    repeats = -(-size // max(tensor.shape[dim], 1))
    values = torch.cat([tensor.detach()] * repeats, dim=dim).narrow(dim, 0, size)
    # A fresh tensor: the strides of a contiguous one of its size (a narrowed view keeps
    # the wider strides on its size-1 dims, which Dynamo's guards compare).
    grown = torch.empty(values.shape, dtype=values.dtype, device=values.device).copy_(values)
    return with_dynamo_marks(grown, tensor)


def with_dynamo_marks(copy: torch.Tensor, original: torch.Tensor) -> torch.Tensor:
    """``copy`` with the user's Dynamo marks of ``original`` (``mark_dynamic``,
    ``mark_static`` ...: attributes ``_dynamo_*`` on the tensor), so a compiled run of the
    copy sees what the user set."""
    for key, mark in vars(original).items():
        if key.startswith("_dynamo"):
            setattr(copy, key, mark.copy() if hasattr(mark, "copy") else mark)
    return copy


def _label(tensor: torch.Tensor, args: tuple[Any, ...], kwargs: dict[str, Any], names: Sequence[str]) -> str:
    """The user's name of an input tensor: its argument's name, else its position."""
    for i, value in enumerate(args):
        if value is tensor:
            return names[i] if i < len(names) else f"argument {i}"
    return next((key for key, value in kwargs.items() if value is tensor), "an input")
