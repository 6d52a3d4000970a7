"""The HTML report: one self-contained file with every stage's code, the IR per FX node,
checks, scopes and (with graphviz) inline pictures."""
from __future__ import annotations

import html
import json
import re


from fxlab.capture.serialize import load_trace
from fxlab.capture.trace import ConversionRecord, GraphTrace, Trace
from fxlab.cli.files import save_trace
from fxlab.viz.html_report import HERE
from fxlab.viz.html_report import html_report
from fxlab.viz.trace_views import relative_paths
from tests.viz.test_dot import small_ir, small_stage  # the same small graphs as the DOT tests


def _no_network(page: str) -> None:
    """Nothing the browser would fetch: scripts only inline, no stylesheets, images or
    frames, no URLs."""
    assert not re.search(r"<(link|img|iframe)\b", page)
    assert not re.search(r"<script\b[^>]*\bsrc=", page)
    assert not re.search(r"\b(src|href)=\"(?!#)", page)
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", page.replace(_dagre(), ""))


def _dagre() -> str:
    return (HERE / "vendor" / "dagre.min.js").read_text()


def viewer_json(page: str) -> dict:
    start = page.index('<script type="application/json" id="fxlab-data">') + len('<script type="application/json" id="fxlab-data">')
    return json.loads(page[start : page.index("</script>", start)])


def test_my_inplace_report_has_every_stage_and_ir_op(example_trace, tmp_path) -> None:
    trace = example_trace("my_inplace")
    page = html_report(trace)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    _no_network(page)
    graph = trace.graphs[0]
    assert list(graph.stages) == ["dynamo", "aten", "functional", "pre_ge"] and graph.ir is not None
    for stage in graph.stages.values():
        assert f'id="graph-0-{stage.name}"' in page
        for line in relative_paths(stage.code.rstrip()).split("\n"):
            assert html.escape(line) in page, (stage.name, line)
    for op in graph.ir.ops:
        assert re.search(rf"(>|, |:){re.escape(op.name)}(<|,)", page), op.name
    assert {"TensorMove", "MyInplace"} <= set(graph.ir.types)
    # the functional stage's copy_ epilogues and auto_functionalized nodes are highlighted
    functional = page[page.index('id="graph-0-functional"') : page.index('id="graph-0-pre_ge"')]
    assert functional.count("background:#f9d0f3") == 2 and functional.count("background:#c9f1f7") == 3
    assert "eager vs compiled: <span class=\"ok\">match" in page
    assert "arg2_1 (state)" in page
    # the viewer: every stage's nodes, their groups, and the links between stages
    data = viewer_json(page)
    (graph_data,) = data["graphs"]
    assert [s["name"] for s in graph_data["stages"]] == ["dynamo", "aten", "functional", "pre_ge", "ascend_ir"]
    for stage_data in graph_data["stages"]:
        names = [n[0] for n in stage_data["nodes"]]
        expected = [op.name for op in graph.ir.ops] if stage_data["name"] == "ascend_ir" else [n.name for n in graph.stages[stage_data["name"]].nodes]
        assert names == expected and len(stage_data["inputs"]) == len(names)
    my_inplace = graph.ir.ops_of_type("MyInplace")[0]
    assert ["pre_ge", my_inplace.fx_node, "ascend_ir", my_inplace.name] in graph_data["links"]
    assert any(key.startswith("functional/") and "auto_functionalized" in " ".join(words) for key, words in graph_data["diff"].items())
    assert _dagre() in page and "fxlab graph viewer" in page
    # a trace read back from its saved folder gives the same page
    save_trace(trace, tmp_path)
    assert html_report(load_trace(tmp_path)) == html_report(trace)


def test_viewer_data_survives_script_breaking_text() -> None:
    stage = small_stage()
    stage.nodes[3].provenance.code = "x = '</script><script>alert(1)</script>' \u2028 <!--"
    trace = Trace(model="m.py", entry="model", fxlab_version="0", torch_version="0", stages=["functional"],
                  graphs=[GraphTrace(index=0, stages={"functional": stage})])
    page = html_report(trace)
    assert "<script>alert(1)" not in page and "<!--" not in page
    data = viewer_json(page)
    assert data["graphs"][0]["stages"][0]["nodes"][3][6] == "x = '</script><script>alert(1)</script>' \\u2028 <!--"  # shown, not a line break


def test_scopes_unsupported_ops_and_escaping() -> None:
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


def test_bidi_controls_in_names_are_shown_escaped() -> None:
    stage = small_stage()
    stage.code = 'def forward(self, x):\n    y = x  # admin\u202e \u2066// check later\u2069\n    return y'
    trace = Trace(model="m\u202egnp.py", entry="model", fxlab_version="0", torch_version="0", stages=["functional"],
                  graphs=[GraphTrace(index=0, stages={"functional": stage})])
    page = html_report(trace)
    assert "\u202e" not in page and "\u2066" not in page
    assert "admin\\u202e \\u2066// check later\\u2069" in page and "m\\u202egnp.py" in page


def test_outputs_made_on_the_host_are_listed_escaped() -> None:
    note = "output 0 (<t>): a view of graph input 0, not a GE output; re-made on the host after the run as torch.as_strided(input 0, [3], [1], 0)"
    conversion = ConversionRecord(ops=len(small_ir().ops), partial=True, host_outputs=[note])
    graph = GraphTrace(index=0, stages={"functional": small_stage()}, conversion=conversion, ir=small_ir())
    trace = Trace(model="m.py", entry="model", fxlab_version="0", torch_version="0", stages=["functional", "ascend_ir"], graphs=[graph])
    page = html_report(trace)
    assert "<p>Host output: output 0 (&lt;t&gt;): a view of graph input 0, not a GE output; re-made on the host after the run as torch.as_strided(input 0, [3], [1], 0).</p>" in page
