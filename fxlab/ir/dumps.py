"""The Ascend IR dumps of one graph, named as the saved trace layout names them (README, "Saved traces").

``ascend_ir.json`` (:meth:`IrGraph.to_json`), ``ascend_ir.pb`` (GE ``ModelDef``, binary),
``ascend_ir.pbtxt`` (the same as protobuf text) and ``ascend_ir.py`` (TorchAir-style
``py`` dump). Each file is written under a temporary name and renamed into place, so a
failure never leaves a complete-looking half file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch.fx as fx

from fxlab.errors import FxlabError
from fxlab.ir.dump_py import graph_to_py
from fxlab.ir.ge_proto import GeProtoError, decode_model_def, encode_model_def
from fxlab.ir.json_values import encode_strict
from fxlab.ir.model import IrGraph
from fxlab.ir.pbtxt import graph_to_pbtxt, pbtxt_to_graph

JSON_FILE = "ascend_ir.json"
PB_FILE = "ascend_ir.pb"
PBTXT_FILE = "ascend_ir.pbtxt"
PY_FILE = "ascend_ir.py"


class IrFileError(FxlabError):
    """An Ascend IR file that cannot be read."""


# Strict JSON: no NaN/Infinity, complex as pairs (fxlab/ir/json_values.py, README).
_encode_value = encode_strict


def graph_to_json_text(graph: IrGraph) -> str:
    """``ascend_ir.json``: :meth:`IrGraph.to_json` with one op per line, so the file
    diffs and greps well."""
    head = _encode_value(
        {
            "name": graph.name,
            "inputs": list(graph.inputs),
            "outputs": list(graph.outputs),
            "attrs": {k: v.to_typed_json() for k, v in graph.attrs.items()},
        }
    )[:-1]
    lines = ",\n".join(_encode_value(op.to_json()) for op in graph.ops)
    return f'{head}, "ops": [\n{lines}\n]}}\n' if lines else f'{head}, "ops": []}}\n'


def _umask() -> int:
    """The process umask: from /proc where there is one (reading it through os.umask
    means setting it for a moment, which another thread's new file could catch)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The mode ``open()`` gives a new file (0644 under the usual umask 022)."""
    return 0o666 & ~_umask()


def new_dir_mode() -> int:
    """The mode ``mkdir`` gives a new folder (0755 under the usual umask 022)."""
    return 0o777 & ~_umask()


def write_atomic(path: Path, data: bytes | str) -> Path:
    """Write ``data`` to a temporary file beside ``path``, then rename it to ``path``.
    The file gets the umask's mode, as ``open()`` would give it (mkstemp makes 0600)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, new_file_mode())
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
        raise IrFileError(
            f"{file}: cannot tell the IR format from the suffix {suffix!r}. Pass a .json, .pb or .pbtxt file (fxlab writes ascend_ir.json/.pb/.pbtxt)."
        )
    try:
        if suffix == ".pb":
            return decode_model_def(file.read_bytes())
        text = file.read_text(encoding="utf-8")
        if suffix == ".pbtxt":
            return pbtxt_to_graph(text)
        return IrGraph.from_json(json.loads(text))
    except FileNotFoundError as exc:
        raise IrFileError(
            f"{file} does not exist. Check the path; `fxlab trace MODEL.py --out DIR` writes DIR/graph_<k>/ascend_ir.*."
        ) from exc
    except (GeProtoError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise IrFileError(
            f"{file} is not a readable Ascend IR {suffix} file ({type(exc).__name__}: {exc}). Write it again with fxlab, or check that it holds a GE ModelDef."
        ) from exc
