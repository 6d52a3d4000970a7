"""On an NPU machine, a program run also keeps what TorchAir and GE dumped, so that
``fxlab dumps DIR/npu_dumps --trace DIR/trace_0`` reads the run folder as it is.

For each traced process, before the program starts:

- GE's phase dumps are switched on (``DUMP_GE_GRAPH=2``: the graphs without weights;
  ``DUMP_GRAPH_LEVEL=2``: every phase of every graph but the subgraphs) into a folder of
  the process's own (``DUMP_GRAPH_PATH``): each process writes its own, as GE names its
  files without a rank;
- TorchAir's graph dump (``config.debug.graph_dump``) of each backend the program hands
  ``torch.compile`` goes to a folder beside it
  (:func:`fxlab.compat.program_backends.dump_graphs`).

A setting the program's environment already makes is left as it is, and the files that
appear in the folder it names while the program runs are collected too. When the process
ends, every file ``fxlab dumps`` reads (GE's ``ge_proto_*`` / ``ge_onnx_*`` phase dumps,
TorchAir's ``dynamo_*_graph_*`` dumps, ``fusion_result.json``) moves into the process's
run folder under ``npu_dumps/``.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path

from fxlab.npu_dumps.names import dump_name

NPU_DUMPS = "npu_dumps"
GE_SWITCHES = {"DUMP_GE_GRAPH": "2", "DUMP_GRAPH_LEVEL": "2"}
GE_PATH = "DUMP_GRAPH_PATH"
FUSION_RESULT = "fusion_result.json"


class NpuDumps:
    """One process's dumps: the folder they are written into, and the folders the
    program chose itself, collected at the end."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch  # the process's own, inside the run folder being built
        self.chosen: list[Path] = []  # folders the program's own settings name
        self.started = time.time()

    @property
    def torchair_folder(self) -> Path:
        return self.scratch / "torchair"

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The variables to set for GE's dumps: those ``environ`` does not set already."""
        settings = {name: value for name, value in GE_SWITCHES.items() if name not in environ}
        if environ.get(GE_PATH):
            self.chosen.append(Path(environ[GE_PATH]))
        else:
            settings[GE_PATH] = str(self.scratch / "ge")
        return settings

    def collect(self, folder: Path) -> list[Path]:
        """Move the dumps into ``folder/npu_dumps/``: all from fxlab's own folder, those
        written since the program started from the program's own. The files moved."""
        moved = [_place(path, self.scratch, folder / NPU_DUMPS, move=True) for path in _dumps(self.scratch, 0.0)]
        for chosen in self.chosen:
            moved += [_place(path, chosen, folder / NPU_DUMPS / "collected", move=False) for path in _dumps(chosen, self.started)]
        shutil.rmtree(self.scratch, ignore_errors=True)
        return moved


def _dumps(folder: Path, since: float) -> list[Path]:
    """The files ``fxlab dumps`` reads under ``folder``, written at ``since`` or later."""
    if not folder.is_dir():
        return []
    found = [p for p in folder.rglob("*") if p.is_file() and (dump_name(p) is not None or p.name == FUSION_RESULT)]
    return sorted(p for p in found if p.stat().st_mtime >= since)


def _place(path: Path, source: Path, target: Path, move: bool) -> Path:
    destination = target / path.relative_to(source)
    destination.parent.mkdir(parents=True, exist_ok=True)
    if move:
        os.replace(path, destination)
    else:
        shutil.copy2(path, destination)
    return destination
