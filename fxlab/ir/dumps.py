"""The Ascend IR dumps of one graph, as DESIGN.md's saved trace layout names them.

``ascend_ir.json`` (:meth:`IrGraph.to_json`), ``ascend_ir.pb`` (GE ``ModelDef``, binary),
``ascend_ir.pbtxt`` (the same as protobuf text) and ``ascend_ir.py`` (TorchAir-style
``py`` dump). Each file is written under a temporary name and renamed into place, so a
failure never leaves a complete-looking half file.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable

import torch.fx as fx

from fxlab import heap
from fxlab.errors import FxlabError
from fxlab.ir import speedups
from fxlab.ir.dump_py import graph_to_py
from fxlab.ir.ge_proto import GeProtoError, decode_model_def, encode_model_def
from fxlab.ir.model import Attr, AttrKind, IrGraph, IrOp, TensorDesc
from fxlab.ir.op_shapes import INDEX_ATTR, OpShapes, desc_fast_key, op_pieces, op_shapes
from fxlab.ir.pbtxt import graph_to_pbtxt, pbtxt_to_graph

JSON_FILE = "ascend_ir.json"
PB_FILE = "ascend_ir.pb"
PBTXT_FILE = "ascend_ir.pbtxt"
PY_FILE = "ascend_ir.py"


class IrFileError(FxlabError):
    """An Ascend IR file that cannot be read."""


_encode_str = json.encoder.encode_basestring  # the C encoder json.dumps(ensure_ascii=False) uses
_encode_value = json.JSONEncoder(ensure_ascii=False).encode


JsonPieces = tuple[str, str, str, str]


class _JsonShapes:
    """The text of each op shape, in the four pieces that go between an op's name,
    inputs, FX node and source. ``quote`` closes and opens those strings when they are
    written without escapes. The text of each attr and desc object is made once."""

    def __init__(self, quote: str) -> None:
        self.quote = quote
        self.attr_texts: dict[int, str] = {}  # by id: the graph keeps the objects alive
        self.desc_texts: dict[Any, str] = {}

    def pieces(self, op: IrOp) -> JsonPieces:
        quote = self.quote
        attrs = ", ".join([self.attr(k, a) for k, a in op.attrs.items()])
        kinds = ", ".join([f"{_encode_str(k)}: {_encode_str(a.kind.value)}" for k, a in op.attrs.items()])
        in_quote = quote if op.inputs else ""
        fx_quote = quote if op.fx_node is not None else ""
        source_quote = quote if op.source is not None else ""
        return (
            f'{quote}, "type": {_encode_str(op.type)}, "inputs": [{in_quote}',
            f'{in_quote}], "attrs": {{{attrs}}}, "attr_kinds": {{{kinds}}}, '
            f'"input_desc": [{", ".join(map(self.desc, op.input_desc))}], '
            f'"output_desc": [{", ".join(map(self.desc, op.output_desc))}], '
            f'"fx_node": {fx_quote or ("null" if op.fx_node is None else "")}',
            f'{fx_quote}, "source": {source_quote or ("null" if op.source is None else "")}',
            f"{source_quote}}},\n",
        )

    def index_filler(self, op: IrOp, pieces: JsonPieces) -> Callable[[int], JsonPieces]:
        """The pieces of an op of ``op``'s indexed shape (``pieces``, made from ``op``)
        with its own index: the attrs piece opens with ``"attrs": {"index": <index>``."""
        types, attrs, fx, end = pieces
        head, sep, rest = attrs.partition('"attrs": {"index": ')
        head += sep
        tail = rest[len(str(op.attrs[INDEX_ATTR].value)):]
        return lambda index: (types, f"{head}{index}{tail}", fx, end)

    def attr(self, key: str, attr: Attr) -> str:
        text = self.attr_texts.get(id(attr))
        if text is None:
            text = self.attr_texts[id(attr)] = _attr_json(attr)
        return f"{_encode_str(key)}: {text}"

    def desc(self, desc: TensorDesc) -> str:
        """By value (graph inputs each have their own desc objects, of a few values);
        the key tells apart what prints apart."""
        key = desc_fast_key(desc)
        try:
            text = self.desc_texts.get(key)
        except TypeError:  # an unhashable value
            return _encode_value(desc.to_json())
        if text is None:
            text = self.desc_texts[key] = _encode_value(desc.to_json())
        return text


def _attr_json(attr: Attr) -> str:
    """``json.dumps(attr.to_json(), ensure_ascii=False)``; ints and strings directly."""
    value = type(attr.value)
    if value is int and attr.kind is AttrKind.INT:
        return int.__repr__(attr.value)
    if value is str and attr.kind is AttrKind.STR:
        return _encode_str(attr.value)
    return _encode_value(attr.to_json())


def _json_op_lines(graph: IrGraph, shapes: OpShapes) -> list[str]:
    """One line per op, ``",\\n"`` included: the text of each shape is made once; per op
    only its name, inputs, FX node and source are put in, as they are when no escape
    is needed (the usual case, checked once per graph)."""
    if not shapes.plain:
        return _escaped_json_op_lines(graph, shapes)
    join_inputs = '", "'.join
    return [
        f'{{"name": "{op.name}{types}{join_inputs(op.inputs)}{attrs}{op.fx_node or ""}{fx}{op.source or ""}{end}'
        for op, (types, attrs, fx, end) in zip(graph.ops, _op_pieces(graph, shapes, _JsonShapes('"')))
    ]


def _escaped_json_op_lines(graph: IrGraph, shapes: OpShapes) -> list[str]:
    encode = _encode_str
    return [
        f'{{"name": {encode(op.name)}{types}{", ".join(map(encode, op.inputs))}{attrs}'
        f'{"" if op.fx_node is None else encode(op.fx_node)}{fx}{"" if op.source is None else encode(op.source)}{end}'
        for op, (types, attrs, fx, end) in zip(graph.ops, _op_pieces(graph, shapes, _JsonShapes("")))
    ]


def _op_pieces(graph: IrGraph, shapes: OpShapes, writer: _JsonShapes) -> Iterable[JsonPieces]:
    pieces = [writer.pieces(op) for op in shapes.first]
    fillers = {n: writer.index_filler(shapes.first[n], pieces[n]) for n in shapes.indexed}
    return op_pieces(graph, shapes, pieces, fillers)


def graph_to_json_text(graph: IrGraph, shapes: OpShapes | None = None) -> str:
    """``ascend_ir.json``: :meth:`IrGraph.to_json` with one op per line, so the file
    diffs and greps well (each line is ``json.dumps(op.to_json(), ensure_ascii=False)``).
    ``shapes``: the graph's :func:`op_shapes`, when the caller has them already."""
    head = _encode_value({
        "name": graph.name,
        "inputs": list(graph.inputs),
        "outputs": list(graph.outputs),
        "attrs": {k: v.to_typed_json() for k, v in graph.attrs.items()},
    })[:-1]
    if not graph.ops:
        return f'{head}, "ops": []}}\n'
    shapes = shapes or op_shapes(graph)
    native = speedups.native
    if native is not None and shapes.plain:
        pieces = list(_op_pieces(graph, shapes, _JsonShapes('"')))
        text = native.text_ops(graph.ops, pieces, '{"name": "', '", "', 2)  # no comma after the last op
        if text is not None:
            return "".join([head, ', "ops": [\n', text, "\n]}\n"])
    lines = _json_op_lines(graph, shapes)
    lines[-1] = lines[-1][:-2] + "\n"  # no comma after the last op
    return "".join([head, ', "ops": [\n', *lines, "]}\n"])


def write_atomic(path: Path, data: bytes | str) -> Path:
    """Write ``data`` to a temporary file beside ``path``, then rename it to ``path``."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_ir_dumps(graph: IrGraph, directory: str | Path, *, fx_graph: fx.Graph | fx.GraphModule | None = None) -> list[Path]:
    """Write the four dumps of ``graph`` into ``directory`` (created if missing) and
    return their paths. ``fx_graph`` (the graph it was converted from) makes the ``py``
    dump show each FX node's call, types and source code line, as TorchAir's does."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    shapes = op_shapes(graph)  # found once, shared by the four writers
    renderers: list[tuple[str, Callable[[], bytes | str]]] = [
        (JSON_FILE, lambda: graph_to_json_text(graph, shapes)),
        (PB_FILE, lambda: encode_model_def(graph, shapes)),
        (PBTXT_FILE, lambda: graph_to_pbtxt(graph, shapes)),
        (PY_FILE, lambda: graph_to_py(graph, fx_graph, shapes)),
    ]
    with heap.collector_paused():  # the writers make no cycles: refcounts free it all
        return [write_atomic(folder / name, render()) for name, render in renderers]


def read_ir(path: str | Path) -> IrGraph:
    """Read an IR graph from ``ascend_ir.json``, ``.pb`` or ``.pbtxt`` (by suffix)."""
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in (".json", ".pb", ".pbtxt"):
        raise IrFileError(f"{file}: cannot tell the IR format from the suffix {suffix!r}. Pass a .json, .pb or .pbtxt file (fxlab writes ascend_ir.json/.pb/.pbtxt).")
    try:
        if suffix == ".pb":
            return decode_model_def(file.read_bytes())
        text = file.read_text(encoding="utf-8")
        if suffix == ".pbtxt":
            return pbtxt_to_graph(text)
        return IrGraph.from_json(json.loads(text))
    except FileNotFoundError as exc:
        raise IrFileError(f"{file} does not exist. Check the path; `fxlab trace MODEL.py --out DIR` writes DIR/graph_<k>/ascend_ir.*.") from exc
    except (GeProtoError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise IrFileError(f"{file} is not a readable Ascend IR {suffix} file ({type(exc).__name__}: {exc}). Write it again with fxlab, or check that it holds a GE ModelDef.") from exc
