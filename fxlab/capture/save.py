"""Write and read the saved trace layout (DESIGN.md, "Saved trace layout").

``DIR/manifest.json`` is written last and only says ``"status": "ok"`` when everything
before it was written; a run that fails midway leaves a manifest saying ``"failed"``
with the reason, never one that looks complete. File names are deterministic.
"""
from __future__ import annotations

import json
import os
import tempfile
from json.encoder import (
    encode_basestring_ascii as _quote,  # what json.dumps uses for str
)
from pathlib import Path
from typing import Any

from fxlab.capture.trace import (
    NodeRecord,
    TensorMeta,
    Trace,
    stage_from_json,
    stage_to_json,
)
from fxlab.errors import OutputError
from fxlab.heap import frozen_heap

MANIFEST = "manifest.json"
CONVERSION_SUMMARY_CSV = "conversion_summary.csv"
CONVERSION_SUMMARY_JSON = "conversion_summary.json"


def prepare_out_dir(path: str | Path) -> Path:
    """Create ``path`` (or reuse it), check it is writable, and remove a stale manifest
    so an interrupted run cannot be mistaken for a complete one."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} is a file, not a directory. Give a directory path (it is created if missing).")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".fxlab-write-probe"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise OutputError(f"--out {out} is not writable ({exc.strerror or exc}). Choose a directory you can write to.") from exc
    (out / MANIFEST).unlink(missing_ok=True)
    return out


def write_text_atomic(path: Path, text: str) -> None:
    """Write to a temporary file beside ``path`` and rename it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, default=str) + "\n")


def stage_json_text(stage: Any) -> str:
    """A stage as JSON, one node per line: readable, diffable, and fast to write (the
    C encoder runs only without ``indent``)."""
    head = json.dumps({"name": stage.name, "code": stage.code})[:-1]
    nodes = ",\n  ".join([node_json_text(n) for n in stage.nodes])
    return f'{head}, "nodes": [\n  {nodes}\n]}}\n'


# json.dumps(..., default=str) builds a new encoder per call: one serves every node.
_NODE_ENCODER = json.JSONEncoder(default=str)
_encode = _NODE_ENCODER.encode


def node_json_text(node: NodeRecord) -> str:
    """``json.dumps(node_to_json(node), default=str)``, written field by field: a node
    record has a fixed shape of strings, ints and lists of them, and building the dict
    and encoding it generically costs several times more. JSON text is compositional,
    so any field that is not of the plain expected types is encoded by the encoder."""
    prov = node.provenance
    return (
        f'{{"name": {_text(node.name)}, "op": {_text(node.op)}, "target": {_text(node.target)}, "args": {_text(node.args)}, '
        f'"outputs": {_outputs(node.outputs)}, "provenance": {{"file": {_text(prov.file)}, "line": {_int(prov.line)}, '
        f'"code": {_text(prov.code)}, "module_path": {_texts(prov.module_path)}, "from_node": {_texts(prov.from_node)}, '
        f'"original_aten": {_text(prov.original_aten)}}}, "mutates": {_texts(node.mutates)}, "kind": {_text(node.kind)}, '
        f'"scopes": {_texts(node.scopes)}, "ge_ops": {_texts(node.ge_ops)}}}'
    )


def _text(value: Any) -> str:
    if type(value) is str:
        return _quote(value)
    return "null" if value is None else _encode(value)


def _int(value: Any) -> str:
    if type(value) is int:
        return str(value)
    return "null" if value is None else _encode(value)


def _texts(values: Any) -> str:
    if type(values) is list:
        if not values:
            return "[]"
        try:
            return "[" + ", ".join(map(_quote, values)) + "]"
        except TypeError:  # not all strings
            pass
    return _encode(values)


def _outputs(metas: Any) -> str:
    if type(metas) is not list:
        return _encode([{"shape": m.shape, "dtype": m.dtype, "stride": m.stride} for m in metas])
    return "[" + ", ".join([_tensor_meta(m) for m in metas]) + "]"


def _tensor_meta(meta: TensorMeta) -> str:
    return f'{{"shape": {_dims(meta.shape)}, "dtype": {_text(meta.dtype)}, "stride": {"null" if meta.stride is None else _dims(meta.stride)}}}'


def _dims(dims: Any) -> str:
    if type(dims) is list:
        try:
            return "[" + ", ".join([str(d) if type(d) is int else _quote(d) for d in dims]) + "]"
        except TypeError:  # neither int nor str
            pass
    return _encode(dims)


def save_trace(trace: Trace, out: Path) -> list[Path]:
    """Write every graph's stages and Ascend IR, then the manifest. Returns the files."""
    with frozen_heap():
        written = _write_graphs(trace, out)
        write_json(out / MANIFEST, manifest(trace))
    written.append(out / MANIFEST)
    return written


def _write_graphs(trace: Trace, out: Path) -> list[Path]:
    written: list[Path] = []
    try:
        for graph in trace.graphs:
            folder = out / f"graph_{graph.index}"
            folder.mkdir(exist_ok=True)
            for name, stage in graph.stages.items():
                write_text_atomic(folder / f"{name}.py", stage.code)
                write_text_atomic(folder / f"{name}.json", stage_json_text(stage))
                written += [folder / f"{name}.py", folder / f"{name}.json"]
            if graph.ir is not None:
                written += _write_ir(graph, folder)
    except OSError as exc:
        write_failed_manifest(out, trace.model, f"writing the trace failed: {exc}")
        raise OutputError(f"writing the trace to {out} failed: {exc}. Check free space and permissions.") from exc
    return written


def _write_ir(graph: Any, folder: Path) -> list[Path]:
    from fxlab.ir.dumps import write_ir_dumps

    functional = graph.converted_module()
    written = list(write_ir_dumps(graph.ir, folder, fx_graph=functional))
    if graph.conversion is not None and functional is not None:
        from fxlab.reports import conversion_summary as summary

        rows = summary.graph_summary(graph)
        written.append(summary.write_summary_csv(rows, folder / CONVERSION_SUMMARY_CSV))
        written.append(summary.write_summary_json(rows, folder / CONVERSION_SUMMARY_JSON))
    return written


def manifest(trace: Trace) -> dict[str, Any]:
    # Stages live in their own files; the manifest lists them.
    data = trace.to_json(with_stages=False)
    for graph in data["graphs"]:
        graph["has_ascend_ir"] = graph.pop("ir") is not None
    return data


def write_failed_manifest(out: Path, model: str, reason: str) -> None:
    write_json(out / MANIFEST, {"model": model, "status": "failed", "error": reason, "graphs": []})


def load_trace(path: str | Path) -> Trace:
    """Read a saved trace directory back into a :class:`Trace` (stages and IR included)."""
    out = Path(path)
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise OutputError(f"{out} holds no saved trace ({MANIFEST} is missing). Write one with `fxlab trace MODEL.py --out {out}`.") from exc
    if data.get("status") == "failed":
        raise OutputError(f"the trace in {out} is from a failed run: {data.get('error')}. Run `fxlab trace` again.")
    graphs = data.get("graphs", [])
    for graph in graphs:
        folder = out / f"graph_{graph['index']}"
        graph["stages"] = {
            name: stage_to_json(stage_from_json(json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))))
            for name in graph["stages"]
        }
        ir_file = folder / "ascend_ir.json"
        graph["ir"] = json.loads(ir_file.read_text(encoding="utf-8")) if graph.pop("has_ascend_ir", False) and ir_file.exists() else None
    return Trace.from_json(data)
