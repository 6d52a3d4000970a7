"""The folder of a program run (``fxlab run --out DIR``, ``FXLAB_TRACE=DIR``): each trace
written as soon as it is made, the manifest when the program ends.

::

    DIR/manifest.json     the run: the command, its exit code, fxlab's notes, a row per
                          trace (what was compiled, where, backend, mode, status, recompile
                          reasons), the processes of the program that traced too
    DIR/trace_<k>/        one compile (or recompile), saved as `fxlab trace --out` saves a trace
    DIR/rank_<r>/         a rank of a multi-process program (torchrun, mp.spawn): a run folder
    DIR/process_<n>/      another process of the program that compiled with TorchAir's backends
    DIR/npu_dumps/        on an NPU machine: TorchAir's graph dumps and GE's phase dumps

The folder is built beside ``DIR`` and moved into place when the run ends
(:class:`~fxlab.cli.files.StagedTrace`): the root process (``fxlab run`` itself, or the
first process that met ``FXLAB_TRACE``) stages it, the program's other processes write
their own folders inside the staged one (:func:`child_folder`), and the root publishes
the whole.
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import shutil
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fxlab.cli.files import save_trace, write_atomic
from fxlab.saved_layout import MANIFEST
from fxlab.version import __version__

if TYPE_CHECKING:
    from fxlab.capture.program import ProgramTrace

NPU_DUMPS = "npu_dumps"
CHILD_PREFIXES = ("rank_", "process_")
_COUNTER = ".processes"  # how many process_<n> folders the run has handed out
_OWNER = ".staged-by"  # the root that staged the folder: "host pid"


class RunFolder:
    """One process's run folder as it is written (see the module docstring)."""

    def __init__(self, folder: Path, program: str, command: Sequence[str]) -> None:
        self.folder, self.program, self.command = Path(folder), program, list(command)
        self.traces: list[dict[str, Any]] = []  # a row per trace saved
        self.notes: list[str] = []
        self.exit_codes: dict[int, int] = {}  # process id -> exit code, of the processes this one saw end (its own children)

    def add(self, built: ProgramTrace) -> None:
        """Save a trace the moment it is made; only its row is kept after."""
        if built.capture is not None:
            save_trace(built.capture.trace, self.folder / built.folder)
        self.traces.append(built.row())

    def note(self, message: str) -> None:
        if message not in self.notes:
            self.notes.append(message)

    def rows(self) -> list[dict[str, Any]]:
        """This process's traces, then those of the processes it started, in order."""
        return self.traces + [row for child in self.children() for row in child["rows"]]

    def children(self) -> list[dict[str, Any]]:
        """The run folders the program's other processes wrote inside this one."""
        found = []
        for path in sorted(self.folder.glob("*/" + MANIFEST), key=lambda p: _child_order(p.parent.name)):
            name = path.parent.name
            if not name.startswith(CHILD_PREFIXES):
                continue
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            rows = [{**row, "folder": f"{name}/{row.get('folder')}"} for row in data.get("traces", []) if isinstance(row, dict)]
            found.append(
                {
                    "folder": name,
                    "exit_code": self.exit_codes.get(data.get("pid"), data.get("exit_code")),
                    "status": data.get("status"),
                    "rows": rows,
                    "notes": data.get("notes", []),
                }
            )
        return found

    def manifest(self, exit_code: int | None, status: str) -> dict[str, Any]:
        import torch  # lazy: fxlab-run.pth loads this module (through run_hook) in every process of a run

        children = self.children()
        return {
            "program": self.program,
            "command": self.command,
            "fxlab_version": __version__,
            "torch_version": torch.__version__,
            "exit_code": exit_code,
            "pid": os.getpid(),
            "status": status,
            "notes": self.notes,
            "traces": self.traces,
            "processes": [{k: child[k] for k in ("folder", "exit_code", "status")} for child in children],
        }

    def write_manifest(self, exit_code: int | None, status: str) -> None:
        from fxlab.capture.serialize import json_text  # lazy: imports torch; fxlab-run.pth loads this module through run_hook

        self.folder.mkdir(parents=True, exist_ok=True)
        write_atomic(self.folder / MANIFEST, json_text(self.manifest(exit_code, status)))


def _child_order(name: str) -> tuple[str, int]:
    prefix, _, number = name.rpartition("_")
    return prefix, int(number) if number.isdigit() else -1


def child_folder(root: Path, rank: int | None) -> Path:
    """The folder a process of the program writes its run into, inside the root's staged
    folder: ``rank_<r>`` for a rank, else the next ``process_<n>`` (counted under a lock,
    in the order the processes ask)."""
    if rank is not None:
        return root / f"rank_{rank}"
    fd = os.open(root / _COUNTER, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        number = int(os.read(fd, 32).decode() or 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, str(number + 1).encode())
    finally:
        os.close(fd)
    return root / f"process_{number}"


def forget_bookkeeping(root: Path) -> None:
    """The counter and the owner's mark are the run's bookkeeping, not part of what it saved."""
    (root / _COUNTER).unlink(missing_ok=True)
    (root / _OWNER).unlink(missing_ok=True)


def mark_staged(staged: Path) -> None:
    """Say which process staged the folder: a run whose root ended without moving it into
    place (killed, crashed: no exit handler ran) leaves it, and the next run removes it."""
    (staged / _OWNER).write_text(f"{socket.gethostname()} {os.getpid()}", encoding="utf-8")


def remove_stale_staged(staged: Path) -> list[str]:
    """Remove the folders beside ``staged`` that earlier runs of the same ``DIR`` staged
    and left, their root gone; the names removed. A folder another tool staged (no mark),
    or a run on another host or still running stages, is left alone."""
    prefix = staged.name.rpartition(".fxlab-")[0] + ".fxlab-"
    removed = []
    for other in sorted(staged.parent.glob(glob.escape(prefix) + "*")):
        if other != staged and _root_is_gone(other):
            shutil.rmtree(other, ignore_errors=True)
            removed.append(other.name)
    return removed


def _root_is_gone(staged: Path) -> bool:
    try:
        host, _, pid = (staged / _OWNER).read_text(encoding="utf-8").partition(" ")
    except (OSError, ValueError):
        return False
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: alive
        return False
    return False
