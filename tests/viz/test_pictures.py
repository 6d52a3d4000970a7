"""A trace's pictures: folded DOT per stage, drawn after saving, a failing or slow dot
leaving no picture behind and the stage drawn again more folded."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from fxlab.capture.trace import GraphTrace, Trace
from fxlab.errors import UsageError
from fxlab.viz import graphviz_probe
from fxlab.viz.dot import fx_node_line, fx_node_views, ir_op_line
from fxlab.viz.fold import FoldOptions
from fxlab.viz.pictures import FALLBACK_CAP, repeat_label, stage_picture, trace_pictures, write_pictures
from tests.viz.test_dot import small_ir, small_stage


def small_trace() -> Trace:
    graph = GraphTrace(index=0, stages={"functional": small_stage()}, ir=small_ir())
    return Trace(model="/m/model.py", entry="model", fxlab_version="0", torch_version="0", graphs=[graph], stages=["functional", "ascend_ir"])


def _fake_dot(tmp_path: Path, body: str) -> str:
    """A stand-in for graphviz's dot: ``-T<fmt> -o OUT IN``; ``body`` decides. Each is a
    new file, written before any picture is drawn: pictures are drawn in threads, and a
    script written while another thread forks to run dot can fail with "text file busy"."""
    script = tmp_path / f"fake-dot-{len(list(tmp_path.glob('fake-dot-*')))}"
    script.write_text("#!/bin/sh\nout=$3\nin=$4\n" + body)
    script.chmod(0o755)
    return str(script)


def test_a_small_stage_is_drawn_whole_with_its_scope_clusters() -> None:
    picture = stage_picture(small_trace().graphs[0], "functional", "model.py")
    assert picture is not None and picture.total == picture.drawn == 10 and picture.notes == []
    for view in fx_node_views(small_stage()):
        assert fx_node_line(view) in picture.dot
    assert picture.dot.count("subgraph") == 2 and 'label="scope 0\\nSuperKernel s1\\nstream-fusion=1"' in picture.dot
    edges = re.findall(r'^\s*"(\w+)" -> "(\w+)";$', picture.dot, re.M)
    assert sorted(edges) == sorted([("x", "add_"), ("y", "add_"), ("add_", "relu"), ("x", "copy_"), ("relu", "copy_"), ("relu", "output")])
    assert "folded:" not in picture.dot


def test_the_ascend_ir_keeps_superkernel_and_fx_node_clusters() -> None:
    picture = stage_picture(small_trace().graphs[0], "ascend_ir")
    assert picture is not None and picture.total == len(small_ir().ops)
    assert 'subgraph "cluster_/sk:s1"' in picture.dot and 'subgraph "cluster_/sk:s1/fx:mul"' in picture.dot
    assert ir_op_line(small_ir().ops[-1], small_ir().ops[-1].fx_node) in picture.dot
    assert '"Gone" [label="Gone\\n(not in graph)"' in picture.dot and '"Split" -> "FxlabUnsupported" [label="1"];' in picture.dot


def test_the_decoder_folds_its_second_layer_and_keeps_every_stage(example_trace) -> None:
    trace = example_trace("llama_decoder")
    pictures = trace_pictures(trace)
    assert [p.stage for p in pictures] == ["dynamo", "aten", "functional", "pre_ge", "ascend_ir"]
    for picture in pictures:
        assert picture.drawn < picture.total and "x1, each like the one drawn" in picture.dot, picture.stage
        assert 'subgraph "cluster_/m:layers.0 (DecoderLayer)' in picture.dot
    functional = pictures[2].dot
    # layer 1's nodes are inside the box, layer 0's are drawn (its attention may be folded)
    assert '"/repeat:layers.# (DecoderLayer):/m:layers.0 (DecoderLayer)" [label="layers.1 (DecoderLayer)\\nx1' in functional
    assert repeat_label(["layers.1 (L)", "layers.2 (L)", "layers.4 (L)", "layers.6 (L)", "layers.7 (L)"]) == "layers.1-2, 4, 6-7 (L)"
    graph = trace.graphs[0]
    layer1 = [n.name for n in graph.stages["functional"].nodes if n.provenance.module_path[:1] == ["layers.1 (DecoderLayer)"]]
    assert layer1 and not any(re.search(rf'^\s*"{n}" \[', functional, re.M) for n in layer1)


def test_expand_and_focus_open_what_the_user_names(example_trace) -> None:
    trace = example_trace("llama_decoder")
    opened = trace_pictures(trace, FoldOptions(expand=("layers.1",)))
    assert all("x1, each like" not in p.dot and 'subgraph "cluster_/m:layers.1 (DecoderLayer)"' in p.dot for p in opened if p.stage != "ascend_ir")
    focused = stage_picture(trace.graphs[0], "functional", options=FoldOptions(focus="_softmax", depth=1))
    assert focused is not None and 0 < focused.drawn <= 6 and "\"_softmax\" [" in focused.dot
    with pytest.raises(UsageError, match="--expand layers.9: no such module"):
        trace_pictures(trace, FoldOptions(expand=("layers.9",)))
    with pytest.raises(UsageError, match="--focus nosuch: no node"):
        trace_pictures(trace, FoldOptions(focus="nosuch"))


def test_without_dot_only_dot_files_are_written_with_install_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graphviz_probe, "dot_binary", lambda: None)
    files, messages = write_pictures(small_trace(), tmp_path, "svg")
    assert files == [tmp_path / "graph_0" / "functional.dot", tmp_path / "graph_0" / "ascend_ir.dot"]
    assert files[0].read_text() == stage_picture(small_trace().graphs[0], "functional", "model.py").dot  # type: ignore[union-attr]
    (message,) = messages
    assert "apt-get install graphviz" in message and str(files[0]) in message
    with pytest.raises(UsageError, match="unknown picture format 'jpg'"):
        write_pictures(small_trace(), tmp_path, "jpg")


def test_a_failing_dot_leaves_no_picture_and_the_stage_is_drawn_more_folded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example_trace) -> None:
    # fails on any picture of more than 60 boxes: the first try, not the folded retry
    fake = _fake_dot(tmp_path, 'if [ "$(grep -c " \\[label=" "$in")" -gt 60 ]; then echo "trouble in init_rank" >&2; echo partial > "$out"; exit 1; fi\necho "<svg/>" > "$out"\n')
    monkeypatch.setattr(graphviz_probe, "dot_binary", lambda: fake)
    folder = tmp_path / "out"
    (folder / "graph_0").mkdir(parents=True)
    (folder / "graph_0" / "functional.svg").write_text("old picture")
    seen: list[tuple[int, int, str, bool]] = []
    files, messages = write_pictures(example_trace("llama_decoder"), folder, "svg", progress=lambda done, total, path, s, err: seen.append((done, total, path.name, err is not None)))
    assert sorted(x[0] for x in seen) == [1, 2, 3, 4, 5] and {x[1] for x in seen} == {5} and all(x[3] for x in seen)
    assert len(messages) == 5 and all("trouble in init_rank" in m and f"folded to {FALLBACK_CAP} boxes" in m for m in messages)
    assert not list(folder.rglob("*.part"))
    for stage in ("dynamo", "aten", "functional", "pre_ge", "ascend_ir"):
        assert (folder / "graph_0" / f"{stage}.svg").read_text() == "<svg/>\n"
        assert (folder / "graph_0" / f"{stage}.dot").read_text().count(" [label=") <= 60
    assert len(files) == 10


def test_a_dot_that_fails_twice_or_hangs_leaves_no_picture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graphviz_probe, "dot_binary", lambda script=_fake_dot(tmp_path, 'echo partial > "$out"; exit 3\n'): script)
    (tmp_path / "graph_0").mkdir()
    (tmp_path / "graph_0" / "ascend_ir.svg").write_text("old picture")
    files, messages = write_pictures(small_trace(), tmp_path, "svg")
    assert [p.suffix for p in files] == [".dot", ".dot"] and len(messages) == 2
    assert all("exit code 3" in m and "The more folded picture failed too" in m for m in messages)
    assert sorted(p.name for p in (tmp_path / "graph_0").iterdir()) == ["ascend_ir.dot", "functional.dot"]
    monkeypatch.setattr(graphviz_probe, "dot_binary", lambda script=_fake_dot(tmp_path, 'echo partial > "$out"; sleep 5\n'): script)
    monkeypatch.setattr(graphviz_probe, "DOT_TIMEOUT_SECONDS", 0.3)
    files, messages = write_pictures(small_trace(), tmp_path, "svg")
    assert all("took over 0 s" in m and "was stopped; no svg was left" in m for m in messages) and len(messages) == 2
    assert sorted(p.name for p in (tmp_path / "graph_0").iterdir()) == ["ascend_ir.dot", "functional.dot"]


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz `dot` is not installed")
def test_renders_every_stage_with_dot(tmp_path: Path) -> None:
    files, messages = write_pictures(small_trace(), tmp_path, "svg")
    assert messages == []
    assert [p.name for p in files] == ["functional.dot", "ascend_ir.dot", "functional.svg", "ascend_ir.svg"]
    svg = (tmp_path / "graph_0" / "ascend_ir.svg").read_text()
    assert "<title>cluster_/sk:s1</title>" in svg and "<title>Split&#45;&gt;FxlabUnsupported</title>" in svg
