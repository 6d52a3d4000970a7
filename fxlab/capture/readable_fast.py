"""``print_readable`` of a plain FX graph, written out directly.

Torch's generator re-derives the same facts for every node (the stack-trace summary
is parsed again for each node, each target's qualified name looked up again, every
node's ``repr`` temporarily overridden). A captured stage repeats a few targets and a
few stack traces once per layer, so those are computed once per distinct value here.

The output is the same text as ``GraphModule.print_readable(print_output=False)``
(no stride, device or colours): the generator below follows torch's ``CodeGen`` rules
and uses torch's own helpers for names, annotations and indentation. It handles the
graphs fxlab records — placeholders without defaults, ``call_function`` /
``call_method`` / ``call_module`` / ``get_attr`` nodes with plain argument values and
torch targets, no type annotations or extra meta that torch would print — and returns
None for anything else, which the caller then prints with torch.
"""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.fx as fx

try:  # private helpers of torch's generator: without them, torch prints every graph
    from torch._subclasses.fake_tensor import FakeTensor
    from torch.fx.graph import (
        CodeGen,
        _custom_builtins,
        _format_target,
        _get_qualified_name,
        _illegal_names,
        _is_from_torch,
        _name_regex,
        _parse_stack_trace,
        inplace_methods,
        magic_methods,
    )
    from torch.fx.immutable_collections import immutable_list
    from torch.fx.passes.shape_prop import TensorMetadata
    from torch.nn.modules.module import _addindent
    from torch.types import py_sym_types
    from torch.utils._dtype_abbrs import dtype_abbrs
except ImportError:  # pragma: no cover - another torch layout
    CodeGen = None  # type: ignore[assignment,misc]


class Unsupported(Exception):
    """The graph has something this generator does not reproduce exactly."""


# Argument values torch prints with plain repr() (its last, catch-all branch).
_PLAIN_REPR = frozenset({int, float, bool, str, type(None), type(Ellipsis), torch.dtype, torch.device, torch.memory_format, torch.layout})
_SPARSE = (torch.sparse_csc, torch.sparse_csr)
_NO_STACK = "No stacktrace found for following nodes"


def fast_print_readable(gm: fx.GraphModule) -> str | None:
    """``gm.print_readable(print_output=False)``, or None when this graph needs torch's."""
    if CodeGen is None or not _plain_setting(gm):
        return None
    try:
        return _Printer(gm).module_code()
    except Unsupported:
        return None


def _plain_setting(gm: fx.GraphModule) -> bool:
    codegen = gm.graph._codegen
    if type(codegen) is not CodeGen or codegen._body_transformer is not None or codegen._func_name != "forward":
        return False
    if any(os.environ.get(flag, "0") == "1" for flag in ("FX_GRAPH_SHOW_STRIDE", "FX_GRAPH_SHOW_DEVICE", "FX_GRAPH_SHOW_META")):
        return False
    return not any(isinstance(child, fx.GraphModule) for child in gm.children())


class _Printer:
    def __init__(self, gm: fx.GraphModule) -> None:
        self.gm = gm
        self.nodes = list(gm.graph.nodes)
        self.globals: dict[int, str] = {}
        self.summaries: dict[str | None, str] = {}

    def module_code(self) -> str:
        self._check_names()
        free_vars, body = self._body()
        if "# COUNTER: " in body:  # torch drops such lines with its node counters
            raise Unsupported("counter text in the code")
        if free_vars and free_vars[0] == "self":
            raise Unsupported("a placeholder named self")
        prologue = f"def forward({', '.join(['self', *free_vars])}):"
        code = body.lstrip("\n") if self.nodes else "pass\n"
        code = "\n".join("    " + line for line in code.split("\n"))
        src = f"\n\n\n{prologue}\n{code}".lstrip("\n")
        module_code = _addindent(f"class {self.gm._get_name()}(torch.nn.Module):\n" + src, 4)
        return module_code + _addindent("", 4)

    def _check_names(self) -> None:
        # Torch prints each node under a name from a fresh namespace; it is the node's
        # own name unless that is not a plain identifier or is taken by a builtin.
        used = set(_custom_builtins)
        for node in self.nodes:
            name = node.name
            if name in used or name in _illegal_names or _name_regex.match(name) is None:
                raise Unsupported(f"node name {name!r}")
            used.add(name)

    def _body(self) -> tuple[list[str], str]:
        last_uses = _last_uses(self.nodes)
        free_vars: list[str] = []
        body: list[str] = []
        previous_summary = None
        for node in self.nodes:
            op = node.op
            if op != "placeholder" and op != "output":
                summary = self._summary(node)
                if summary != previous_summary:
                    previous_summary = summary
                    body.append(summary)
            annotation = _annotation(node)
            if node.type is not None and not (annotation and _overridden_type(node)):
                raise Unsupported("type annotation")
            if op == "placeholder":
                free_vars.append(self._placeholder(node, annotation, body))
                continue
            body.append(self._statement(node, annotation))
            if op == "output":
                body.append("\n")
                continue
            dead = last_uses.get(node, [])
            if not node.users:
                dead = [*dead, node]
            body.append(f";  {' = '.join([n.name for n in dead] + ['None'])}\n" if dead else "\n")
        return free_vars, "".join(body)

    def _summary(self, node: fx.Node) -> str:
        meta = node.meta
        if meta.get("custom") or meta.get("recompute") is not None or meta.get("ac_graph_id") is not None or meta.get("is_wrapped", False):
            raise Unsupported("extra meta torch prints")
        stack_trace = meta.get("stack_trace")
        summary = self.summaries.get(stack_trace)
        if summary is None:
            parsed = _parse_stack_trace(stack_trace) if stack_trace else None
            summary = self.summaries[stack_trace] = f"\n# {parsed.get_summary_str() if parsed else _NO_STACK}\n"
        return summary

    def _placeholder(self, node: fx.Node, annotation: str, body: list[str]) -> str:
        if node.args or not isinstance(node.target, str):
            raise Unsupported("placeholder default")
        raw_name = node.target.replace("*", "")
        if raw_name != node.name:
            body.append(f"{node.name} = {raw_name}\n")
        return f"{node.target}{annotation}"

    def _statement(self, node: fx.Node, annotation: str) -> str:
        op, target, args = node.op, node.target, node.args
        if op == "call_function":
            if getattr(target, "__module__", "") == "_operator":
                name = getattr(target, "__name__", "")
                if name in magic_methods:
                    return f"{node.name}{annotation} = {magic_methods[name].format(*(self._repr(a) for a in args))}"
                if name in inplace_methods:
                    statement = inplace_methods[name].format(*(self._repr(a) for a in args))
                    return f"{statement};  {node.name}{annotation} = {self._repr(args[0])}"
            return f"{node.name}{annotation} = {self._global(target)}({self._format_args(args, node.kwargs)})"
        if op == "call_method":
            return (
                f"{node.name}{annotation} = {_format_target(self._repr(args[0]), str(target))}({self._format_args(args[1:], node.kwargs)})"
            )
        if op == "call_module":
            return f"{node.name}{annotation} = {_format_target('self', str(target))}({self._format_args(args, node.kwargs)})"
        if op == "get_attr":
            return f"{node.name}{annotation} = {_format_target('self', str(target))}"
        if op == "output":
            return f"return {self._repr(args[0])}"
        raise Unsupported(f"node op {op}")

    def _format_args(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        parts = [self._repr(a) for a in args]
        if kwargs:
            parts += [f"{k} = {self._repr(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def _repr(self, arg: Any) -> str:
        kind = type(arg)
        if kind is fx.Node:
            return arg.name
        if kind in _PLAIN_REPR:
            return repr(arg)
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            raise Unsupported("named tuple argument")
        if isinstance(arg, (torch._ops.OpOverload, torch._ops.HigherOrderOperator)):
            return self._global(arg)
        if isinstance(arg, tuple):
            return f"({self._repr(arg[0])},)" if len(arg) == 1 else "(" + ", ".join([self._repr(a) for a in arg]) + ")"
        if kind is list or kind is immutable_list:
            return "[" + ", ".join([self._repr(a) for a in arg]) + "]"
        if kind is slice:
            return f"slice({self._repr(arg.start)}, {self._repr(arg.stop)}, {self._repr(arg.step)})"
        raise Unsupported(f"argument of type {kind.__name__}")

    def _global(self, target: Any) -> str:
        # Keyed by identity: the graph keeps its targets alive while it is printed.
        name = self.globals.get(id(target))
        if name is None:
            # Torch names its own functions and ops by their qualified name; anything
            # else becomes a global of the generated module, which is not done here.
            if not callable(target) or not _is_from_torch(target) or target == torch.device:
                raise Unsupported(f"global {target!r}")
            name = self.globals[id(target)] = _get_qualified_name(target)
        return name


def _overridden_type(node: fx.Node) -> bool:
    """A torch class as the node's type, which torch prints only when the node has no
    value to show shape and dtype (that annotation replaces it)."""
    kind = node.type
    return (
        node.op != "output"
        and isinstance(kind, type)
        and getattr(kind, "__origin__", None) is None
        and _is_from_torch(kind)
        and kind is not torch.device
    )


def _last_uses(nodes: list[fx.Node]) -> dict[fx.Node, list[fx.Node]]:
    """For each node, the inputs whose last use it is (torch frees them after it)."""
    seen: set[fx.Node] = set()
    by_user: dict[fx.Node, list[fx.Node]] = {}
    for node in reversed(nodes):
        for source in node.all_input_nodes:
            if source not in seen:
                seen.add(source)
                by_user.setdefault(node, []).append(source)
    return by_user


def _annotation(node: fx.Node) -> str:
    meta = node.meta
    value = meta.get("val", meta.get("tensor_meta", meta.get("example_value", None)))
    if value is None:
        return ""
    if isinstance(value, torch.Tensor):
        if value.layout in _SPARSE:
            return ""
        if not (type(value) is torch.Tensor or isinstance(value, FakeTensor)):
            raise Unsupported("tensor subclass value")
        return f': "{dtype_abbrs[value.dtype]}{_shape(value.shape)}"'
    if isinstance(value, py_sym_types):
        return f': "Sym({CodeGen._sym_repr(value)})"'
    if isinstance(value, TensorMetadata):
        return f': "{dtype_abbrs[value.dtype]}{_shape(value.shape)}"'
    return ""


def _shape(shape: Any) -> str:
    return f"[{', '.join([str(x) for x in shape])}]"
