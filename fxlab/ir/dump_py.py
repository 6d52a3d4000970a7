"""TorchAir-style ``py`` dump of an Ascend IR graph: a readable script of ``ge.*`` calls.

Like TorchAir's own ``py`` dump (``config.debug.graph_dump.type = "py"``), each GE op is
one call ``<outputs> = ge.<Type>(<inputs>, <attrs>, node_name="<name>")``; an output is
named ``<op>_<index>``; ``Const`` ops of Python values (``_readable_value`` not a tensor's
repr) are written inline where their output is read, as ``ge.Const(<value>, dtype=<n>)``; dtypes are
TorchAir's ``DataType`` numbers. Ops are grouped per FX node in order, under a
``# File "<file>", line N`` comment when the source line changes and a
``## FX Code: <node>`` comment naming the FX node they came from.

Differences from TorchAir, on purpose: a ``# File`` comment is repeated whenever the
source line changes (TorchAir writes each line once per file, so the second layer of a
loop has none); attrs starting with ``_`` (scope, core-limit and provenance attrs) are
listed in a trailing comment instead of being hidden; tensor constants up to 16 values
are shown, larger ones as ``...``.
"""

from __future__ import annotations

import ast
import keyword
import math
import re
import zlib
from collections.abc import Callable
from typing import Any

import torch
import torch.fx as fx

from fxlab.escape import one_line, python_str_literal
from fxlab.ir.model import (
    TORCHAIR_DTYPE_NUMBER,
    Attr,
    AttrKind,
    IrGraph,
    IrOp,
    TensorValue,
)

HEADER = (
    "# -*- coding: utf-8 -*-\n"
    "from torch import tensor\n"
    "from torchair._ge_concrete_graph import ge_apis as ge\n"
    "from torchair.ge._ge_graph import get_default_ge_graph\n"
)
READABLE_VALUE = "_readable_value"
TENSOR_REPR_PREFIX = "tensor("
MAX_SHOWN_VALUES = 16
_BOUNDARY_TYPES = frozenset({"Data", "NetOutput"})
_FX_CALLS = ("call_function", "call_method", "call_module", "get_attr")


def _var(tensor: str) -> str:
    """The script variable of ``"op:index"``: TorchAir's ``op_index``. A name that would
    not be a Python identifier (GE op names are any string) becomes one: its other
    characters as ``_`` and a checksum of the name, so distinct names stay distinct."""
    var = tensor.replace(":", "_").replace("/", "_")
    if var.isidentifier() and var.isascii() and not keyword.iskeyword(var):
        return var
    safe = re.sub(r"[^A-Za-z0-9_]", "_", var)
    return f"v_{safe}_{zlib.crc32(tensor.encode('utf-8', 'surrogatepass')):08x}"


_str_literal = python_str_literal  # a double-quoted, escaped, one-line literal


_CALL_KEYWORDS = frozenset({"node_name", "dependencies", "index"})  # written by the dump itself: twice would not compile


def _keyword_args(pairs: list[tuple[str, str]]) -> list[str]:
    """``key=value`` arguments; keys that are not identifiers go in a ``**{...}``."""
    plain = [f"{k}={v}" for k, v in pairs if _is_name(k) and k not in _CALL_KEYWORDS]
    odd = [f"{_str_literal(k)}: {v}" for k, v in pairs if not _is_name(k) or k in _CALL_KEYWORDS]
    return plain + ([f"**{{{', '.join(odd)}}}"] if odd else [])


def _is_name(text: str) -> bool:
    return text.isidentifier() and text.isascii() and not keyword.iskeyword(text)


def _ge_function(op_type: str) -> str:
    """``ge.Add``; a GE type that is not an identifier as ``getattr(ge, "...")``."""
    return f"ge.{op_type}" if _is_name(op_type) else f"getattr(ge, {_str_literal(op_type)})"


def _number(value: Any) -> str:
    """A float or int as Python source: non-finite floats as ``float("inf")`` (``inf``
    alone is not a name the dump defines)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    return repr(value)


def _py_value(value: Any) -> str:
    """A number, bool, string or (nested) list of them as Python source."""
    if isinstance(value, (list, tuple)):
        return f"[{', '.join(_py_value(v) for v in value)}]"
    if isinstance(value, str):
        return _str_literal(value)
    if isinstance(value, complex):
        return f"complex({_number(value.real)}, {_number(value.imag)})"
    return _number(value)


def _tensor_literal(value: TensorValue) -> str:
    count = 1
    for dim in value.desc.shape:
        count *= dim
    if count > MAX_SHOWN_VALUES or count < 0:
        return "..."
    try:
        return f"tensor({_py_value(value.to_torch().tolist())})"
    except (KeyError, RuntimeError, ValueError):  # a type torch lacks, or bytes that do not fit the shape
        return "..."


def attr_literal(attr: Attr) -> str:
    """A Python literal for an attr value, as a ``ge.*`` call would receive it."""
    kind, value = attr.kind, attr.value
    if kind is AttrKind.STR:
        return _str_literal(value)
    if kind is AttrKind.DTYPE:
        return str(TORCHAIR_DTYPE_NUMBER[value])
    if kind is AttrKind.LIST_DTYPE:
        return f"[{', '.join(str(TORCHAIR_DTYPE_NUMBER[v]) for v in value)}]"
    if kind is AttrKind.LIST_STR:
        return f"[{', '.join(_str_literal(v) for v in value)}]"
    if kind is AttrKind.TENSOR:
        return _tensor_literal(value)
    if kind in (AttrKind.LIST_LIST_INT, AttrKind.LIST_INDEXED_STR):
        return _py_value([list(row) for row in value])
    if kind.value.startswith("list_"):
        return _py_value(list(value))
    return _py_value(value)


class _PyDumpWriter:
    def __init__(self, graph: IrGraph, fx_graph: fx.Graph | fx.GraphModule | None) -> None:
        self.graph = graph
        if isinstance(fx_graph, fx.GraphModule):
            fx_graph = fx_graph.graph
        self.fx_nodes = {n.name: n for n in fx_graph.nodes} if fx_graph is not None else {}
        self._const_texts: dict[str, str] | None = None  # see const_texts
        self.lines: list[str] = [HEADER]
        self.last_file_line: str | None = None
        self.annotations: dict[fx.Node, str] = {}  # each node's typed name, made once
        self.literals: dict[int, str] = {}
        self.kept: list[Attr] = []
        self.type_texts: dict[tuple[Any, ...], str] = {}  # "dtype[shape]device" per tensor type
        self.targets: dict[int, str] = {}
        self.file_lines: dict[tuple[Any, str | None], str | None] = {}

    @property
    def const_texts(self) -> dict[str, str]:
        """The text of each inline scalar ``Const`` (:func:`_const_text`), by its output
        (``"<name>:0"``, the one output a Const has); made on first use."""
        if self._const_texts is None:
            self._const_texts = {f"{op.name}:0": _const_text(op) for op in self.graph.ops if _is_inline_const(op)}
        return self._const_texts

    def _annotate(self, value: Any) -> str:
        if not isinstance(value, fx.Node):
            return _annotated(value)
        text = self.annotations.get(value)
        if text is None:
            text = self.annotations[value] = self._annotated_node(value)
        return text

    def _annotated_node(self, node: fx.Node) -> str:
        """:func:`_annotated` of a node, with the text of each tensor type made once."""
        meta = node.meta.get("val")
        if not isinstance(meta, torch.Tensor):
            return _annotated(node)
        try:
            key = (meta.dtype, meta.shape, meta.device)
            text = self.type_texts.get(key)
        except TypeError:  # symbolic dims
            return _annotated(node)
        if text is None:
            text = self.type_texts[key] = _annotated(node)[len(node.name) :]
        return node.name + text

    def _target(self, target: Any) -> str:
        """:func:`_target_text`, made once per target; by identity, as op overloads hash
        in Python (the FX graph keeps its targets alive, so ids are not reused)."""
        text = self.targets.get(id(target))
        if text is None:
            text = self.targets[id(target)] = _target_text(target)
        return text

    def write(self) -> str:
        group: list[IrOp] = []
        for op in self.graph.ops:
            if group and op.fx_node != group[0].fx_node:
                self._write_group(group)
                group = []
            group.append(op)
        if group:
            self._write_group(group)
        return "\n".join(self.lines) + "\n"

    def _file_line(self, node: fx.Node | None, source: str | None) -> str | None:
        trace = node.meta.get("stack_trace") if node is not None else None
        text = self.file_lines.get((trace, source), self)  # self: not made yet
        if text is self:
            text = self.file_lines[(trace, source)] = _file_line(node, source)
        return text  # type: ignore[return-value]

    def _write_group(self, ops: list[IrOp]) -> None:
        node = self.fx_nodes.get(ops[0].fx_node or "")
        file_line = self._file_line(node, ops[0].source)
        if file_line is not None and file_line != self.last_file_line:
            self.lines.append(f"\n# File {one_line(file_line)}")
        self.last_file_line = file_line if file_line is not None else self.last_file_line
        if self._is_fx_call(node, ops):
            code = format_fx_node(node, self._annotate, self._target) if node is not None else ops[0].fx_node
            self.lines.append(f"## FX Code: {one_line(str(code))}")
        for op in ops:
            if not _is_inline_const(op):
                self.lines.append(self._call(op))

    @staticmethod
    def _is_fx_call(node: fx.Node | None, ops: list[IrOp]) -> bool:
        if node is not None:
            return node.op in ("call_function", "call_method", "call_module", "get_attr")
        return ops[0].fx_node is not None and not any(op.type in _BOUNDARY_TYPES for op in ops)

    def _attr_texts(self, op: IrOp) -> tuple[str, str]:
        """The attr arguments of a call and its trailing comment (private attrs)."""
        literal = self._attr_literal
        public = _keyword_args([(k, literal(a)) for k, a in op.attrs.items() if not k.startswith("_")])
        private = [f"{k}={literal(a)}" for k, a in op.attrs.items() if k.startswith("_") and k != READABLE_VALUE]
        return ", ".join(public), f"  # {one_line(', '.join(private))}" if private else ""

    def _call(self, op: IrOp) -> str:
        data_inputs = [i for i in op.inputs if not i.endswith(":-1")]
        control_inputs = [i for i in op.inputs if i.endswith(":-1")] if len(data_inputs) != len(op.inputs) else []
        attr_args, comment = self._attr_texts(op)
        if op.type == "Data":
            args = self._data_args(op)
        elif op.type == "NetOutput":
            args = [f"[{', '.join([self._input(i) for i in data_inputs])}]"]
        else:
            args = [self._input(i) for i in data_inputs]
            if attr_args:
                args.append(attr_args)
        if control_inputs:
            args.append(f"dependencies=[{', '.join(_var(c[:-3] + ':0') for c in control_inputs)}]")
        if op.type == "NetOutput":
            line = f"\n_ = ge.NetOutput({', '.join(args)})"
        else:
            outputs = ", ".join([_var(f"{op.name}:{i}") for i in range(len(op.output_desc))]) or "_"
            line = f"{outputs} = {_ge_function(op.type)}({', '.join(args)}, node_name={_str_literal(op.name)})"
        return line + comment

    def _attr_literal(self, attr: Attr) -> str:
        """:func:`attr_literal`, made once per attr object (ops share attr objects for
        equal scalars and constants). By identity: equal values may print differently
        (``-0.0`` and ``0.0``, ``True`` and ``1``)."""
        text = self.literals.get(id(attr))
        if text is None:
            text = self.literals[id(attr)] = attr_literal(attr)
            self.kept.append(attr)  # keeps ids unique while the cache lives
        return text

    def _data_args(self, op: IrOp) -> list[str]:
        args = [f"index={op.attr_value('index', 0)}"]
        if op.output_desc:
            desc = op.output_desc[0]
            args += [f"dtype={TORCHAIR_DTYPE_NUMBER[desc.dtype]}", f"shape={list(desc.shape)}"]
            if desc.layout and desc.layout != "ND":
                args.append(f"format={_str_literal(desc.layout)}")
        args += _keyword_args([(k, self._attr_literal(a)) for k, a in op.attrs.items() if k != "index" and not k.startswith("_")])
        return args

    def _input(self, tensor: str) -> str:
        if not tensor:
            return "None"  # an optional input left unfed
        const_text = self.const_texts.get(tensor)
        return _var(tensor) if const_text is None else const_text


def _is_inline_const(op: IrOp) -> bool:
    """A ``Const`` of a Python value; a tensor's (whose readable value is its repr) is a
    call of its own, its values shown up to :data:`MAX_SHOWN_VALUES`."""
    readable = op.attrs.get(READABLE_VALUE) if op.type == "Const" else None
    return readable is not None and not str(readable.value).startswith(TENSOR_REPR_PREFIX)


def _const_text(op: IrOp) -> str:
    """An inline scalar ``Const`` as it is written where it is used."""
    dtype = op.output_desc[0].dtype if op.output_desc else None
    dtype_text = f", dtype={TORCHAIR_DTYPE_NUMBER[dtype]}" if dtype is not None else ""
    return f"ge.Const({_readable_literal(op.attrs[READABLE_VALUE].value)}{dtype_text})"


def _readable_literal(text: Any) -> str:
    """A ``_readable_value`` (the ``repr`` of a Python scalar) as source: as written
    when it is a literal, ``float("inf")`` for inf and nan, any other text quoted."""
    if not isinstance(text, str):
        return _py_value(text)
    try:
        return _py_value(ast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    if text in ("inf", "-inf", "nan"):
        return f'float("{text}")'
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":  # a quoted string literal_eval refused
        return _str_literal(text[1:-1])
    return _str_literal(text)


def _file_line(node: fx.Node | None, source: str | None) -> str | None:
    """``"<file>", line N[, in fn    code]``: from the FX node's stack trace (TorchAir's
    form) when there is one, else from the op's ``file:line`` provenance."""
    trace = node.meta.get("stack_trace") if node is not None else None
    if trace:
        return trace.rsplit(" File ", 1)[-1].replace("\n", "")  # the last frame
    if not source or ":" not in source:
        return None
    path, line = source.rsplit(":", 1)
    return f'"{path}", line {line}'


def _target_text(target: Any) -> str:
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None) or ""
    if module.startswith("torch._ops"):
        return f"torch.ops.{target}"
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or str(target)
    return f"{module}.{name}" if module and module != "builtins" else name


def _annotated(value: Any) -> str:
    if not isinstance(value, fx.Node):
        return repr(value) if isinstance(value, str) else str(value)
    meta: Any = value.meta.get("val")
    shape = getattr(meta, "shape", None)
    if shape is not None and hasattr(meta, "dtype"):
        return f"{value.name}: {meta.dtype}[{', '.join(str(d) for d in shape)}]{meta.device}"
    if meta is not None and type(meta).__name__.startswith("Sym"):
        return f'{value.name}: "Sym({meta})"'
    return value.name


def format_fx_node(node: fx.Node, annotate: Callable[[Any], str] = _annotated, target_text: Callable[[Any], str] = _target_text) -> str:
    """TorchAir's ``FX Code`` line: ``name: dtype[shape]device = target(args)``.
    ``annotate`` gives the text of each value, ``target_text`` of the target (caches of
    :func:`_annotated` and :func:`_target_text` may be passed)."""
    args = [annotate(a) for a in node.args]
    args += [f"{k}={annotate(v)}" for k, v in node.kwargs.items()]
    return f"{annotate(node)} = {target_text(node.target)}({', '.join(args)})"


def graph_to_py(graph: IrGraph, fx_graph: fx.Graph | fx.GraphModule | None = None) -> str:
    """The ``py`` dump of ``graph``. With the FX graph it was converted from, the
    ``FX Code`` comments show each node's call and types, and ``File`` comments the
    code line, as TorchAir prints them; without it, node names and ``file:line``."""
    return _PyDumpWriter(graph, fx_graph).write()
