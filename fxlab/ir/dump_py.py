"""TorchAir-style ``py`` dump of an Ascend IR graph: a readable script of ``ge.*`` calls.

Like TorchAir's own ``py`` dump (``config.debug.graph_dump.type = "py"``), each GE op is
one call ``<outputs> = ge.<Type>(<inputs>, <attrs>, node_name="<name>")``; an output is
named ``<op>_<index>``; scalar ``Const`` ops (those with ``_readable_value``) are written
inline where their output is read, as ``ge.Const(<value>, dtype=<n>)``; dtypes are
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

import json
from typing import Any, Callable

import torch
import torch.fx as fx
from torch._subclasses.fake_tensor import FakeTensor

from fxlab.ir.model import (
    TORCHAIR_DTYPE_NUMBER,
    Attr,
    AttrKind,
    IrGraph,
    IrOp,
    TensorValue,
)
from fxlab.ir.op_shapes import INDEX_ATTR, INPUTS_END, OpShapes, desc_fast_key, op_pieces

HEADER = (
    "# -*- coding: utf-8 -*-\n"
    "from torch import tensor\n"
    "from torchair._ge_concrete_graph import ge_apis as ge\n"
    "from torchair.ge._ge_graph import get_default_ge_graph\n"
)
READABLE_VALUE = "_readable_value"
MAX_SHOWN_VALUES = 16
_BOUNDARY_TYPES = frozenset({"Data", "NetOutput"})
_FX_CALLS = ("call_function", "call_method", "call_module", "get_attr")


def _var(tensor: str) -> str:
    """The script variable of ``"op:index"``: TorchAir's ``op_index``."""
    return tensor.replace(":", "_").replace("/", "_")


_str_literal = json.encoder.encode_basestring  # a double-quoted, escaped literal


def _tensor_literal(value: TensorValue) -> str:
    count = 1
    for dim in value.desc.shape:
        count *= dim
    if count > MAX_SHOWN_VALUES or count < 0:
        return "..."
    try:
        return f"tensor({value.to_torch().tolist()!r})"
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
    if kind is AttrKind.LIST_LIST_INT:
        return repr([list(row) for row in value])
    if kind.value.startswith("list_"):
        return repr(list(value))
    return repr(value)


class _PyDumpWriter:
    def __init__(self, graph: IrGraph, fx_graph: fx.Graph | fx.GraphModule | None, shapes: OpShapes | None) -> None:
        self.graph = graph
        self.shapes = shapes
        self.shape_texts: dict[int, tuple[str, str]] = {}  # per op shape: attr arguments, comment
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
        (``"<name>:0"``, the one output a Const has); made on first use, unless the fast
        writer has made it by op shape."""
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
            text = self.type_texts[key] = _annotated(node)[len(node.name):]
        return node.name + text

    def _target(self, target: Any) -> str:
        """:func:`_target_text`, made once per target; by identity, as op overloads hash
        in Python (the FX graph keeps its targets alive, so ids are not reused)."""
        text = self.targets.get(id(target))
        if text is None:
            text = self.targets[id(target)] = _target_text(target)
        return text

    def write(self) -> str:
        if self.shapes is not None and self.shapes.plain:
            text = _FastPyLines(self).write()
            if text is not None:
                return text
        ops = self.graph.ops
        index = self.shapes.index if self.shapes is not None else [None] * len(ops)
        group: list[tuple[IrOp, int | None]] = []
        for op, shape in zip(ops, index):
            if group and op.fx_node != group[0][0].fx_node:
                self._write_group(group)
                group = []
            group.append((op, shape))
        if group:
            self._write_group(group)
        return "\n".join(self.lines) + "\n"

    def _file_line(self, node: fx.Node | None, source: str | None) -> str | None:
        trace = node.meta.get("stack_trace") if node is not None else None
        text = self.file_lines.get((trace, source), self)  # self: not made yet
        if text is self:
            text = self.file_lines[(trace, source)] = _file_line(node, source)
        return text  # type: ignore[return-value]

    def _write_group(self, group: list[tuple[IrOp, int | None]]) -> None:
        ops = [op for op, _ in group]
        node = self.fx_nodes.get(ops[0].fx_node or "")
        file_line = self._file_line(node, ops[0].source)
        if file_line is not None and file_line != self.last_file_line:
            self.lines.append(f"\n# File {file_line}")
        self.last_file_line = file_line if file_line is not None else self.last_file_line
        if self._is_fx_call(node, ops):
            self.lines.append(f"## FX Code: {format_fx_node(node, self._annotate, self._target) if node is not None else ops[0].fx_node}")
        for op, shape in group:
            if not _is_inline_const(op):
                self.lines.append(self._call(op, shape))

    @staticmethod
    def _is_fx_call(node: fx.Node | None, ops: list[IrOp]) -> bool:
        if node is not None:
            return node.op in ("call_function", "call_method", "call_module", "get_attr")
        return ops[0].fx_node is not None and not any(op.type in _BOUNDARY_TYPES for op in ops)

    def _attr_texts(self, op: IrOp, shape: int | None) -> tuple[str, str]:
        """The attr arguments of a call and its trailing comment (private attrs), made
        once per op shape."""
        texts = self.shape_texts.get(shape) if shape is not None else None
        if texts is None:
            literal = self._attr_literal
            public = [f"{k}={literal(a)}" for k, a in op.attrs.items() if not k.startswith("_")]
            private = [f"{k}={literal(a)}" for k, a in op.attrs.items() if k.startswith("_") and k != READABLE_VALUE]
            texts = (", ".join(public), f"  # {', '.join(private)}" if private else "")
            if shape is not None:
                self.shape_texts[shape] = texts
        return texts

    def _call(self, op: IrOp, shape: int | None) -> str:
        data_inputs = [i for i in op.inputs if not i.endswith(":-1")]
        control_inputs = [i for i in op.inputs if i.endswith(":-1")] if len(data_inputs) != len(op.inputs) else []
        attr_args, comment = self._attr_texts(op, shape)
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
            outputs = ", ".join([f"{_var(op.name)}_{i}" for i in range(len(op.output_desc))]) or "_"
            line = f"{outputs} = ge.{op.type}({', '.join(args)}, node_name={_str_literal(op.name)})"
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
        args += [f"{k}={self._attr_literal(a)}" for k, a in op.attrs.items() if k != "index" and not k.startswith("_")]
        return args

    def _input(self, tensor: str) -> str:
        if not tensor:
            return "None"  # an optional input left unfed
        const_text = self.const_texts.get(tensor)
        return _var(tensor) if const_text is None else const_text


def _is_inline_const(op: IrOp) -> bool:
    return op.type == "Const" and READABLE_VALUE in op.attrs


def _const_text(op: IrOp) -> str:
    """An inline scalar ``Const`` as it is written where it is used."""
    dtype = op.output_desc[0].dtype if op.output_desc else None
    dtype_text = f", dtype={TORCHAIR_DTYPE_NUMBER[dtype]}" if dtype is not None else ""
    return f"ge.Const({op.attrs[READABLE_VALUE].value}{dtype_text})"


def _vars(names: list[str]) -> list[str]:
    """:func:`_var` of each of ``names`` (plain: no newline), all made together; the
    names themselves when none has a ``:`` or ``/`` (op names seldom do)."""
    joined = "\n".join(names)
    if ":" not in joined and "/" not in joined:
        return names
    return joined.replace(":", "_").replace("/", "_").split("\n")


# Between two inputs in the text of every op's inputs (_args_texts): a control character,
# which plain strings (printable ASCII) and the constants' texts (checked) never hold.
_OP_END, _ARG_SEP = INPUTS_END, "\x01"


def _args_texts(ops: list[IrOp], inputs: list[str], const_texts: dict[str, str]) -> list[str | None]:
    """Per op, the text of its input arguments (:meth:`_PyDumpWriter._input` of each,
    joined by ``", "``), made for all ops together by a few operations on one string
    of every input (``inputs``: OpShapes.inputs, each op's closed by an end mark, where
    the texts are split back per op); ``None`` for an op with a control input
    (``":-1"``), whose line the general writer makes. ``const_texts``: the text of each
    inline constant's output. Needs plain strings."""
    joined = "\n".join(inputs)
    variables = joined.replace(":", "_").replace("/", "_").split("\n")
    lookup = {**const_texts, "": "None"}  # an optional input left unfed
    args = _ARG_SEP.join(map(lookup.get, inputs, variables))
    # "a<SEP>b<SEP><END><SEP>c<SEP><END><SEP><END>" -> "a, b<END>c<END><END>"
    args = args.replace(_ARG_SEP + _OP_END, _OP_END).replace(_OP_END + _ARG_SEP, _OP_END).replace(_ARG_SEP, ", ")
    texts: list[str | None] = args.split(_OP_END)
    texts.pop()  # after the last end mark
    if ":-1" in joined:
        for i, op in enumerate(ops):
            if any(text.endswith(":-1") for text in op.inputs):
                texts[i] = None
    return texts


def _tensor_annotations(nodes: list[fx.Node]) -> dict[fx.Node, str]:
    """:func:`_annotated` of the nodes whose value is a tensor, made together: the type
    text once per (dtype, shape, device). Empty when a shape is symbolic (the typed
    names are then made one by one)."""
    tensor, fake = torch.Tensor, FakeTensor
    metas = [node.meta.get("val") for node in nodes]
    # The same values without fake tensors' Python round trips: subclass torch functions
    # off, and a fake tensor's device read where its ``device`` property reads it.
    with torch._C.DisableTorchFunctionSubclass():
        keys = [
            (m.dtype, m.shape, m.fake_device) if type(m) is fake else (m.dtype, m.shape, m.device) if isinstance(m, tensor) else None
            for m in metas  # fake tensors first: nearly every value is one
        ]
    try:
        first = dict(zip(reversed(keys), reversed(nodes)))  # the first node of each key
    except TypeError:  # symbolic dims do not hash
        return {}
    types = {key: _annotated(node)[len(node.name):] for key, node in first.items() if key is not None}
    return {node: node.name + types[key] for node, key in zip(nodes, keys) if key is not None}


class _Annotations(dict):
    """Each FX node's typed name (:func:`_annotated`), made on first use."""

    def __init__(self, writer: _PyDumpWriter) -> None:
        super().__init__()
        self.writer = writer

    def __missing__(self, node: fx.Node) -> str:
        text = self[node] = self.writer._annotated_node(node)
        return text


class _FastPyLines:
    """The ``py`` dump of a graph whose strings need no escapes (``OpShapes.plain``):
    the text around an op's output names, inputs and name is made once per op shape,
    and the comments once per FX node. Data, NetOutput and ops with control inputs go
    through :meth:`_PyDumpWriter._call`. Gives the same text as the general writer."""

    _SKIP, _GENERAL = 0, 1

    def __init__(self, writer: _PyDumpWriter) -> None:
        self.writer = writer
        self.shapes: OpShapes = writer.shapes  # type: ignore[assignment]
        self.annotations = _Annotations(writer)
        self.annotations.update(_tensor_annotations(list(writer.fx_nodes.values())))
        self.data_descs: dict[Any, str] = {}
        self.targets = writer.targets
        self.trace_lines: dict[str, str] = {}  # the file line of each stack trace

    def _shape_text(self, op: IrOp, shape: int) -> Any:
        """``_SKIP`` (an inline constant), ``_GENERAL``, or the pieces of the op's call
        line: output suffixes, text after the outputs, after the inputs, after the name."""
        if op.type == "Const" and READABLE_VALUE in op.attrs:
            return self._SKIP
        if op.type == "Data" and not op.inputs and len(op.output_desc) == 1 and list(op.attrs) == [INDEX_ATTR]:
            return self._data_text(op.attrs[INDEX_ATTR].value, self._data_desc(op))
        if op.type in _BOUNDARY_TYPES:
            return self._GENERAL
        attr_args, comment = self.writer._attr_texts(op, shape)
        if attr_args and op.inputs:
            attr_args = ", " + attr_args
        suffixes = tuple(f"_{i}" for i in range(len(op.output_desc)))
        return (suffixes, f" = ge.{op.type}(", f'{attr_args}, node_name="', f'"){comment}')

    @staticmethod
    def _data_text(index: Any, desc_text: str) -> Any:
        return (("_0",), f" = ge.Data(index={index}, {desc_text}", ', node_name="', '")')

    def _index_filler(self, op: IrOp, text: Any) -> Callable[[int], Any]:
        """The text of an op of ``op``'s indexed shape (see op_shapes), given its index."""
        if type(text) is not tuple:  # not the Data fast path: _GENERAL reads each op's index
            return lambda index: text
        desc_text = self._data_desc(op)
        return lambda index: self._data_text(index, desc_text)

    def _const_texts(self, texts: list[Any], names: list[str]) -> dict[str, str] | None:
        """:attr:`_PyDumpWriter.const_texts`, each text made once per op shape: ops of
        one shape have equal values and dtypes. ``names``: the ops' names. ``None`` when
        a text is not printable ASCII (see _args_texts)."""
        shapes = self.shapes
        by_shape = [_const_text(shapes.first[n]) if text is self._SKIP else None for n, text in enumerate(texts)]
        if not all(text is None or (text.isascii() and text.isprintable()) for text in by_shape):
            return None
        return {f"{name}:0": text for name, text in zip(names, map(by_shape.__getitem__, shapes.index)) if text is not None}

    def _data_desc(self, op: IrOp) -> str:
        """The arguments after ``index`` of a Data call (:meth:`_PyDumpWriter._data_args`
        of an op with no other attr), made once per output desc value."""
        key = desc_fast_key(op.output_desc[0])
        try:
            text = self.data_descs.get(key)
        except TypeError:  # an unhashable value
            text, key = None, None
        if text is None:
            text = ", ".join(self.writer._data_args(op)[1:])
            if key is not None:
                self.data_descs[key] = text
        return text

    def write(self) -> str | None:
        """The dump; ``None`` (nothing written) when a constant's text is not plain."""
        writer, ops = self.writer, self.writer.graph.ops
        texts = [self._shape_text(op, n) for n, op in enumerate(self.shapes.first)]
        names = [op.name for op in ops]
        const_texts = self._const_texts(texts, names)
        if const_texts is None:
            return None
        writer._const_texts = const_texts  # read by the general calls too
        fillers = {n: self._index_filler(self.shapes.first[n], texts[n]) for n in self.shapes.indexed}
        variables = _vars(names)
        args_texts = _args_texts(ops, self.shapes.inputs, const_texts)
        lines = writer.lines
        append, join, group_head, skip, general = lines.append, ", ".join, self._group_head, self._SKIP, self._GENERAL
        last_fx: Any = lines  # no op has it as FX node
        for i, (op, text) in enumerate(zip(ops, op_pieces(writer.graph, self.shapes, texts, fillers))):
            if op.fx_node != last_fx:
                last_fx = op.fx_node
                group_head(i, op)
            if text is skip:
                continue
            if text is general:
                append(writer._call(op, self.shapes.index[i]))
                continue
            suffixes, after_outputs, after_inputs, end = text
            args = args_texts[i]
            if args is None:  # a control input
                append(writer._call(op, None))
                continue
            var = variables[i]
            outputs = var + suffixes[0] if len(suffixes) == 1 else join([var + s for s in suffixes]) or "_"
            append(f"{outputs}{after_outputs}{args}{after_inputs}{op.name}{end}")
        return "\n".join(lines) + "\n"

    def _fx_code(self, node: fx.Node) -> str:
        """The ``## FX Code`` line of ``node``: :func:`format_fx_node`, with each node's
        typed name made once."""
        names, Node = self.annotations, fx.Node
        # _annotated of a value that is no node, written out: this runs for every argument.
        # node._args/_kwargs: the public properties return them through a Python call.
        args = [names[a] if isinstance(a, Node) else repr(a) if isinstance(a, str) else str(a) for a in node._args]
        kwargs = node._kwargs
        if kwargs:
            args += [f"{k}={names[v] if isinstance(v, Node) else _annotated(v)}" for k, v in kwargs.items()]
        target = self.targets.get(id(node.target)) or self.writer._target(node.target)
        return f"## FX Code: {names[node]} = {target}({', '.join(args)})"

    def _group_head(self, start: int, first: IrOp) -> None:
        """The comments before the ops of one FX node, the first being ``ops[start]``."""
        writer = self.writer
        node = writer.fx_nodes.get(first.fx_node or "")
        trace = node.meta.get("stack_trace") if node is not None else None
        # A stack trace gives the line whatever the op's source (see _file_line).
        file_line = self.trace_lines.get(trace) if trace else None
        if file_line is None:
            file_line = writer._file_line(node, first.source)
            if trace:
                self.trace_lines[trace] = file_line
        if file_line is not None and file_line != writer.last_file_line:
            writer.lines.append(f"\n# File {file_line}")
            writer.last_file_line = file_line
        if node is not None:
            if node.op in _FX_CALLS:
                writer.lines.append(self._fx_code(node))
        elif first.fx_node is not None:
            ops, end = writer.graph.ops, start + 1
            while end < len(ops) and ops[end].fx_node == first.fx_node:
                end += 1
            if writer._is_fx_call(None, ops[start:end]):
                writer.lines.append(f"## FX Code: {first.fx_node}")


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
    meta = value.meta.get("val")
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


def graph_to_py(graph: IrGraph, fx_graph: fx.Graph | fx.GraphModule | None = None, shapes: OpShapes | None = None) -> str:
    """The ``py`` dump of ``graph``. With the FX graph it was converted from, the
    ``FX Code`` comments show each node's call and types, and ``File`` comments the
    code line, as TorchAir prints them; without it, node names and ``file:line``.
    ``shapes`` (the graph's :func:`op_shapes`, when the caller has them) lets the attr
    text of each op shape be made once."""
    return _PyDumpWriter(graph, fx_graph, shapes).write()
