"""GE's own graphs: phase dumps (``ge_proto_*.txt``, protobuf text of ``ModelDef``: the
dumped graph first, then each subgraph as another graph), SuperKernel sub-graph dumps
(the same format, phase ``super_kernel_sub_graph<N>``) and OM models as JSON
(``atc --mode=1``: the same ``ModelDef`` as protobuf JSON, maps as key/value lists)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fxlab.npu_dumps.ge_ops import op_from_json, op_from_message
from fxlab.npu_dumps.dump_model import GE_PROTO, OM_JSON, DumpGraph
from fxlab.npu_dumps.names import DumpName
from fxlab.npu_dumps.proto_text import DumpReadError, Progress, TextReader, read_text
from fxlab.npu_dumps.schemas import ge_model_def


def read_ge_proto(path: str, text: str, name: DumpName | None, progress: Progress | None = None) -> list[DumpGraph]:
    """The graphs of one ``ge_proto_*.txt`` dump."""
    reader = TextReader(path, text, progress)
    model = read_text(reader, ge_model_def(), lambda r, m: r.read_model(m))
    if not model.graph:
        raise DumpReadError(
            f"{path}: holds no graph (an empty ModelDef). Copy the dump again from the NPU machine, or leave this file out."
        )
    graphs = []
    parents = _parents(model.graph)
    for graph in model.graph:
        graphs.append(
            DumpGraph(
                file=path,
                format=GE_PROTO,
                graph_id=name.graph_id if name else None,
                phase=name.phase if name else "",
                name=graph.name,
                index=name.index if name else None,
                ops=[op_from_message(op) for op in graph.op],
                parent=parents.get(graph.name),
            )
        )
    return graphs


def _parents(graphs: Any) -> dict[str, str]:
    """Subgraph name -> the graph whose op names it in ``subgraph_name``."""
    parents: dict[str, str] = {}
    for graph in graphs:
        for op in graph.op:
            for sub in op.subgraph_name:
                parents.setdefault(sub, graph.name)
    return parents


def is_om_model(data: Any) -> bool:
    """Whether parsed JSON has an OM model's shape: an object with a ``graph`` list."""
    return isinstance(data, Mapping) and isinstance(data.get("graph"), list)


def read_om_json(path: str, data: Any, name: DumpName | None) -> list[DumpGraph]:
    """The graphs of an OM model converted to JSON (``atc --mode=1 --om X --json Y``)."""
    if not is_om_model(data):
        raise DumpReadError(
            f"{path}: not an OM model as JSON (no 'graph' list at the top). Convert the model with "
            "`atc --mode=1 --om MODEL.om --json MODEL.json` and pass that file."
        )
    graphs = []
    for graph in data["graph"]:
        if not isinstance(graph, Mapping):
            raise DumpReadError(f"{path}: a 'graph' entry is not an object. The file is not what `atc --mode=1` writes.")
        if not isinstance(graph.get("op", []) or [], list):
            raise DumpReadError(
                f"{path}: the 'op' of graph {graph.get('name', '')!r} is not a list. The file is not what `atc --mode=1` writes."
            )
        ops = [op_from_json(_checked_op(path, str(graph.get("name", "")), op)) for op in graph.get("op", []) or []]
        graphs.append(DumpGraph(path, OM_JSON, None, "om", str(graph.get("name", "")), None, ops))
    _json_parents(data["graph"], graphs)
    return graphs


# An op's fields that hold lists in what `atc --mode=1` writes ("attr" may be an object too).
_OP_LISTS = ("input", "output_desc", "input_desc", "subgraph_name")


def _checked_op(path: str, graph: str, op: Any) -> Mapping[str, Any]:
    """An op entry of OM JSON, its fields of the kinds ``atc`` writes, else the error naming it."""
    if not isinstance(op, Mapping):
        raise DumpReadError(f"{path}: an 'op' entry of graph {graph!r} is not an object. The file is not what `atc --mode=1` writes.")
    wrong = [key for key in _OP_LISTS if op.get(key) is not None and not isinstance(op[key], list)]
    if op.get("attr") is not None and not isinstance(op["attr"], (list, Mapping)):
        wrong.append("attr")
    if wrong:
        raise DumpReadError(
            f"{path}: op {str(op.get('name', ''))!r} of graph {graph!r} has {', '.join(repr(key) for key in wrong)} that is not a list. "
            "The file is not what `atc --mode=1` writes: convert the model again with `atc --mode=1 --om MODEL.om --json MODEL.json`."
        )
    return op


def _json_parents(raw: list[Any], graphs: list[DumpGraph]) -> None:
    names: dict[str, str] = {}
    for data, graph in zip(raw, graphs):
        for op in data.get("op", []) or []:
            if isinstance(op, Mapping):
                for sub in op.get("subgraph_name", []) or []:
                    names.setdefault(str(sub), graph.name)
    for graph in graphs:
        graph.parent = names.get(graph.name)
