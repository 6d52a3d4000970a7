"""Turn a live FX GraphModule into a :class:`StageTrace` (plain data).

One linear walk over the nodes: provenance (source file:line and code, module path,
``from_node`` chain, original ATen op), output tensor metadata, which schema arguments
the node mutates, and a highlight kind for in-place ops, ``copy_`` epilogues,
``auto_functionalized*`` nodes and scope markers.
"""
from __future__ import annotations

import operator
from typing import Any

import torch
import torch.fx as fx

from fxlab.capture.trace import NodeRecord, Provenance, StageTrace, TensorMeta

KIND_INPLACE = "inplace"
KIND_COPY_EPILOGUE = "copy_epilogue"
KIND_AUTO_FUNCTIONALIZED = "auto_functionalized"
KIND_SCOPE = "scope"

_AUTO_FUNCTIONALIZED_NAMES = ("auto_functionalized", "auto_functionalized_v2")


def target_name(node: fx.Node) -> str:
    target = node.target
    if node.op == "call_function":
        if target is operator.getitem:
            return "getitem"
        if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
            return str(target)
        if isinstance(target, torch._ops.HigherOrderOperator):
            return f"higher_order.{target.name()}"
        return getattr(target, "__qualname__", None) or getattr(target, "__name__", str(target))
    return str(target)


def mutated_arguments(node: fx.Node) -> list[str]:
    """Names of the schema arguments ``node`` writes in place (``Tensor(a!)``)."""
    target = node.target
    if isinstance(target, torch._ops.HigherOrderOperator) and target.name() in _AUTO_FUNCTIONALIZED_NAMES:
        inner = node.args[0] if node.args else None
        return _schema_mutations(inner) if isinstance(inner, torch._ops.OpOverload) else []
    if isinstance(target, torch._ops.OpOverload):
        return _schema_mutations(target)
    return []


def _schema_mutations(op: torch._ops.OpOverload) -> list[str]:
    return [a.name for a in op._schema.arguments if a.alias_info is not None and a.alias_info.is_write]


def classify(node: fx.Node, mutates: list[str]) -> str:
    """Highlight kind: what a reader should notice about this node."""
    target = node.target
    if isinstance(target, torch._ops.HigherOrderOperator) and target.name() in _AUTO_FUNCTIONALIZED_NAMES:
        return KIND_AUTO_FUNCTIONALIZED
    name = str(target)
    if name.startswith("air.scope_"):
        return KIND_SCOPE
    if not mutates:
        return ""
    if name == "aten.copy_.default" and node.args and getattr(node.args[0], "op", None) == "placeholder":
        return KIND_COPY_EPILOGUE
    return KIND_INPLACE


def tensor_meta(value: Any) -> list[TensorMeta]:
    if isinstance(value, torch.Tensor):
        return [TensorMeta(shape=[_dim(d) for d in value.shape], dtype=str(value.dtype).replace("torch.", ""), stride=_stride(value))]
    if isinstance(value, (list, tuple)):
        return [m for v in value for m in tensor_meta(v)]
    if isinstance(value, (torch.SymInt, int)) and not isinstance(value, bool):
        return [TensorMeta(shape=[], dtype="symint" if isinstance(value, torch.SymInt) else "int")]
    return []


def _dim(d: Any) -> int | str:
    return d if isinstance(d, int) else str(d)


def _stride(value: torch.Tensor) -> list[int | str] | None:
    try:
        return [_dim(s) for s in value.stride()]
    except (RuntimeError, NotImplementedError):  # sparse / nested tensors have no strides
        return None


def provenance(node: fx.Node) -> Provenance:
    file, line, code = _last_user_frame(node.meta.get("stack_trace"))
    stack = node.meta.get("nn_module_stack") or {}
    module_path = [_module_path_entry(v) for v in stack.values()]
    original = node.meta.get("original_aten")
    return Provenance(
        file=file,
        line=line,
        code=code,
        module_path=module_path,
        from_node=_from_node_chain(node.meta.get("from_node")),
        original_aten=str(original) if original is not None else None,
    )


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


def _last_user_frame(stack_trace: str | None) -> tuple[str | None, int | None, str | None]:
    if not stack_trace:
        return None, None, None
    lines = stack_trace.rstrip().splitlines()
    for i in range(len(lines) - 1, -1, -1):
        text = lines[i].strip()
        if text.startswith('File "'):
            try:
                file = text.split('"')[1]
                line = int(text.split("line ")[1].split(",")[0])
            except (IndexError, ValueError):
                return None, None, None
            code = lines[i + 1].strip() if i + 1 < len(lines) else None
            return file, line, code
    return None, None, None


def format_args(node: fx.Node) -> str:
    parts = [_format_arg(a) for a in node.args]
    parts += [f"{k}={_format_arg(v)}" for k, v in node.kwargs.items()]
    text = ", ".join(parts)
    return text if len(text) <= 200 else text[:197] + "..."


def _format_arg(arg: Any) -> str:
    if isinstance(arg, fx.Node):
        return arg.name
    if isinstance(arg, (list, tuple)):
        inner = ", ".join(_format_arg(a) for a in arg)
        return f"[{inner}]"
    if isinstance(arg, torch._ops.OpOverload):
        return str(arg)
    return repr(arg)


def stage_from_module(name: str, gm: fx.GraphModule) -> StageTrace:
    """Record ``gm`` as stage ``name``; also caches each node's source in its meta so the
    conversion pass does not parse stack traces again."""
    records: list[NodeRecord] = []
    for node in gm.graph.nodes:
        mutates = mutated_arguments(node) if node.op == "call_function" else []
        value = node.meta.get("val", node.meta.get("example_value"))
        prov = provenance(node)
        node.meta["fxlab.source"] = prov.location
        records.append(
            NodeRecord(
                name=node.name,
                op=node.op,
                target=target_name(node),
                args=format_args(node),
                outputs=tensor_meta(value),
                provenance=prov,
                mutates=mutates,
                kind=classify(node, mutates) if node.op == "call_function" else "",
                scopes=list(node.meta.get("fxlab.scopes", [])),
                ge_ops=list(node.meta.get("fxlab.ge_ops", [])),
            )
        )
    return StageTrace(name=name, code=readable_code(gm), nodes=records)


def readable_code(gm: fx.GraphModule) -> str:
    """The graph as Python with shapes and dtypes, in the spirit of ``print_readable``."""
    try:
        code = gm.print_readable(print_output=False, include_stride=False, include_device=False, colored=False)
    except TypeError:  # older torch without these keyword arguments
        code = gm.print_readable(print_output=False)
    # make_fx names the class after the traced callable (``<lambda>``); say what it is.
    return code.replace("class <lambda>(", "class GraphModule(", 1)
