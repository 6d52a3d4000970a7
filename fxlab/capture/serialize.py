"""The one serializer of a :class:`~fxlab.capture.trace.Trace`, each way.

:func:`trace_files` gives every file of the saved layout (README, "Saved traces") as
``{relative path: text or bytes}``; the command line writes them (``fxlab.cli.files``).
:func:`load_trace` reads such a folder back into an equal ``Trace``: save, load and save
again gives the same bytes (``tests/capture/test_serialize.py``). JSON is strict
(:mod:`fxlab.ir.json_values`), file names are deterministic (no timestamps, no pids).

The layout::

    manifest.json                    the trace without its stages, IR and summaries
    graph_<k>/<stage>.py, .json      each FX stage: its code, and its nodes one per line
    graph_<k>/ascend_ir.*            the GE graph: .json, .pb, .pbtxt and TorchAir's .py dump
    graph_<k>/conversion_summary.*   the per-target conversion summary, .csv and .json
    graph_<k>/aclgraph_capture.py    the ACL graph capture code (the aclgraph path)
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import asdict
from json.encoder import encode_basestring_ascii as _quote  # what json.dumps uses for str
from pathlib import Path
from typing import Any

from fxlab.capture.trace import (
    CallRecord,
    CheckResult,
    ConversionRecord,
    GraphTrace,
    NodeRecord,
    ProgramCompile,
    Provenance,
    Recompile,
    StageTrace,
    TensorMeta,
    Trace,
)
from fxlab.errors import OutputError
from fxlab.ir.dumps import ir_dump_files
from fxlab.ir.json_values import dumps_strict, finite_json
from fxlab.ir.model import IrGraph
from fxlab.passes.infra import PassRecord
from fxlab.reports.conversion_summary import SummaryRow, summary_csv_text, summary_json_text, summary_rows_from_json
from fxlab.saved_layout import (
    CAPTURE_CODE,
    CONVERSION_SUMMARY_CSV,
    CONVERSION_SUMMARY_JSON,
    IR_JSON_FILE,
    IR_PY_FILE,
    MANIFEST,
    graph_folder,
)

TraceFiles = dict[str, "str | bytes"]


# -- writing ------------------------------------------------------------------------------------
def trace_files(trace: Trace) -> TraceFiles:
    """Every file of ``trace``'s saved folder, the manifest last."""
    files: TraceFiles = {}
    for graph in trace.graphs:
        folder = graph_folder(graph.index)
        for name, stage in graph.stages.items():
            files[f"{folder}/{name}.py"] = stage.code
            files[f"{folder}/{name}.json"] = stage_json_text(stage)
        if graph.capture_code is not None:
            files[f"{folder}/{CAPTURE_CODE}"] = graph.capture_code
        if graph.ir is not None:
            files.update({f"{folder}/{name}": data for name, data in ir_dump_files(graph.ir, graph.ir_py or "").items()})
        if graph.conversion is not None:
            files[f"{folder}/{CONVERSION_SUMMARY_CSV}"] = summary_csv_text(graph.conversion.summary)
            files[f"{folder}/{CONVERSION_SUMMARY_JSON}"] = summary_json_text(graph.conversion.summary)
    files[MANIFEST] = json_text(manifest(trace))
    return files


def json_text(data: Any) -> str:
    return dumps_strict(data, indent=1, default=str) + "\n"


def failed_manifest_text(model: str, reason: str) -> str:
    """The manifest of a run that failed into a folder that held no trace."""
    return json_text({"model": model, "status": "failed", "error": reason, "graphs": []})


def manifest(trace: Trace) -> dict[str, Any]:
    """The trace as JSON, without what has files of its own (stages, IR, summaries, code)."""
    data: dict[str, Any] = {
        "model": trace.model,
        "entry": trace.entry,
        "fxlab_version": trace.fxlab_version,
        "torch_version": trace.torch_version,
        "stages": list(trace.stages),
        "mode": trace.mode,
        "options_set": list(trace.options_set),
        "status": trace.status,
        "notes": list(trace.notes),
        **({"problems": list(trace.problems)} if trace.problems else {}),  # written only where there is something to say
        "check": check_to_json(trace.check),
        "ir_check": check_to_json(trace.ir_check),
        "aclgraph_check": check_to_json(trace.aclgraph_check),
        "user_pass_check": check_to_json(trace.user_pass_check),
        "graphs": [_graph_to_json(g) for g in trace.graphs],
    }
    if trace.compile_options:
        data["compile_options"] = dict(trace.compile_options)
    if trace.calls:
        data["calls"] = [call_to_json(call) for call in trace.calls]
    if trace.program is not None:
        data["program"] = asdict(trace.program)
    return data


def _graph_to_json(graph: GraphTrace) -> dict[str, Any]:
    return {
        "index": graph.index,
        "break_reason": graph.break_reason,
        "break_location": graph.break_location,
        "error": graph.error,
        "stages": list(graph.stages),
        "mutated_inputs": list(graph.mutated_inputs),
        "passes": {name: [record.to_json() for record in records] for name, records in graph.passes.items()},
        "patterns": list(graph.patterns),
        "conversion": _conversion_to_json(graph.conversion),
        "has_ascend_ir": graph.ir is not None,
        "torchair_aclgraph": graph.torchair_aclgraph,
        "streams": graph.streams,
    }


def _conversion_to_json(conversion: ConversionRecord | None) -> dict[str, Any] | None:
    if conversion is None:
        return None
    return {
        "ops": conversion.ops,
        "partial": conversion.partial,
        "seconds": conversion.seconds,
        "warnings": list(conversion.warnings),
        "notes": list(conversion.notes),
        "assigns_to_outputs": list(conversion.assigns_to_outputs),
        "ge_options": dict(conversion.ge_options),
        "host_outputs": list(conversion.host_outputs),
        "not_converted": list(conversion.not_converted),
        "auto_converted": list(conversion.auto_converted),
    }


def check_to_json(check: CheckResult | None) -> dict[str, Any] | None:
    if check is None:
        return None
    data: dict[str, Any] = {
        "ok": check.ok,
        "compared": check.compared,
        "max_abs_diff": check.max_abs_diff,
        "mismatches": list(check.mismatches),
        "skipped": check.skipped,
        "not_run": list(check.not_run),
    }
    for key in ("approximations", "notes", "refused"):  # written only where there is something to say
        if getattr(check, key):
            data[key] = list(getattr(check, key))
    if check.compared_with:
        data["compared_with"] = check.compared_with
    return data


def call_to_json(call: CallRecord) -> dict[str, Any]:
    return {
        "index": call.index,
        "inputs": call.inputs,
        "origin": call.origin,
        "graphs": list(call.graphs),
        "compiled": list(call.compiled),
        "reused": call.reused,
        "recompiles": [{"graph": r.graph, "reasons": list(r.reasons), "words": list(r.words)} for r in call.recompiles],
        "check": check_to_json(call.check),
        "ir_check": check_to_json(call.ir_check),
    }


def stage_json_text(stage: StageTrace) -> str:
    """A stage as JSON, one node per line: readable, diffable, and fast to write (the
    C encoder runs only without ``indent``)."""
    head = json.dumps({"name": stage.name, "code": stage.code})[:-1]
    nodes = ",\n  ".join([node_json_text(n) for n in stage.nodes])
    return f'{head}, "nodes": [\n  {nodes}\n]}}\n'


# One encoder serves every node (json.dumps builds a new one per call).
_NODE_ENCODER = json.JSONEncoder(default=str, allow_nan=False)


def _encode(value: Any) -> str:
    try:
        return _NODE_ENCODER.encode(value)
    except ValueError:  # a non-finite float: strict JSON writes it as a string
        return _NODE_ENCODER.encode(finite_json(value))


def node_json_text(node: NodeRecord) -> str:
    """A node record as one line of JSON, written field by field: a record has a fixed
    shape of strings, ints and lists of them, and building a dict to encode costs several
    times more on a large graph. JSON text is compositional, so a field that is not of
    the plain expected types goes through the encoder."""
    prov = node.provenance
    library = f', "library_location": {_text(prov.library_location)}' if prov.library_location else ""
    return (
        f'{{"name": {_text(node.name)}, "op": {_text(node.op)}, "target": {_text(node.target)}, "args": {_text(node.args)}, '
        f'"inputs": {_texts(node.inputs)}, "outputs": {_outputs(node.outputs)}, "provenance": {{"file": {_text(prov.file)}, '
        f'"line": {_int(prov.line)}, "code": {_text(prov.code)}, "module_path": {_texts(prov.module_path)}, '
        f'"from_node": {_texts(prov.from_node)}, "original_aten": {_text(prov.original_aten)}{library}}}, '
        f'"mutates": {_texts(node.mutates)}, "kind": {_text(node.kind)}, "scopes": {_texts(node.scopes)}, "ge_ops": {_texts(node.ge_ops)}}}'
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


def _outputs(metas: list[TensorMeta]) -> str:
    return "[" + ", ".join([_tensor_meta(m) for m in metas]) + "]"


def _tensor_meta(meta: TensorMeta) -> str:
    stride = "null" if meta.stride is None else _dims(meta.stride)
    return f'{{"shape": {_dims(meta.shape)}, "dtype": {_text(meta.dtype)}, "stride": {stride}}}'


def _dims(dims: Any) -> str:
    if type(dims) is list:
        try:
            return "[" + ", ".join([str(d) if type(d) is int else _quote(d) for d in dims]) + "]"
        except TypeError:  # neither int nor str
            pass
    return _encode(dims)


# -- reading ------------------------------------------------------------------------------------
def load_trace(path: str | Path) -> Trace:
    """Read a saved trace folder back into the :class:`Trace` that was saved."""
    out = Path(path)
    data = _manifest_of(out)
    try:
        return _trace_from_json(data, lambda name: out / name)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _unreadable(out, exc) from exc


def _manifest_of(out: Path) -> dict[str, Any]:
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise OutputError(
            f"{out} holds no saved trace ({MANIFEST} is missing). Write one with `fxlab trace MODEL.py --out {shlex.quote(str(out))}`."
        ) from exc
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise _unreadable(out, exc) from exc
    if not isinstance(data, dict):
        raise OutputError(
            f"{out / MANIFEST} holds {_JSON_KINDS.get(type(data), 'a JSON value')}, not the object `fxlab trace --out` writes. "
            f"Write the trace again with `fxlab trace MODEL.py --out {shlex.quote(str(out))}`."
        )
    if data.get("status") == "failed":
        raise OutputError(f"the trace in {out} is from a failed run: {str(data.get('error')).rstrip('.')}. Run `fxlab trace` again.")
    if isinstance(data.get("ranks"), list) and "graphs" not in data:  # fxlab trace --nproc N --out
        raise OutputError(
            f"{out} holds a trace of {len(data['ranks'])} ranks: pass one rank's folder, e.g. {out / 'rank_0'} "
            f"(`fxlab diff {shlex.quote(str(out / 'rank_0'))} {shlex.quote(str(out / 'rank_1'))}` compares two ranks)."
        )
    if isinstance(data.get("traces"), list) and "graphs" not in data:  # fxlab run --out: a program's traces
        first = next((str(t.get("folder")) for t in data["traces"] if isinstance(t, dict) and t.get("folder")), None)
        example = (
            f"pass one trace's folder, e.g. {out / first}"
            if first
            else "it holds no trace: the program compiled nothing with TorchAir's backends"
        )
        raise OutputError(f"{out} holds a program run ({len(data['traces'])} trace(s), `fxlab run --out`): {example}.")
    return data


_JSON_KINDS = {
    type(None): "null",
    list: "a JSON array",
    str: "a JSON string",
    int: "a JSON number",
    float: "a JSON number",
    bool: "a JSON boolean",
}


def _unreadable(out: Path, exc: BaseException) -> OutputError:
    return OutputError(
        f"{out} is not a readable saved trace ({type(exc).__name__}: {exc}). Write it again with `fxlab trace MODEL.py --out {out}`."
    )


FileAt = Callable[[str], Path]


def _trace_from_json(data: dict[str, Any], file_at: FileAt) -> Trace:
    return Trace(
        model=str(data["model"]),
        entry=str(data["entry"]),
        fxlab_version=str(data["fxlab_version"]),
        torch_version=str(data["torch_version"]),
        stages=list(data.get("stages", [])),
        mode=str(data.get("mode", "max-autotune")),
        options_set=list(data.get("options_set", [])),
        compile_options=dict(data.get("compile_options", {})),
        status=str(data.get("status", "ok")),
        notes=list(data.get("notes", [])),
        problems=list(data.get("problems", [])),
        check=check_from_json(data.get("check")),
        ir_check=check_from_json(data.get("ir_check")),
        aclgraph_check=check_from_json(data.get("aclgraph_check")),
        user_pass_check=check_from_json(data.get("user_pass_check")),
        graphs=[_graph_from_json(g, file_at) for g in data.get("graphs", [])],
        calls=[call_from_json(c) for c in data.get("calls", [])],
        program=ProgramCompile(**data["program"]) if data.get("program") else None,
    )


def _graph_from_json(data: dict[str, Any], file_at: FileAt) -> GraphTrace:
    if type(data.get("index")) is not int:  # it names a folder: never a path of the file's choosing
        raise ValueError(f"graph index {data.get('index')!r} is not an integer")
    folder = graph_folder(data["index"])
    has_ir = bool(data.get("has_ascend_ir"))
    conversion = _conversion_from_json(data.get("conversion"), file_at(f"{folder}/{CONVERSION_SUMMARY_JSON}"))
    return GraphTrace(
        index=data["index"],
        break_reason=data.get("break_reason"),
        break_location=data.get("break_location"),
        error=data.get("error"),
        stages={name: _stage_from_file(file_at(f"{folder}/{name}.json")) for name in data.get("stages", []) if _plain_name(name)},
        mutated_inputs=list(data.get("mutated_inputs", [])),
        passes={str(name): [PassRecord.from_json(r) for r in records] for name, records in data.get("passes", {}).items()},
        patterns=list(data.get("patterns", [])),
        conversion=conversion,
        ir=IrGraph.from_json(json.loads(file_at(f"{folder}/{IR_JSON_FILE}").read_text(encoding="utf-8"))) if has_ir else None,
        ir_py=file_at(f"{folder}/{IR_PY_FILE}").read_text(encoding="utf-8") if has_ir else None,
        capture_code=_optional_text(file_at(f"{folder}/{CAPTURE_CODE}")),
        torchair_aclgraph=data.get("torchair_aclgraph"),
        streams=data.get("streams"),
    )


def _optional_text(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _plain_name(name: Any) -> bool:
    if isinstance(name, str) and name.isidentifier():
        return True
    raise ValueError(f"stage name {name!r} is not a stage")


def _conversion_from_json(data: dict[str, Any] | None, summary_file: Path) -> ConversionRecord | None:
    if data is None:
        return None
    summary: list[SummaryRow] = summary_rows_from_json(json.loads(summary_file.read_text(encoding="utf-8")))
    return ConversionRecord(
        ops=int(data["ops"]),
        partial=bool(data["partial"]),
        seconds=float(data.get("seconds", 0.0)),
        warnings=list(data.get("warnings", [])),
        notes=list(data.get("notes", [])),
        assigns_to_outputs=list(data.get("assigns_to_outputs", [])),
        ge_options=dict(data.get("ge_options", {})),
        host_outputs=list(data.get("host_outputs", [])),
        not_converted=list(data.get("not_converted", [])),
        auto_converted=list(data.get("auto_converted", [])),
        summary=summary,
    )


def _stage_from_file(path: Path) -> StageTrace:
    data = json.loads(path.read_text(encoding="utf-8"))
    return StageTrace(name=str(data["name"]), code=str(data["code"]), nodes=[node_from_json(n) for n in data["nodes"]])


def node_from_json(data: dict[str, Any]) -> NodeRecord:
    return NodeRecord(
        name=data["name"],
        op=data["op"],
        target=data["target"],
        args=data["args"],
        inputs=list(data.get("inputs", [])),
        outputs=[TensorMeta(**m) for m in data.get("outputs", [])],
        provenance=Provenance(**data.get("provenance", {})),
        mutates=list(data.get("mutates", [])),
        kind=data.get("kind", ""),
        scopes=list(data.get("scopes", [])),
        ge_ops=list(data.get("ge_ops", [])),
    )


def check_from_json(data: dict[str, Any] | None) -> CheckResult | None:
    return CheckResult(**data) if data else None


def call_from_json(data: dict[str, Any]) -> CallRecord:
    return CallRecord(
        index=int(data["index"]),
        inputs=str(data.get("inputs", "")),
        origin=str(data.get("origin", "given")),
        graphs=list(data.get("graphs", [])),
        compiled=list(data.get("compiled", [])),
        recompiles=[Recompile(int(r["graph"]), list(r.get("reasons", [])), list(r.get("words", []))) for r in data.get("recompiles", [])],
        check=check_from_json(data.get("check")),
        ir_check=check_from_json(data.get("ir_check")),
    )
