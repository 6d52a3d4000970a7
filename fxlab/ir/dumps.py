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
from typing import Any, Callable

import torch.fx as fx

from fxlab.errors import FxlabError
from fxlab.ir.dump_py import graph_to_py
from fxlab.ir.ge_proto import GeProtoError, decode_model_def, encode_model_def
from fxlab.ir.model import Attr, AttrKind, IrGraph, IrOp, TensorDesc
from fxlab.ir.pbtxt import graph_to_pbtxt, pbtxt_to_graph

JSON_FILE = "ascend_ir.json"
PB_FILE = "ascend_ir.pb"
PBTXT_FILE = "ascend_ir.pbtxt"
PY_FILE = "ascend_ir.py"


class IrFileError(FxlabError):
    """An Ascend IR file that cannot be read."""


_encode_str = json.encoder.encode_basestring  # the C encoder json.dumps(ensure_ascii=False) uses
_encode_value = json.JSONEncoder(ensure_ascii=False).encode
_UNCACHED_JSON_KINDS = frozenset({AttrKind.FLOAT, AttrKind.LIST_FLOAT})  # -0.0 == 0.0 as a dict key


def _optional_str(value: str | None) -> str:
    return "null" if value is None else _encode_str(value)


class _JsonWriter:
    """``json.dumps(op.to_json())`` for every op, from cached pieces: the text of each
    distinct attr and tensor desc is encoded once per graph."""

    def __init__(self) -> None:
        self.attrs: dict[tuple[Any, ...], str] = {}
        self.kinds: dict[tuple[str, AttrKind], str] = {}
        self.descs: dict[tuple[Any, ...], str] = {}

    def op(self, op: IrOp) -> str:
        attrs = ", ".join([self.attr(k, a) for k, a in op.attrs.items()])
        kinds = ", ".join([self.kind(k, a.kind) for k, a in op.attrs.items()])
        return (
            f'{{"name": {_encode_str(op.name)}, "type": {_encode_str(op.type)}, '
            f'"inputs": [{", ".join([_encode_str(i) for i in op.inputs])}], '
            f'"attrs": {{{attrs}}}, "attr_kinds": {{{kinds}}}, '
            f'"input_desc": [{", ".join([self.desc(d) for d in op.input_desc])}], '
            f'"output_desc": [{", ".join([self.desc(d) for d in op.output_desc])}], '
            f'"fx_node": {_optional_str(op.fx_node)}, "source": {_optional_str(op.source)}}}'
        )

    def attr(self, key: str, attr: Attr) -> str:
        if attr.kind is AttrKind.TENSOR:
            desc = attr.value.desc
            cache_key: tuple[Any, ...] | None = (key, desc.dtype, desc.shape, attr.value.data)
        elif attr.kind in _UNCACHED_JSON_KINDS:
            cache_key = None
        else:
            cache_key = (key, attr.kind, attr.value)
        try:
            text = self.attrs.get(cache_key) if cache_key is not None else None
        except TypeError:  # unhashable value
            cache_key, text = None, None
        if text is None:
            text = f"{_encode_str(key)}: {_encode_value(attr.to_json())}"
            if cache_key is not None:
                self.attrs[cache_key] = text
        return text

    def kind(self, key: str, kind: AttrKind) -> str:
        text = self.kinds.get((key, kind))
        if text is None:
            text = self.kinds[(key, kind)] = f"{_encode_str(key)}: {_encode_str(kind.value)}"
        return text

    def desc(self, desc: TensorDesc) -> str:
        key = None
        if not desc.attrs or not any(a.kind in _UNCACHED_JSON_KINDS for a in desc.attrs.values()):
            key = (desc.name, desc.dtype, desc.shape, desc.layout, tuple(desc.attrs.items()))
        try:
            text = self.descs.get(key) if key is not None else None
        except TypeError:
            key, text = None, None
        if text is None:
            text = _encode_value(desc.to_json())
            if key is not None:
                self.descs[key] = text
        return text


def graph_to_json_text(graph: IrGraph) -> str:
    """``ascend_ir.json``: :meth:`IrGraph.to_json` with one op per line, so the file
    diffs and greps well."""
    head = _encode_value({
        "name": graph.name,
        "inputs": list(graph.inputs),
        "outputs": list(graph.outputs),
        "attrs": {k: v.to_typed_json() for k, v in graph.attrs.items()},
    })[:-1]
    if not graph.ops:
        return f'{head}, "ops": []}}\n'
    writer = _JsonWriter()
    body = ",\n".join([writer.op(op) for op in graph.ops])
    return f'{head}, "ops": [\n{body}\n]}}\n'


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
    renderers: list[tuple[str, Callable[[], bytes | str]]] = [
        (JSON_FILE, lambda: graph_to_json_text(graph)),
        (PB_FILE, lambda: encode_model_def(graph)),
        (PBTXT_FILE, lambda: graph_to_pbtxt(graph)),
        (PY_FILE, lambda: graph_to_py(graph, fx_graph)),
    ]
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
