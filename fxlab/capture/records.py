"""Turn a live FX GraphModule into a :class:`StageTrace` (plain data).

One linear walk over the nodes: provenance (source file:line and code, module path,
``from_node`` chain, original ATen op), output tensor metadata, which schema arguments
the node mutates, and a highlight kind for in-place ops, ``copy_`` epilogues,
``auto_functionalized*`` nodes and scope markers.

Large graphs repeat the same few ops, stack traces and module paths once per layer, so
everything derived from those alone is computed once per distinct value and looked up
afterwards; the readable code is kept per module until its graph changes (the capture
records the functional stage twice).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import torch
import torch.fx as fx

from fxlab.capture.readable import readable_code
from fxlab.capture.trace import NodeRecord, Provenance, StageTrace, TensorMeta
from fxlab.source_lines import NO_FRAME, SOURCE_KEY, library_location, location, parse_source, source_frame

KIND_INPLACE = "inplace"
KIND_COPY_EPILOGUE = "copy_epilogue"
KIND_AUTO_FUNCTIONALIZED = "auto_functionalized"
KIND_SCOPE = "scope"

_AUTO_FUNCTIONALIZED_NAMES = ("auto_functionalized", "auto_functionalized_v2")
_PLAIN_REPR = frozenset({int, float, bool, str, type(None), torch.dtype, torch.device})

__all__ = [
    "KIND_AUTO_FUNCTIONALIZED",
    "KIND_COPY_EPILOGUE",
    "KIND_INPLACE",
    "KIND_SCOPE",
    "cache_sources",
    "classify",
    "format_args",
    "mutated_arguments",
    "provenance",
    "readable_code",
    "stage_from_module",
    "target_name",
    "tensor_meta",
]


def target_name(node: fx.Node) -> str:
    if node.op != "call_function":
        return str(node.target)
    try:
        return _function_target_name(node.target)
    except TypeError:  # an unhashable callable
        return _function_target_name.__wrapped__(node.target)


@lru_cache(maxsize=4096)
def _function_target_name(target: Any) -> str:
    if target is operator.getitem:
        return "getitem"
    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return str(target)
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"higher_order.{target.name()}"
    return str(getattr(target, "__qualname__", None) or getattr(target, "__name__", target))


def mutated_arguments(node: fx.Node) -> list[str]:
    """Names of the schema arguments ``node`` writes in place (``Tensor(a!)``)."""
    target = node.target
    if isinstance(target, torch._ops.HigherOrderOperator) and target.name() in _AUTO_FUNCTIONALIZED_NAMES:
        inner = node.args[0] if node.args else None
        return list(_schema_mutations(inner)) if isinstance(inner, torch._ops.OpOverload) else []
    if isinstance(target, torch._ops.OpOverload):
        return list(_schema_mutations(target))
    return []


@lru_cache(maxsize=4096)
def _schema_mutations(op: torch._ops.OpOverload) -> tuple[str, ...]:
    return tuple(a.name for a in op._schema.arguments if a.alias_info is not None and a.alias_info.is_write)


def classify(node: fx.Node, mutates: list[str]) -> str:
    """Highlight kind: what a reader should notice about this node."""
    target = node.target
    if isinstance(target, torch._ops.HigherOrderOperator) and target.name() in _AUTO_FUNCTIONALIZED_NAMES:
        return KIND_AUTO_FUNCTIONALIZED
    name = _target_str(target)
    if name.startswith(("air.scope_", "npugraph_ex.scope_")):
        return KIND_SCOPE
    if not mutates:
        return ""
    if name == "aten.copy_.default" and node.args and getattr(node.args[0], "op", None) == "placeholder":
        return KIND_COPY_EPILOGUE
    return KIND_INPLACE


def _target_str(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):  # str() of an overload is slow and fixed
        return _overload_str(target)
    return str(target)


def _overload_str(op: torch._ops.OpOverload) -> str:
    # Keyed on the overload's C++ handle: nodes' ``original_aten`` are copies of the
    # overload object (equal only by identity) that share it.
    key = getattr(op, "_op", op)
    text = _OVERLOAD_STR.get(key)
    if text is None:
        text = _OVERLOAD_STR[key] = str(op)
    return text


_OVERLOAD_STR: dict[Any, str] = {}


def tensor_meta(value: Any) -> list[TensorMeta]:
    if isinstance(value, torch.Tensor):
        return [_one_tensor_meta(value)]
    if isinstance(value, (list, tuple)):
        return [m for v in value for m in tensor_meta(v)]
    if isinstance(value, (torch.SymInt, int)) and not isinstance(value, bool):
        return [TensorMeta(shape=[], dtype="symint" if isinstance(value, torch.SymInt) else "int")]
    return []


def _one_tensor_meta(value: torch.Tensor) -> TensorMeta:
    try:
        stride: list[int | str] | None = [s if isinstance(s, int) else str(s) for s in value.stride()]
    except (RuntimeError, NotImplementedError):  # sparse / nested tensors have no strides
        stride = None
    dtype = value.dtype
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype).replace("torch.", "")
    return TensorMeta(shape=[d if isinstance(d, int) else str(d) for d in value.shape], dtype=name, stride=stride)


_DTYPE_NAMES: dict[torch.dtype, str] = {}


def provenance(node: fx.Node) -> Provenance:
    meta = node.meta
    stack_trace = meta.get("stack_trace")
    file, line, code = source_frame(stack_trace) if stack_trace else NO_FRAME
    stack = meta.get("nn_module_stack")
    original = meta.get("original_aten")
    return Provenance(
        file,
        line,
        code,
        _module_path(stack.values()) if stack else [],
        _from_node_chain(meta.get("from_node")),
        _target_str(original) if original is not None else None,
        library_location(stack_trace),
    )


def _module_path(entries: Any) -> list[str]:
    try:
        return [_module_path_entry_of(v) for v in entries]
    except TypeError:  # an unhashable entry
        return [_module_path_entry(v) for v in entries]


@lru_cache(maxsize=8192)
def _module_path_entry_of(value: Any) -> str:
    return _module_path_entry(value)


def _module_path_entry(value: Any) -> str:
    # (qualified path, module type) in recent torch; plain strings in older ones.
    if isinstance(value, tuple) and value:
        path, kind = value[0], value[1] if len(value) > 1 else ""
        kind_name = getattr(kind, "__name__", str(kind)).rsplit(".", 1)[-1]
        path = _readable_module_path(str(path))
        return f"{path} ({kind_name})" if kind_name else path
    return str(value)


def _readable_module_path(path: str) -> str:
    """Dynamo's ``L['self'].layers[0].attn`` -> ``layers.0.attn``."""
    path = path.replace("L['self'].", "").replace("L['self']", "self")
    return path.replace("[", ".").replace("]", "").replace("'", "")


def _from_node_chain(value: Any) -> list[str]:
    """Names of the nodes this one was derived from, nearest first."""
    chain: list[str] = []
    items = list(value) if isinstance(value, (list, tuple)) else []
    while items and len(chain) < 16:
        source = items[-1]
        if isinstance(source, tuple):  # older torch: (name, target) pairs
            chain.extend(str(s[0]) for s in reversed(items))
            break
        chain.append(str(getattr(source, "name", "?")))
        items = list(getattr(source, "from_node", []) or [])
    return chain


def format_args(node: fx.Node) -> str:
    parts = [_format_arg(a) for a in node.args]
    if node.kwargs:
        parts += [f"{k}={_format_arg(v)}" for k, v in node.kwargs.items()]
    text = ", ".join(parts)
    return text if len(text) <= 200 else text[:197] + "..."


def _format_arg(arg: Any) -> str:
    kind = type(arg)
    if kind is fx.Node:
        return arg.name
    if kind in _PLAIN_REPR:
        return repr(arg)
    if isinstance(arg, fx.Node):
        return arg.name
    if isinstance(arg, (list, tuple)):
        inner = ", ".join(_format_arg(a) for a in arg)
        return f"[{inner}]"
    if isinstance(arg, torch._ops.OpOverload):
        return _overload_str(arg)
    return repr(arg)


def stage_from_module(name: str, gm: fx.GraphModule, ge_ops: Mapping[str, list[str]] | None = None) -> StageTrace:
    """Record ``gm`` as stage ``name``; ``ge_ops``: the GE ops each node became, by node
    name (:meth:`IrGraph.ops_by_fx_node`), for the stage that was converted. Also caches
    each node's source in its meta so the conversion pass does not parse stack traces
    again."""
    code = readable_code(gm)
    ge_ops = ge_ops or {}
    # Fake tensors' shapes and strides are plain data: read them without dispatching
    # through their torch-function handler (that dispatch is most of their cost).
    with torch._C.DisableTorchFunctionSubclass():
        records = [_record(node, ge_ops.get(node.name, ())) for node in gm.graph.nodes]
    return StageTrace(name=name, code=code, nodes=records)


def cache_sources(gm: fx.GraphModule) -> None:
    """Store each node's ``file:line`` in its meta (``SOURCE_KEY``), as
    :func:`stage_from_module` does, for passes that run before the stage is recorded
    (the conversion reads it instead of parsing stack traces again)."""
    for node in gm.graph.nodes:
        node.meta[SOURCE_KEY] = parse_source(node)


def _record(node: fx.Node, ge_ops: Iterable[str]) -> NodeRecord:
    meta = node.meta
    op = node.op
    if op == "call_function":
        target, mutates, kind = _call_facts(node)
    else:
        target, mutates, kind = str(node.target), [], ""
    prov = provenance(node)
    meta[SOURCE_KEY] = location(prov.file, prov.line)
    value = meta.get("val", meta.get("example_value"))
    return NodeRecord(
        name=node.name,
        op=op,
        target=target,
        args=format_args(node),
        inputs=[n.name for n in node.all_input_nodes],
        outputs=[_one_tensor_meta(value)] if isinstance(value, torch.Tensor) else tensor_meta(value),
        provenance=prov,
        mutates=mutates,
        kind=kind,
        scopes=list(meta.get("fxlab.scopes", [])),
        ge_ops=list(ge_ops),
    )


def _call_facts(node: fx.Node) -> tuple[str, list[str], str]:
    """Target name, mutated arguments and highlight kind of a call_function node. Most
    targets mutate nothing and are nothing special: that is known once per target."""
    target = node.target
    facts = _PLAIN_TARGETS.get(id(target))
    if facts is not None and facts[0] is target:
        return facts[1], [], ""
    name = target_name(node)
    mutates = mutated_arguments(node)
    kind = classify(node, mutates)
    if not mutates and not kind and _always_plain(target):
        _PLAIN_TARGETS[id(target)] = (target, name)  # holds the target: its id stays its own
    return name, mutates, kind


def _always_plain(target: Any) -> bool:
    # An auto_functionalized node's mutations depend on its arguments; any other
    # target's mutations and kind depend on the target alone (a copy_ epilogue mutates).
    return not (isinstance(target, torch._ops.HigherOrderOperator) and target.name() in _AUTO_FUNCTIONALIZED_NAMES)


_PLAIN_TARGETS: dict[int, tuple[Any, str]] = {}
