from __future__ import annotations

import json

import pytest

from fxlab.capture.save import MANIFEST, load_trace, prepare_out_dir, save_trace, write_failed_manifest
from fxlab.errors import OutputError


def test_saved_layout_and_reload(example_trace, tmp_path):
    trace = example_trace("inplace_ops")
    out = prepare_out_dir(tmp_path / "t")
    save_trace(trace, out)
    names = sorted(p.name for p in (out / "graph_0").iterdir())
    for stage in ("dynamo", "aten", "functional", "reinplaced"):
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


def test_stale_manifest_removed_and_failed_manifest_never_claims_success(tmp_path):
    out = tmp_path / "t"
    out.mkdir()
    (out / MANIFEST).write_text('{"status": "ok"}')
    prepare_out_dir(out)
    assert not (out / MANIFEST).exists()
    write_failed_manifest(out, "m.py", "boom")
    assert json.loads((out / MANIFEST).read_text())["status"] == "failed"
    with pytest.raises(OutputError, match="failed run: boom"):
        load_trace(out)


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
