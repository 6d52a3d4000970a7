"""Write and read the saved trace layout (README, "Saved traces").

A trace is built in a hidden sibling folder of ``--out`` and moved into place only when
complete (:class:`StagedTrace`), so ``--out`` always holds exactly one whole trace: the
new one, or, when the run fails or is interrupted, the one that was there before, left
as it was. ``DIR/manifest.json`` says ``"status": "failed"`` only for a run that failed
into a folder that held no trace. Files and folders get the modes the umask gives; all
JSON is strict (fxlab/ir/json_values.py). File names are deterministic.
"""

from __future__ import annotations

import json
import os
import shutil
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
from fxlab.ir.dumps import new_dir_mode, write_atomic
from fxlab.ir.json_values import dumps_strict, finite_json

MANIFEST = "manifest.json"
CONVERSION_SUMMARY_CSV = "conversion_summary.csv"
CONVERSION_SUMMARY_JSON = "conversion_summary.json"


def prepare_out_dir(path: str | Path) -> Path:
    """Create ``path`` (or reuse it) and check it is writable: a folder for files that are
    not a trace (pictures without ``--out``). A trace goes through :class:`StagedTrace`."""
    out = Path(path)
    _refuse_file(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".fxlab-write-probe"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise OutputError(f"--out {out} is not writable ({exc.strerror or exc}). Choose a directory you can write to.") from exc
    return out


def _refuse_file(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} is a file, not a directory. Give a directory path (it is created if missing).")


class StagedTrace:
    """A trace folder built beside ``out`` and moved into place whole.

    ``folder`` is where the files go; :meth:`publish` replaces ``out`` with it (the old
    trace, pictures and all, is removed: the folder holds exactly one trace);
    :meth:`abandon` removes it and leaves ``out`` as it was."""

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.published = False
        # The real folder: "." has no name to put a sibling beside, a symlink is written through.
        self._final = Path(os.path.realpath(self.out))
        _refuse_file(self.out)
        _refuse_working_folder(self.out, self._final)
        self.had_trace = (self.out / MANIFEST).is_file()
        _refuse_foreign_files(self.out, self.had_trace)
        parent = self._final.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.folder = Path(tempfile.mkdtemp(dir=parent, prefix=f".{self._final.name}.fxlab-"))
            os.chmod(self.folder, new_dir_mode())  # mkdtemp makes 0700
        except OSError as exc:
            raise OutputError(
                f"--out {self.out} cannot be written: its parent folder {parent} is not writable ({exc.strerror or exc}). "
                "Choose a directory you can write to."
            ) from exc

    def publish(self) -> None:
        """Move the complete trace into place; the previous one goes only then. Interrupted
        between the two moves, the previous trace is put back."""
        old = None
        try:
            if self._final.exists():
                old = Path(tempfile.mkdtemp(dir=self.folder.parent, prefix=f".{self._final.name}.old-"))
                os.replace(self._final, old / "trace")
            os.replace(self.folder, self._final)
            self.published = True
        except BaseException:
            if old is not None and (old / "trace").exists() and not self._final.exists():
                os.replace(old / "trace", self._final)
            raise
        finally:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)

    def abandon(self, model: str, reason: str) -> str:
        """After a failure: remove the half-built folder and say what ``out`` holds:
        ``"new"`` (the new trace was already in place), ``"kept"`` (the previous trace,
        untouched) or ``"failed"`` (a manifest saying the run failed and why)."""
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.published:
            return "new"
        if self.had_trace:
            return "kept"
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            write_failed_manifest(self.out, model, reason)
        except OSError:
            pass  # nothing to keep, and the failure itself is what gets reported
        return "failed"


def _refuse_working_folder(out: Path, final: Path) -> None:
    """The folder fxlab runs in (or one around it) cannot be moved aside and replaced."""
    cwd = Path(os.path.realpath(os.getcwd()))
    if final == cwd or final in cwd.parents:
        raise OutputError(
            f"--out {out} is the folder you run fxlab in (or holds it); a trace replaces its whole folder. "
            "Give a folder of its own, e.g. --out trace_out."
        )


def _refuse_foreign_files(out: Path, had_trace: bool) -> None:
    """A folder fxlab would replace must be empty or a saved trace: never delete the user's files."""
    if had_trace or not out.is_dir():
        return
    others = sorted(p.name for p in out.iterdir())
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise OutputError(
            f"--out {out} already holds files that are not a saved trace ({shown}); a trace replaces its whole "
            "folder, so fxlab does not write there. Give a new or empty directory, or one an earlier `fxlab trace --out` wrote."
        )


def write_text_atomic(path: Path, text: str) -> None:
    """Write to a temporary file beside ``path`` and rename it into place."""
    write_atomic(path, text)


def write_json(path: Path, data: Any) -> None:
    write_text_atomic(path, dumps_strict(data, indent=1, default=str) + "\n")


def stage_json_text(stage: Any) -> str:
    """A stage as JSON, one node per line: readable, diffable, and fast to write (the
    C encoder runs only without ``indent``)."""
    head = json.dumps({"name": stage.name, "code": stage.code})[:-1]
    nodes = ",\n  ".join([node_json_text(n) for n in stage.nodes])
    return f'{head}, "nodes": [\n  {nodes}\n]}}\n'


# json.dumps(..., default=str) builds a new encoder per call: one serves every node.
_NODE_ENCODER = json.JSONEncoder(default=str, allow_nan=False)


def _encode(value: Any) -> str:
    try:
        return _NODE_ENCODER.encode(value)
    except ValueError:  # a non-finite float: strict JSON writes it as a string
        return _NODE_ENCODER.encode(finite_json(value))


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
    return (
        f'{{"shape": {_dims(meta.shape)}, "dtype": {_text(meta.dtype)}, "stride": {"null" if meta.stride is None else _dims(meta.stride)}}}'
    )


def _dims(dims: Any) -> str:
    if type(dims) is list:
        try:
            return "[" + ", ".join([str(d) if type(d) is int else _quote(d) for d in dims]) + "]"
        except TypeError:  # neither int nor str
            pass
    return _encode(dims)


def save_trace(trace: Trace, out: Path) -> list[Path]:
    """Write every graph's stages and Ascend IR, then the manifest. Returns the files."""
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

        rows = graph.conversion_summary()
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
        raise OutputError(
            f"{out} holds no saved trace ({MANIFEST} is missing). Write one with `fxlab trace MODEL.py --out {out}`."
        ) from exc
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise _unreadable(out, exc) from exc
    if not isinstance(data, dict):
        raise OutputError(
            f"{out / MANIFEST} holds {_JSON_KINDS.get(type(data), 'a JSON value')}, not the object `fxlab trace --out` writes. "
            f"Write the trace again with `fxlab trace MODEL.py --out {out}`."
        )
    if data.get("status") == "failed":
        raise OutputError(f"the trace in {out} is from a failed run: {data.get('error')}. Run `fxlab trace` again.")
    if isinstance(data.get("ranks"), list) and "graphs" not in data:  # fxlab trace --nproc N --out
        raise OutputError(
            f"{out} holds a trace of {len(data['ranks'])} ranks: pass one rank's folder, e.g. {out / 'rank_0'} "
            f"(`fxlab diff {out / 'rank_0'} {out / 'rank_1'}` compares two ranks)."
        )
    try:
        for graph in data.get("graphs", []):
            _load_graph_files(out, graph)
        return Trace.from_json(data)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _unreadable(out, exc) from exc


_JSON_KINDS = {
    type(None): "null",
    list: "a JSON array",
    str: "a JSON string",
    int: "a JSON number",
    float: "a JSON number",
    bool: "a JSON boolean",
}


def _load_graph_files(out: Path, graph: dict[str, Any]) -> None:
    if type(graph.get("index")) is not int:  # it names a folder: never a path of the file's choosing
        raise ValueError(f"graph index {graph.get('index')!r} is not an integer")
    folder = out / f"graph_{graph['index']}"
    graph["stages"] = {
        name: stage_to_json(stage_from_json(json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))))
        for name in graph["stages"]
        if _plain_name(name)
    }
    ir_file = folder / "ascend_ir.json"
    graph["ir"] = json.loads(ir_file.read_text(encoding="utf-8")) if graph.pop("has_ascend_ir", False) and ir_file.exists() else None


def _plain_name(name: Any) -> bool:
    if isinstance(name, str) and name.isidentifier():
        return True
    raise ValueError(f"stage name {name!r} is not a stage")


def _unreadable(out: Path, exc: BaseException) -> OutputError:
    return OutputError(
        f"{out} is not a readable saved trace ({type(exc).__name__}: {exc}). Write it again with `fxlab trace MODEL.py --out {out}`."
    )
