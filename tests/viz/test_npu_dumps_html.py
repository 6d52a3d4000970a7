"""``fxlab dumps --html``: GE's phases as viewer stages, beside the trace's or alone, linked
to the Ascend IR ops they came from, and working in a browser."""

from __future__ import annotations

import pytest

from fxlab.capture.serialize import load_trace
from fxlab.npu_dumps.join import join, merge_torchair_graphs, torchair_graph_from_ir
from fxlab.npu_dumps.read import read_dumps
from fxlab.viz.npu_dumps_html import dumps_html, dumps_viewer_data
from tests.npu_dumps.made_dumps import GOLDEN_TRACE, line, made_dumps
from tests.viz.headless import chromium, selftest

PHASES = ["ge:PreRunBegin", "ge:PreRunAfterOptimizeOriginalGraph", "ge:PreRunAfterOptimizeSubgraph", "ge:AfterSkGraph"]


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    return read_dumps([made_dumps(tmp_path_factory.mktemp("ge"))])


def test_phases_join_the_trace_graph_with_links_to_its_ops(dumps):
    trace = load_trace(GOLDEN_TRACE)
    joined = join(dumps, [torchair_graph_from_ir(g.ir, "trace") for g in trace.graphs])
    data = dumps_viewer_data(dumps, trace, {position: 0 for position in joined})
    graph = data["graphs"][0]
    assert [s["name"] for s in graph["stages"]][-4:] == PHASES
    last = graph["stages"][-1]
    sk = next(n for n in last["nodes"] if n[0] == "sk_norm_start_Mul_3Cast_1_end_Add_3")
    assert (sk[1], sk[3], sk[5], sk[6]) == ("SuperKernel", "fused", f"{line(39)}, {line(40)}", "SuperKernel of Mul_3Cast_1, Add_3")
    links = [link for link in graph["links"] if link[2] == "ge:AfterSkGraph" and link[3] == sk[0]]
    assert [link[1] for link in links] == ["Mul_3", "Cast_1", "Add_3"]


@pytest.mark.skipif(chromium() is None, reason="needs chromium for the viewer's browser test")
def test_a_page_of_ge_phases_alone_works_in_a_browser(dumps, tmp_path):
    join(dumps, merge_torchair_graphs(dumps.torchair))
    page = tmp_path / "dumps.html"
    page.write_text(dumps_html(dumps))
    result = selftest(page)
    assert (result["errors"], result["console_errors"]) == ([], [])
    assert result["stages"] == [PHASES]
    assert result["units"] > 0 and result["revealed_drawn"]
    assert "GE op type" in result["details"]
