"""Graphviz's dot, run by the command line on the DOT text viz makes: a failing dot is
reported and leaves no picture; with graphviz installed, real SVG and PNG."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fxlab.cli import graphviz
from fxlab.capture.trace import GraphTrace
from fxlab.viz.pictures import stage_picture
from tests.viz.test_dot import small_ir, small_stage


def _picture(stage: str) -> str:
    """The folded picture of the small stage or IR, as a trace's pictures draw it."""
    graph = GraphTrace(0, stages={"functional": small_stage()}, ir=small_ir())
    picture = stage_picture(graph, stage)
    assert picture is not None
    return picture.dot


def test_a_failing_dot_is_reported_and_the_dot_file_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failing = tmp_path / "failing-dot"
    failing.write_text("#!/bin/sh\necho 'syntax error in line 1' >&2\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setattr(graphviz, "dot_binary", lambda: str(failing))
    files, message = graphviz.render(_picture("ascend_ir"), tmp_path / "ir.svg", "svg")
    assert files == [tmp_path / "ir.dot"] and not (tmp_path / "ir.svg").exists()
    assert message is not None and message.startswith(f"dot failed on {tmp_path / 'ir.dot'}")


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz `dot` is not installed")
def test_renders_svg_and_png_with_dot(tmp_path: Path) -> None:
    files, message = graphviz.render(_picture("ascend_ir"), tmp_path / "ir.svg", "svg")
    assert message is None and files == [tmp_path / "ir.dot", tmp_path / "ir.svg"]
    svg = (tmp_path / "ir.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for title in ("<title>Split</title>", "<title>Split&#45;&gt;FxlabUnsupported</title>"):
        assert title in svg
    files, messages = graphviz.render(_picture("functional"), tmp_path / "stage.png", "png")
    assert messages is None and (tmp_path / "stage.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
