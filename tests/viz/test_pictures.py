"""A trace's pictures: folded DOT per stage (written and drawn by the command line,
tests/cli/test_picture_files.py)."""
from __future__ import annotations

import re

import pytest

from fxlab.capture.trace import GraphTrace, Trace
from fxlab.errors import UsageError
from fxlab.viz.dot import fx_node_line, fx_node_views, ir_op_line
from fxlab.viz.fold import FoldOptions
from fxlab.viz.pictures import repeat_label, stage_picture, trace_pictures
from tests.viz.test_dot import small_ir, small_stage


def small_trace() -> Trace:
    graph = GraphTrace(index=0, stages={"functional": small_stage()}, ir=small_ir())
    return Trace(model="/m/model.py", entry="model", fxlab_version="0", torch_version="0", graphs=[graph], stages=["functional", "ascend_ir"])


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
