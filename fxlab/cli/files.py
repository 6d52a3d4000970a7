"""Every file fxlab writes for the user goes through here: each one under a temporary
name beside its place and renamed into place (a failure never leaves a complete-looking
half file), and a saved trace as a whole folder.

A trace is built in a hidden sibling folder of ``--out`` and moved into place only when
complete (:class:`StagedTrace`), so ``--out`` always holds exactly one whole trace: the
new one, or, when the run fails or is interrupted, the one that was there before, left
as it was. ``DIR/manifest.json`` says ``"status": "failed"`` only for a run that failed
into a folder that held no trace. Files and folders get the modes the umask gives.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from fxlab.errors import OutputError
from fxlab.saved_layout import MANIFEST

if TYPE_CHECKING:
    from fxlab.capture.trace import Trace


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


def write_files(folder: Path, files: Mapping[str, bytes | str]) -> list[Path]:
    """Write ``{relative path: content}`` under ``folder`` (made, with its subfolders)."""
    written = []
    for relative, data in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        written.append(write_atomic(path, data))
    return written


def save_trace(trace: Trace, folder: str | Path) -> list[Path]:
    """Write ``trace``'s saved layout into ``folder`` (:func:`trace_files`); the files."""
    from fxlab.capture.serialize import trace_files  # lazy: imports torch; this module loads when the command line starts

    out = Path(folder)
    try:
        return write_files(out, trace_files(trace))
    except OSError as exc:
        raise OutputError(f"writing the trace to {out} failed: {exc}. Check free space and permissions.") from exc


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


def check_output_file(path: Path, option: str) -> None:
    """Before any work: ``path`` can be written as a file (it is no folder, and its folder
    exists or can be made in a writable one), so a long run never ends on a path that could
    not take its output."""
    if path.is_dir():
        raise OutputError(f"{option} {path} is a folder, not a file. Give a file path, e.g. {path / 'report.html'}.")
    existing = next((parent for parent in path.parents if parent.exists()), Path("."))
    if not existing.is_dir():
        raise OutputError(f"{option} {path}: {existing} is a file, so no folder can be made under it. Give another path.")
    if not os.access(existing, os.W_OK):
        raise OutputError(f"{option} {path}: the folder {existing} is not writable. Choose a path you can write to.")


def _refuse_file(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} is a file, not a directory. Give a directory path (it is created if missing).")
    blocking = next((parent for parent in out.parents if parent.exists() and not parent.is_dir()), None)
    if blocking is not None:
        raise OutputError(f"--out {out}: {blocking} is a file, so no folder can be made under it. Give a directory path.")


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
        self.had_trace = holds_fxlab_manifest(self.out)
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
        from fxlab.capture.serialize import failed_manifest_text  # lazy: imports torch; this module loads when the command line starts

        try:
            self.out.mkdir(parents=True, exist_ok=True)
            write_atomic(self.out / MANIFEST, failed_manifest_text(model, reason))
        except OSError:
            pass  # nothing to keep, and the failure itself is what gets reported
        return "failed"


def holds_fxlab_manifest(folder: Path) -> bool:
    """Whether ``folder`` holds a manifest fxlab wrote (a trace's, a run's, a multi-rank
    trace's, or a failed run's): a folder is replaced whole only then, never because some
    other tool's ``manifest.json`` sits in it."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing, unreadable, not UTF-8 (ValueError) or not JSON
        return False
    if not isinstance(data, dict):
        return False
    return "fxlab_version" in data or (data.get("status") == "failed" and "error" in data and data.get("graphs") == [])


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
