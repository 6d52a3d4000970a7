from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from fxlab.capture.save import MANIFEST, StagedTrace, load_trace, prepare_out_dir, save_trace, write_failed_manifest
from fxlab.errors import OutputError


def test_saved_layout_and_reload(example_trace, tmp_path):
    trace = example_trace("inplace_ops")
    out = prepare_out_dir(tmp_path / "t")
    save_trace(trace, out)
    names = sorted(p.name for p in (out / "graph_0").iterdir())
    for stage in ("dynamo", "aten", "functional", "pre_ge"):
        assert f"{stage}.py" in names and f"{stage}.json" in names
    assert {"ascend_ir.json", "ascend_ir.pb", "ascend_ir.pbtxt", "ascend_ir.py"} <= set(names)
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["status"] == trace.status and manifest["graphs"][0]["stages"] == sorted(trace.graphs[0].stages)
    assert (out / "graph_0" / "functional.py").read_text() == trace.graphs[0].stages["functional"].code
    back = load_trace(out)
    assert back.graphs[0].stages["aten"].nodes == trace.graphs[0].stages["aten"].nodes
    assert back.graphs[0].ir.types == trace.graphs[0].ir.types


def test_names_are_deterministic(example_trace, tmp_path):
    trace = example_trace("graph_break")
    a, b = prepare_out_dir(tmp_path / "a"), prepare_out_dir(tmp_path / "b")
    save_trace(trace, a)
    save_trace(trace, b)
    files = lambda d: sorted(str(p.relative_to(d)) for p in d.rglob("*"))  # noqa: E731
    assert files(a) == files(b)
    assert (a / "graph_1" / "aten.json").read_bytes() == (b / "graph_1" / "aten.json").read_bytes()


def test_failed_manifest_never_claims_success(tmp_path):
    out = tmp_path / "t"
    out.mkdir()
    write_failed_manifest(out, "m.py", "boom")
    assert json.loads((out / MANIFEST).read_text())["status"] == "failed"
    with pytest.raises(OutputError, match="failed run: boom"):
        load_trace(out)


def _tree(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _old_trace(folder):
    """A saved trace of an earlier run, with a graph and a picture the new run will not have."""
    (folder / "graph_1").mkdir(parents=True)
    (folder / MANIFEST).write_text('{"status": "ok", "graphs": []}')
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


def test_json_files_are_strict(tmp_path):
    import math

    from fxlab.capture.save import write_json

    write_json(tmp_path / "m.json", {"diff": math.nan, "hi": math.inf, "lo": -math.inf, "c": 1 + 2j})

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    data = json.loads((tmp_path / "m.json").read_text(), parse_constant=refuse)
    assert data == {"diff": "NaN", "hi": "Infinity", "lo": "-Infinity", "c": [1.0, 2.0]}


def test_out_pointing_at_a_file(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(OutputError, match="is a file, not a directory"):
        prepare_out_dir(target)


def test_out_not_writable(tmp_path):
    # A directory cannot be created under a file, even by root.
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    with pytest.raises(OutputError, match="not writable"):
        prepare_out_dir(blocker / "sub")


def _generic_json(node) -> str:
    from fxlab.capture.trace import node_to_json

    return json.dumps(node_to_json(node), default=str)


@pytest.mark.parametrize("example", ["inplace_ops", "my_inplace", "graph_break", "llama_decoder"])
def test_node_json_text_is_json_dumps_of_the_node(example_trace, example):
    from fxlab.capture.save import node_json_text

    nodes = [n for g in example_trace(example).graphs for s in g.stages.values() for n in s.nodes]
    assert nodes and all(node_json_text(n) == _generic_json(n) for n in nodes)


class _Name(str):
    pass


def test_node_json_text_of_unusual_field_values_is_json_dumps_too():
    from pathlib import PurePosixPath

    from fxlab.capture.save import node_json_text
    from fxlab.capture.trace import NodeRecord, Provenance, TensorMeta

    odd = [
        NodeRecord(name="n", op="call_function", target="t", args="a"),
        NodeRecord(
            name=_Name("ünï \"q\" \\ \n"),
            op="call_function",
            target="aten.x",
            args="",
            outputs=[TensorMeta(shape=[2, "s0", True, 1.5], dtype="float32", stride=None), TensorMeta(shape=[], dtype=None)],
            provenance=Provenance(file=PurePosixPath("/m.py"), line=True, code="x = 1  # é", module_path=("a", "b"), from_node=[1, "x"], original_aten=3),
            mutates=["self", _Name("out")],
            kind="inplace",
            scopes=[{"index": 0, "enter": "e", "attrs": {"k": "v"}}],
            ge_ops=[None],
        ),
        NodeRecord(name="o", op="output", target="output", args="", outputs=(TensorMeta(shape=(1, 2), dtype="i64", stride=(2, 1)),), provenance=Provenance(line=7)),
    ]
    for node in odd:
        assert node_json_text(node) == _generic_json(node)


def test_a_symlinked_out_folder_is_written_through(example_trace, tmp_path):
    real = tmp_path / "real"
    _old_trace(real)
    (tmp_path / "link").symlink_to(real)
    staged = StagedTrace(tmp_path / "link")
    save_trace(example_trace("inplace_ops"), staged.folder)
    staged.publish()
    assert (tmp_path / "link").is_symlink()
    assert sorted(p.name for p in real.iterdir()) == ["graph_0", MANIFEST]
