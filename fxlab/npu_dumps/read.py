"""Read files and folders copied off an NPU machine into one :class:`DumpSet`.

A folder is searched recursively for the files GE and TorchAir name (see
:mod:`fxlab.npu_dumps.names`), ``fusion_result.json`` and OM JSON (a ``.json`` holding a
``graph`` list); other files there (the compiler's kernel JSON, fxlab's own reports) are
counted and skipped. A file given by name must be one of them; a saved fxlab trace given
as dumps is an error that says to pass it with ``--trace``. A file that cannot be read
is an error naming it and its line (exit 2), never a half-read result."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from fxlab.npu_dumps.fusion_result import read_fusion_result
from fxlab.npu_dumps.ge_dump import is_om_model, read_ge_proto, read_om_json
from fxlab.npu_dumps.ge_ops import WrongAttr
from fxlab.npu_dumps.dump_model import GE_ONNX, GE_PROTO, TORCHAIR_PBTXT, TORCHAIR_PY, TORCHAIR_TXT, DumpGraph, DumpSet
from fxlab.npu_dumps.names import SUPER_KERNEL_TYPE, DumpName, dump_name
from fxlab.npu_dumps.onnx_dump import read_ge_onnx
from fxlab.npu_dumps.proto_text import DumpReadError, Progress
from fxlab.npu_dumps.torchair_dumps import read_torchair_pbtxt, read_torchair_py, read_torchair_txt

FUSION_RESULT = "fusion_result"
OM_JSON_KIND = "om_json"
WHAT_IS_READ = (
    "fxlab reads GE's ge_proto_*.txt / ge_onnx_*.pbtxt phase dumps (DUMP_GE_GRAPH), "
    "OM models as JSON (atc --mode=1), TorchAir's graph dumps (dynamo_*.txt|pbtxt|py) and fusion_result.json"
)
# GE's third text format (DUMP_GRAPH_FORMAT=readable), in the style of an FX graph: named
# when found, not read (fxlab reads GE's protobuf text).
GE_READABLE = "ge_readable_"
READABLE_NOT_READ = (
    "GE's readable format (DUMP_GRAPH_FORMAT=readable) is not read; fxlab reads its protobuf text: dump with "
    "DUMP_GRAPH_FORMAT=ge_proto (the default is ge_proto|onnx) and give the ge_proto_*.txt files"
)
HOW_TO_DUMP_GRAPHS = (
    "set DUMP_GE_GRAPH=2 and DUMP_GRAPH_PATH=DIR on the NPU machine, run the model again and copy DIR's ge_proto_*.txt files"
)


def read_dumps(paths: Sequence[Path], progress: Progress | None = None) -> DumpSet:
    """Every dump under ``paths``, read; GE's graphs ordered by graph, format and index."""
    dumps = DumpSet()
    skipped = readable = 0
    fusion_files: list[str] = []
    for path, kind, name, explicit in _files(paths):
        if not path.exists():  # a link in a folder to a file that is not there
            dumps.notes.append(f"{path} is a link to {os.readlink(path)}, which does not exist: not read")
            continue
        if path.name.startswith(GE_READABLE):
            if explicit:
                raise DumpReadError(f"{path} is a ge_readable_*.txt dump: {READABLE_NOT_READ}.")
            readable += 1
            continue
        if kind == OM_JSON_KIND and not explicit:  # read once: an OM model, or skipped
            model = _om_model_in(path)
            if model is not None:
                dumps.graphs += read_om_json(str(path), model, name)
                continue
            kind = None
        if kind is None:
            skipped += 1
            continue
        if kind == FUSION_RESULT:
            fusion_files.append(str(path))
        _read_one(dumps, path, kind, name, progress)
    if skipped:
        dumps.notes.append(f"{skipped} file(s) in the folders given are not dumps fxlab reads and were skipped")
    if readable:
        dumps.notes.append(f"{readable} ge_readable_*.txt file(s) skipped: {READABLE_NOT_READ}")
    _check_found(dumps, paths, fusion_files, readable)
    _check_one_run(dumps.graphs)
    dumps.graphs.sort(key=lambda g: (g.format, g.graph_id if g.graph_id is not None else -1, g.index if g.index is not None else -1))
    dumps.notes += link_super_kernels(dumps.graphs)
    return dumps


def _check_one_run(graphs: Sequence[DumpGraph]) -> None:
    """One graph's phase dumped twice, from two files: the dumps are of two runs (or ranks),
    whose phases cannot be put in one order."""
    seen: dict[tuple[str, str, str], str] = {}
    numbered: dict[tuple[str, int], str] = {}
    for graph in graphs:
        if graph.parent is not None or graph.format not in (GE_PROTO, GE_ONNX):
            continue
        key = (graph.format, graph.key, graph.phase)
        first = seen.setdefault(key, graph.file)
        if first != graph.file:
            raise DumpReadError(
                f"{graph.key}'s phase {graph.phase} is dumped twice, in {first} and in {graph.file}: the dumps are of two runs, "
                "compiles or ranks, and their phases cannot be put in one order. Give the dumps of one run (one rank's folder)."
            )
        # GE numbers each dump of a run once: a second file of one number is a copy
        # ("... (1).txt") or another run's.
        first = numbered.setdefault((graph.format, graph.index), graph.file) if graph.index is not None else graph.file
        if first != graph.file:
            raise DumpReadError(
                f"{first} and {graph.file} are both GE's dump number {graph.index}, which GE writes once in a run: one is a copy "
                "of the other, or the dumps are of two runs or ranks. Remove the copy, or give the dumps of one run (one rank's folder)."
            )


def _check_found(dumps: DumpSet, paths: Sequence[Path], fusion_files: Sequence[str], readable: int = 0) -> None:
    """Says which fusion_result.json files record no pass, and raises when what was read
    has nothing to show, naming what was read (a fusion_result.json without passes is
    read, not missing) and how to dump GE's graphs."""
    counted = {result.file for result in dumps.fusion_results if result.passes}
    empty = [file for file in fusion_files if file not in counted]
    dumps.notes += [f"{file} was read and records no fusion pass" for file in empty]
    if dumps.graphs or dumps.torchair:
        return
    names = ", ".join(str(p) for p in paths)
    if not fusion_files:
        also = f" It holds {readable} ge_readable_*.txt file(s): {READABLE_NOT_READ}." if readable else ""
        raise DumpReadError(f"no dumps found in {names}: {WHAT_IS_READ}.{also}")
    if len(empty) == len(fusion_files):
        raise DumpReadError(
            f"{', '.join(empty)} {'was' if len(empty) == 1 else 'were'} read and record{'s' if len(empty) == 1 else ''} "
            "no fusion pass (GE's FE writes there, when the process exits, how often each graph and UB fusion pass matched: "
            f"this run recorded none), and no GE graph dump was found in {names}: {WHAT_IS_READ}. To see what GE did, "
            f"{HOW_TO_DUMP_GRAPHS}."
        )
    dumps.notes.append(
        f"no GE graph dump in {names}: only fusion_result.json's pass counts are shown; to see the graphs, {HOW_TO_DUMP_GRAPHS}"
    )


def holds_dumps(path: Path) -> bool:
    """Whether ``path`` is a dump GE or TorchAir names so, or a folder holding one (not a
    saved fxlab trace, which is read as one)."""
    if path.is_file():
        return dump_name(path) is not None
    if not path.is_dir() or (path / "manifest.json").is_file():
        return False
    return any(dump_name(p) is not None for p in path.rglob("*") if p.is_file())


def _files(paths: Sequence[Path]) -> list[tuple[Path, str | None, DumpName | None, bool]]:
    """Each file to read: its path, kind, name as GE or TorchAir named it, and whether
    it was given by name (not found in a folder)."""
    found = []
    for path in paths:
        if not path.exists():
            raise DumpReadError(f"{path} does not exist: give files or folders copied off the NPU machine.")
        if (path / "manifest.json").is_file():
            raise DumpReadError(
                f"{path} is a saved fxlab trace, not dumps from an NPU machine: pass it with --trace {path} "
                "beside the dump files or folders (fxlab dumps DUMPS --trace TRACE_DIR)."
            )
        if path.is_dir():
            found += [(p, *_kind(p, explicit=False), False) for p in sorted(path.rglob("*")) if p.is_file() or p.is_symlink()]
        elif path.is_file():
            found.append((path, *_kind(path, explicit=True), True))
        else:  # a pipe or a device: reading it could wait for ever
            raise DumpReadError(f"{path} is not a regular file: give dump files or folders copied off the NPU machine.")
    return _each_once(found)


def _each_once(found: list[tuple[Path, str | None, DumpName | None, bool]]) -> list[tuple[Path, str | None, DumpName | None, bool]]:
    """Each file once, however often it was given (a folder and a file in it, a path twice);
    given by name if it was given so once."""
    by_file: dict[Path, tuple[Path, str | None, DumpName | None, bool]] = {}
    for entry in found:
        key = entry[0].resolve()
        if key not in by_file or entry[3]:
            by_file[key] = entry
    return list(by_file.values())


def _om_model_in(path: Path) -> object | None:
    """A ``.json`` found in a folder, parsed, if it is an OM model (the compiler's kernel
    JSON and fxlab's own reports sit in the same folders and are not): else None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # unreadable, not UTF-8 (ValueError) or not JSON: not an OM model
        return None
    return data if is_om_model(data) else None


def _kind(path: Path, explicit: bool) -> tuple[str | None, DumpName | None]:
    name = dump_name(path)
    if name is not None:
        return name.format, name
    if path.suffix == ".json":
        return (FUSION_RESULT if path.name.startswith(FUSION_RESULT) else OM_JSON_KIND), None
    if not explicit:
        return None, None
    if path.suffix == ".txt":
        return _sniff_txt(path), None
    if path.suffix == ".pbtxt":
        return TORCHAIR_PBTXT if _head(path).lstrip().startswith("node") else GE_ONNX, None
    if path.suffix == ".py":
        return TORCHAIR_PY, None
    raise DumpReadError(
        f"{path}: not a dump fxlab reads (by its name). Give GE's ge_proto_*.txt / ge_onnx_*.pbtxt, an OM JSON (.json), "
        "TorchAir's graph dump (.txt, .pbtxt, .py) or fusion_result.json, or a folder holding them."
    )


def _head(path: Path) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read(4096)


def _sniff_txt(path: Path) -> str:
    """A ``.txt`` named otherwise: GE's ModelDef text starts with a graph (or the model's
    name); TorchAir's GraphDef text with its ops."""
    head = _head(path).lstrip()
    return GE_PROTO if head.startswith(("graph", "name:", "version:")) and "\ngraph {" in "\n" + head else TORCHAIR_TXT


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")  # a byte-order mark an editor or copy put first is no part of the text
    except UnicodeDecodeError as exc:
        raise DumpReadError(
            f"{path}: not UTF-8 text (byte {exc.start}). A binary dump (.pb, .om) is not read: "
            "convert an OM model with `atc --mode=1`, or dump graphs as text (DUMP_GE_GRAPH)."
        ) from exc
    except OSError as exc:
        raise DumpReadError(f"{path}: cannot be read ({exc.strerror or exc}).") from exc


def _read_one(dumps: DumpSet, path: Path, kind: str, name: DumpName | None, progress: Progress | None) -> None:
    try:
        _read_kind(dumps, path, kind, name, progress)
    except WrongAttr as exc:
        raise DumpReadError(f"{path}: {exc}. The file is not as GE wrote it: copy the dump off the NPU machine again.") from exc


def _read_kind(dumps: DumpSet, path: Path, kind: str, name: DumpName | None, progress: Progress | None) -> None:
    label = str(path)
    text = _text(path)
    if kind == GE_PROTO:
        dumps.graphs += read_ge_proto(label, text, name, progress)
    elif kind == GE_ONNX:
        dumps.graphs += read_ge_onnx(label, text, name, progress, dumps.notes)
    elif kind in (TORCHAIR_TXT, TORCHAIR_PBTXT, TORCHAIR_PY):
        graph = {
            TORCHAIR_TXT: lambda: read_torchair_txt(label, text, progress),
            TORCHAIR_PBTXT: lambda: read_torchair_pbtxt(label, text, progress),
            TORCHAIR_PY: lambda: read_torchair_py(label, text),
        }[kind]()
        if name is not None and name.index is not None:  # TorchAir names the graph it dumps graph_<n>
            graph.name = graph.name or f"graph_{name.index}"
        dumps.torchair.append(graph)
    elif kind == FUSION_RESULT:
        dumps.fusion_results += read_fusion_result(label, text)
    else:
        dumps.graphs += read_om_json(label, _json(path, text), name)


def _json(path: Path, text: str) -> object:
    try:
        return json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        where = f"{path}, line {line}" if line else str(path)
        raise DumpReadError(f"{where}: not JSON ({exc}). Convert the OM model again with `atc --mode=1` and copy the whole file.") from exc


def link_super_kernels(graphs: Sequence[DumpGraph]) -> list[str]:
    """Each ``SuperKernel`` op's members: the ops whose ``sk_parent_node_name`` names it
    (in its ``super_kernel_sub_graph<N>`` dump); its originals are theirs. Returns a note
    for the SuperKernel ops whose sub-graph dump is not among the files read."""
    members: dict[str, list[str]] = {}
    originals: dict[str, tuple[list[str], list[str]]] = {}
    for graph in graphs:
        for op in graph.ops:
            if op.super_kernel_parent and op.name not in members.get(op.super_kernel_parent, []):
                members.setdefault(op.super_kernel_parent, []).append(op.name)
                names, types = originals.setdefault(op.super_kernel_parent, ([], []))
                names += op.originals
                types += op.original_types
    for graph in graphs:
        for op in graph.ops:
            if op.type == SUPER_KERNEL_TYPE and op.name in members:
                op.super_kernel_members = members[op.name]
                if op.originals == [op.name]:
                    op.originals, op.original_types = originals[op.name]
    unlisted = sorted({op.name for graph in graphs for op in graph.ops if op.type == SUPER_KERNEL_TYPE and op.name not in members})
    if not unlisted:
        return []
    return [
        f"no super_kernel_sub_graph dump lists the members of {', '.join(unlisted)}: which ops they hold is not known, and "
        "those ops show as removed. Copy every ge_proto_*_super_kernel_sub_graph*.txt off the NPU machine with the other dumps."
    ]
