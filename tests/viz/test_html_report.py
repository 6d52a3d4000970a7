"""The HTML report: one self-contained file with every stage's code, the IR per FX node,
checks, scopes and (with graphviz) inline pictures."""
from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest

from fxlab.capture.trace import GraphTrace, Trace
from fxlab.viz import graphviz_probe
from fxlab.viz.html_report import html_report, write_html_report
from fxlab.viz.trace_views import relative_paths
from tests.viz.test_dot import small_ir, small_stage  # the same small graphs as the DOT tests


def _no_network(page: str) -> None:
    """Nothing the browser would fetch: no scripts, stylesheets, images or frames by URL."""
    assert not re.search(r"<(script|link|img|iframe)\b", page)
    assert not re.search(r"\b(src|href)=\"(?!#)", page)


@pytest.fixture
def no_dot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graphviz_probe, "dot_binary", lambda: None)


def test_my_inplace_report_has_every_stage_and_ir_op(example_trace, tmp_path: Path, no_dot: None) -> None:
    trace = example_trace("my_inplace")
    path = write_html_report(trace, tmp_path / "sub" / "report.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    _no_network(page)
    graph = trace.graphs[0]
    assert list(graph.stages) == ["dynamo", "aten", "functional", "reinplaced", "pre_ge"] and graph.ir is not None
    for stage in graph.stages.values():
        assert f'id="graph-0-{stage.name}"' in page
        for line in relative_paths(stage.code.rstrip()).split("\n"):
            assert html.escape(line) in page, (stage.name, line)
    for op in graph.ir.ops:
        assert re.search(rf"(>|, |:){re.escape(op.name)}(<|,)", page), op.name
    assert {"TensorMove", "MyInplace"} <= set(graph.ir.types)
    # the functional stage's copy_ epilogues and auto_functionalized nodes are highlighted
    functional = page[page.index('id="graph-0-functional"') : page.index('id="graph-0-reinplaced"')]
    assert functional.count("background:#f9d0f3") == 2 and functional.count("background:#c9f1f7") == 3
    assert "eager vs compiled: <span class=\"ok\">match" in page
    assert "arg2_1 (state)" in page
    assert "apt-get install graphviz" in page and "<svg" not in page
    # a trace read back from its JSON gives the same page
    assert html_report(Trace.from_json(trace.to_json())) == html_report(trace)


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz `dot` is not installed")
def test_pictures_are_inline_svg_when_dot_is_there(example_trace) -> None:
    trace = example_trace("my_inplace")
    page = html_report(trace)
    _no_network(page)
    assert page.count("<svg") == 6 and "<?xml" not in page and "<!DOCTYPE svg" not in page
    assert "<title>cluster_fx_" in page  # the IR picture groups ops by FX node
    assert html_report(trace, pictures=False).count("<svg") == 0


def test_scopes_unsupported_ops_and_escaping(no_dot: None) -> None:
    stage = small_stage()
    stage.code = 'def forward(self, x: "f32[2]", y):\n    add_ = torch.ops.aten.add_.Tensor(x, y)\n    return "<b>"'
    trace = Trace(model="m.py", entry="model", fxlab_version="0", torch_version="0", stages=["functional", "ascend_ir"],
                  graphs=[GraphTrace(index=0, stages={"functional": stage}, ir=small_ir())])
    page = html_report(trace)
    assert "return &quot;&lt;b&gt;&quot;" in page and "<b>" not in page
    add_line = next(line for line in page.split('<span class="line"') if "add_ = torch.ops.aten.add_" in line)
    assert "background:#fff3b0" in add_line and "in-place; [super_kernel_scope=s1]" in add_line
    assert '<span class="unsupported" title="">FxlabUnsupported</span>' in page
    scopes = page[page.index("<h3>scopes (functional stage)</h3>") :]
    assert "<td>SuperKernel s1<br>stream-fusion=1</td><td>2: add_, relu</td>" in scopes
    assert "<td>cores: aicore 8, vectorcore 16</td><td>1: relu</td><td>0</td>" in scopes


def test_bidi_controls_in_names_are_shown_escaped(no_dot: None) -> None:
    stage = small_stage()
    stage.code = 'def forward(self, x):\n    y = x  # admin\u202e \u2066// check later\u2069\n    return y'
    trace = Trace(model="m\u202egnp.py", entry="model", fxlab_version="0", torch_version="0", stages=["functional"],
                  graphs=[GraphTrace(index=0, stages={"functional": stage})])
    page = html_report(trace)
    assert "\u202e" not in page and "\u2066" not in page
    assert "admin\\u202e \\u2066// check later\\u2069" in page and "m\\u202egnp.py" in page
