"""TorchAir's own graph dumps (``config.debug.graph_dump.type``), the graph it hands to
GE, read as op name -> type, FX node(s), source line(s):

- ``txt``: the ``GraphDef`` as protobuf text; each output desc a converter returned has
  ``_fx_tensor_name = "<fx node>-<target>.OUTPUT.<i>"``.
- ``pbtxt``: a TensorFlow-style ``GraphDef``: one ``node`` per GE op, each attr and desc
  as a string attr holding its own protobuf text (descs under ``[o]<name>``).
- ``py``: ``ge.<Type>(..., node_name="<op>")`` calls under ``# File "<file>", line <n>``
  and ``## FX Code: <node>: ...`` comments. TorchAir writes a ``# File`` line only the
  first time a source line appears, so an FX node whose line appeared before is given the
  line of the last ``# File`` comment above it (a saved fxlab trace is exact).
"""

from __future__ import annotations

import re
from typing import Any

from google.protobuf import text_format

from fxlab.npu_dumps.dump_model import TORCHAIR_PBTXT, TORCHAIR_PY, TORCHAIR_TXT, TorchAirGraph, TorchAirOp
from fxlab.npu_dumps.names import fx_node_of_tensor_name
from fxlab.npu_dumps.proto_text import DumpReadError, Progress, TextReader, read_text
from fxlab.npu_dumps.schemas import ge_graph_def, ge_tensor_descriptor, message_class

FX_TENSOR_NAME = "_fx_tensor_name"
# TorchAir writes the last frame of a node's stack trace: ``# File "PATH", line N, in FUNC``;
# the path is written as it is (commas and quotes included), so it runs to the first ``", line N``.
_FILE_LINE = re.compile(r'^# File (?:"(?P<quoted>.+?)"|(?P<bare>[^",]+)), line (?P<line>\d+)')
_FILE_COMMENT = "# File "
_FX_CODE = re.compile(r"^## FX Code: (?P<node>[A-Za-z_][\w]*)")
_GE_CALL = re.compile(r"^(?P<outs>[^=#]*?)\s*=\s*ge\.(?P<type>\w+)\((?P<args>.*)\)\s*(?:#.*)?$")
_NODE_NAME = re.compile(r'node_name="(?P<name>(?:[^"\\]|\\.)*)"\s*$')


def read_torchair_txt(path: str, text: str, progress: Progress | None = None) -> TorchAirGraph:
    reader = TextReader(path, text, progress)
    graph = read_text(reader, ge_graph_def(), lambda r, m: r.read_graph(m))
    out = TorchAirGraph(path, TORCHAIR_TXT, graph.name)
    for op in graph.op:
        nodes = _fx_nodes(
            desc.attr[FX_TENSOR_NAME].s.decode("utf-8", "surrogateescape") for desc in op.output_desc if FX_TENSOR_NAME in desc.attr
        )
        out.ops[op.name] = TorchAirOp(op.name, op.type, nodes)
    return out


def _fx_nodes(names: Any) -> list[str]:
    found: list[str] = []
    for value in names:
        node = fx_node_of_tensor_name(value)
        if node is not None and node not in found:
            found.append(node)
    return found


def read_torchair_pbtxt(path: str, text: str, progress: Progress | None = None) -> TorchAirGraph:
    reader = TextReader(path, text, progress)
    graph = read_text(reader, message_class("tf_graph.proto", "GraphDef"), lambda r, m: r.read_graph(m, "node {"))
    out = TorchAirGraph(path, TORCHAIR_PBTXT, "")
    for node in graph.node:
        tensor_names = []
        for key in node.attr:
            if not key.startswith("[o]"):
                continue
            desc = ge_tensor_descriptor()()
            try:
                text_format.Parse(node.attr[key].s.decode("utf-8", "surrogateescape"), desc)
            except text_format.ParseError as exc:
                raise DumpReadError(
                    f"{path}: node {node.name!r}, desc {key!r} is not TensorDescriptor text ({exc}). The file is not what TorchAir's pbtxt dump writes."
                ) from exc
            if FX_TENSOR_NAME in desc.attr:
                tensor_names.append(desc.attr[FX_TENSOR_NAME].s.decode("utf-8", "surrogateescape"))
        out.ops[node.name] = TorchAirOp(node.name, node.op, _fx_nodes(tensor_names))
    return out


def read_torchair_py(path: str, text: str) -> TorchAirGraph:
    out = TorchAirGraph(path, TORCHAIR_PY, "")
    source: str | None = None
    node: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if match := _FILE_LINE.match(stripped):
            source = f"{match.group('quoted') or match.group('bare')}:{match.group('line')}"
        elif stripped.startswith(_FILE_COMMENT):  # a frame this reader cannot place: no line, rather than the one before
            source = None
        elif match := _FX_CODE.match(stripped):
            node = match.group("node")
        elif match := _GE_CALL.match(stripped):
            name = _op_name(match)
            op = out.ops.setdefault(name, TorchAirOp(name, match.group("type")))
            if node is not None and node not in op.fx_nodes:
                op.fx_nodes.append(node)
            if node is not None and source is not None and source not in op.source:
                op.source.append(source)
    return out


def _op_name(call: re.Match[str]) -> str:
    """``node_name="X"`` where given, else the first output variable less its ``_<i>``
    (TorchAir names an output ``<op>_<index>``)."""
    named = _NODE_NAME.search(call.group("args"))
    if named is not None:
        return named.group("name").encode("utf-8", "surrogateescape").decode("unicode_escape")
    first = call.group("outs").split(",")[0].strip().strip("[]")
    return re.sub(r"_\d+$", "", first)
