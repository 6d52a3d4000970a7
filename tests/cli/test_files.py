"""fxlab.cli.files: every file written atomically, and a saved trace moved into place
whole (``StagedTrace``): the old trace is replaced only by a complete new one, never a
user's own files."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from fxlab.capture.serialize import load_trace
from fxlab.cli import files
from fxlab.cli.files import StagedTrace, prepare_out_dir, save_trace, write_atomic, write_files
from fxlab.errors import OutputError
from fxlab.saved_layout import MANIFEST


def test_save_trace_writes_every_file_and_returns_them(example_trace, tmp_path):
    trace = example_trace("inplace_ops")
    written = save_trace(trace, tmp_path / "t")
    assert sorted(written) == sorted(p for p in (tmp_path / "t").rglob("*") if p.is_file())
    assert load_trace(tmp_path / "t") == trace


class _HalfWriter:
    """A file handle that writes half of the data, then fails like a full disk."""

    def __init__(self, handle) -> None:
        self.handle = handle

    def __enter__(self) -> _HalfWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def write(self, data: bytes) -> None:
        self.handle.write(data[: len(data) // 2])
        raise OSError("No space left on device")


def test_a_failing_write_leaves_the_old_files_whole_and_no_half_file(example_trace, tmp_path, monkeypatch):
    trace = example_trace("inplace_ops")
    save_trace(trace, tmp_path)
    before = _tree(tmp_path)
    real_fdopen = files.os.fdopen
    monkeypatch.setattr(files.os, "fdopen", lambda fd, mode: _HalfWriter(real_fdopen(fd, mode)))
    with pytest.raises(OutputError, match="No space left on device"):
        save_trace(example_trace("graph_break"), tmp_path)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(tmp_path / MANIFEST, "{}")
    assert _tree(tmp_path) == before  # old files whole, no temporary file left


def test_write_files_makes_the_subfolders(tmp_path):
    written = write_files(tmp_path, {"graph_0/aten.py": "code", "manifest.json": b"{}"})
    assert written == [tmp_path / "graph_0" / "aten.py", tmp_path / "manifest.json"]
    assert (tmp_path / "graph_0" / "aten.py").read_text() == "code"


def test_a_failed_write_is_said_with_the_folder(example_trace, tmp_path):
    (tmp_path / "blocker").write_text("x")
    with pytest.raises(OutputError, match="writing the trace to .*blocker/t failed: .* Check free space and permissions."):
        save_trace(example_trace("inplace_ops"), tmp_path / "blocker" / "t")


def _tree(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _old_trace(folder):
    """A saved trace of an earlier run, with a graph and a picture the new run will not have."""
    (folder / "graph_1").mkdir(parents=True)
    (folder / MANIFEST).write_text('{"fxlab_version": "0.1.0", "status": "ok", "graphs": []}')
    (folder / "graph_1" / "aten.json").write_text("{}")
    (folder / "graph_1" / "aten.svg").write_text("<svg/>")
    return _tree(folder)


def test_staged_trace_replaces_the_whole_folder(example_trace, tmp_path):
    out = tmp_path / "t"
    _old_trace(out)
    staged = StagedTrace(out)
    assert staged.folder.parent == tmp_path and staged.folder.name.startswith(".t.fxlab-")
    save_trace(example_trace("inplace_ops"), staged.folder)
    assert (out / "graph_1").exists()  # nothing moves before publish
    staged.publish()
    assert sorted(p.name for p in out.iterdir()) == ["graph_0", MANIFEST]
    assert json.loads((out / MANIFEST).read_text())["status"] == "ok"
    assert [p.name for p in tmp_path.iterdir()] == ["t"]  # no staging or old folder left behind


def test_abandoned_run_leaves_the_old_trace_untouched(tmp_path):
    out = tmp_path / "t"
    before = _old_trace(out)
    staged = StagedTrace(out)
    (staged.folder / MANIFEST).write_text("half written")
    assert staged.abandon("m.py", "boom") == "kept"
    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["t"]


def test_abandoned_run_into_a_new_folder_says_it_failed(tmp_path):
    staged = StagedTrace(tmp_path / "new")
    assert staged.abandon("m.py", "interrupted") == "failed"
    assert json.loads((tmp_path / "new" / MANIFEST).read_text())["error"] == "interrupted"


def test_interrupted_between_the_moves_the_old_trace_is_put_back(tmp_path, monkeypatch):
    out = tmp_path / "t"
    before = _old_trace(out)
    staged = StagedTrace(out)
    (staged.folder / MANIFEST).write_text('{"status": "ok"}')
    real_replace = os.replace

    def interrupted(src, dst):
        if Path(src) == staged.folder:
            raise KeyboardInterrupt
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        staged.publish()
    monkeypatch.setattr(os, "replace", real_replace)
    assert staged.abandon("m.py", "interrupted") == "kept"
    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["t"]


def test_another_tools_manifest_does_not_make_a_folder_a_saved_trace(tmp_path):
    (tmp_path / MANIFEST).write_text('{"name": "app"}')
    (tmp_path / "precious.txt").write_text("mine")
    with pytest.raises(OutputError, match=r"already holds files that are not a saved trace \(manifest.json, precious.txt\)"):
        StagedTrace(tmp_path)
    assert (tmp_path / "precious.txt").read_text() == "mine"


@pytest.mark.parametrize(
    "text", ['{"fxlab_version": "0.1.0", "status": "ok", "graphs": []}', '{"model": "m.py", "status": "failed", "error": "boom", "graphs": []}']
)
def test_a_folder_with_fxlabs_manifest_is_replaced(tmp_path, text):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / MANIFEST).write_text(text)
    assert StagedTrace(tmp_path / "t").had_trace


def test_a_folder_of_other_files_is_never_replaced(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match=r"already holds files that are not a saved trace \(notes.txt\)"):
        StagedTrace(tmp_path)


@pytest.mark.parametrize("umask, file_mode, dir_mode", [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700), (0o002, 0o664, 0o775)])
def test_modes_follow_the_umask(example_trace, tmp_path, umask, file_mode, dir_mode):
    old = os.umask(umask)
    try:
        staged = StagedTrace(tmp_path / "t")
        save_trace(example_trace("inplace_ops"), staged.folder)
        staged.publish()
    finally:
        os.umask(old)
    out = tmp_path / "t"
    assert stat.S_IMODE(out.stat().st_mode) == dir_mode
    for path in out.rglob("*"):
        assert stat.S_IMODE(path.stat().st_mode) == (dir_mode if path.is_dir() else file_mode), path


def test_out_pointing_at_a_file(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(OutputError, match="is a file, not a directory"):
        prepare_out_dir(target)


def test_out_under_a_file_names_the_file_in_the_way(tmp_path):
    # A directory cannot be created under a file, even by root.
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    with pytest.raises(OutputError, match=f"{blocker} is a file, so no folder can be made under it"):
        prepare_out_dir(blocker / "sub")
    with pytest.raises(OutputError, match=f"{blocker} is a file, so no folder can be made under it"):
        StagedTrace(blocker / "sub")


def test_out_not_writable(tmp_path, monkeypatch):
    def refused(self, *args, **kwargs):  # root writes anywhere: the refusal a user meets, made here
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "write_text", refused)
    with pytest.raises(OutputError, match=r"--out .*/t is not writable \(Permission denied\)\. Choose a directory you can write to\."):
        prepare_out_dir(tmp_path / "t")


def test_a_symlinked_out_folder_is_written_through(example_trace, tmp_path):
    real = tmp_path / "real"
    _old_trace(real)
    (tmp_path / "link").symlink_to(real)
    staged = StagedTrace(tmp_path / "link")
    save_trace(example_trace("inplace_ops"), staged.folder)
    staged.publish()
    assert (tmp_path / "link").is_symlink()
    assert sorted(p.name for p in real.iterdir()) == ["graph_0", MANIFEST]


def test_an_output_file_is_checked_before_any_work(tmp_path):
    from fxlab.cli.files import check_output_file

    check_output_file(tmp_path / "report.html", "--html")  # a new file in a folder that exists
    with pytest.raises(OutputError, match=r"--html .*report.html is a folder, not a file"):
        (tmp_path / "report.html").mkdir()
        check_output_file(tmp_path / "report.html", "--html")
    check_output_file(tmp_path / "new" / "x.html", "--html")  # its folder is made when it is written
    (tmp_path / "a_file").write_text("")
    with pytest.raises(OutputError, match=r"a_file is a file, so no folder can be made under it"):
        check_output_file(tmp_path / "a_file" / "x.html", "--html")
