"""The HTML report's graph viewer in a real browser (headless Debian chromium): no
console errors, the graph and the module tree render, expanding a folded module and a
box of repeated layers and a search work; a screenshot is kept in test-artifacts/."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from fxlab.capture.serialize import load_trace
from fxlab.cli.picture_files import write_html_report
from tests.sessions import trace_of
from tests.conftest import EXAMPLES, ROOT
from tests.viz.headless import chromium, screenshot, selftest

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.skipif(chromium() is None and not os.environ.get("CI"), reason="chromium is not installed (Debian: apt-get install chromium)")


def _diff_keys(trace) -> list[str]:  # type: ignore[no-untyped-def]
    from fxlab.viz.viewer_data import viewer_data

    return [key for graph in viewer_data(trace)["graphs"][:1] for key in graph["diff"]]


def _check(result: dict, trace, tree_items: int) -> None:  # type: ignore[no-untyped-def]
    assert result["errors"] == [] and result["console_errors"] == []
    assert result["stages"] == [[s for s in trace.stages if s in g.stages or (s == "ascend_ir" and g.ir is not None)] for g in trace.graphs]
    assert result["units"] > 3 and result["tree_items"] >= tree_items
    assert result["search_hits"] >= 1 and result["revealed_drawn"] is True
    assert result["revealed"] in result["details"]


GOLDEN = ROOT / "tests" / "data" / "golden"
# the module tree's items at first: the examples without nn.Modules have none
TREE_ITEMS = {"graph_break": 0, "inplace_ops": 0, "my_inplace": 0, "my_op": 0, "npu_add_custom": 0, "superkernel_scopes": 1, "llama_decoder": 5}


@pytest.mark.parametrize("example", sorted(TREE_ITEMS))
def test_examples_open_in_chromium(tmp_path: Path, example: str) -> None:
    """The saved trace of every example (the golden files)."""
    trace = load_trace(GOLDEN / example)
    report = write_html_report(trace, tmp_path / f"{example}.html")
    result = selftest(report)
    _check(result, trace, TREE_ITEMS[example])
    # the functional stage marks each node functionalization changed (all are drawn at
    # first where there are no modules to fold)
    if TREE_ITEMS[example] == 0:
        changed = sum(1 for key in _diff_keys(trace) if key.startswith("functional/"))
        assert result["changed_marks"] == changed, (result["changed_marks"], changed)
    if example == "llama_decoder":
        # a folded module opens (more boxes) and the box of repeated layers unfolds
        kinds = {e["kind"]: e for e in result["expand"]}
        assert kinds["group"]["after"] > kinds["group"]["before"]
        assert "layers.1 (DecoderLayer)" in kinds["repeat"]["label"]
        png = screenshot(report, ARTIFACTS / "viewer-llama_decoder.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


def test_the_32_layer_decoder_opens_with_its_layers_folded(tmp_path: Path) -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        from llama_decoder import build
    finally:
        sys.path.remove(str(EXAMPLES))
    model, inputs = build(32)
    trace = trace_of(model, inputs, verify=False)
    report = write_html_report(trace, tmp_path / "decoder32.html")
    result = selftest(report)
    _check(result, trace, 5)
    repeat = next(e for e in result["expand"] if e["kind"] == "repeat")
    assert repeat["label"].startswith("layers.1-31 (DecoderLayer)x31")
    assert repeat["after"] == repeat["before"] + 30  # one box became the 31 layers, each folded
    assert result["units"] < 200  # the first view is folded: not 3,000 boxes
    screenshot(report, ARTIFACTS / "viewer-decoder-32-layers.png")
