"""Writing a trace's pictures and its HTML report: DOT files always, pictures drawn with
graphviz after saving, a failing or slow dot leaving no picture behind and the stage drawn
again more folded."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fxlab.cli import graphviz
from fxlab.cli.picture_files import write_html_report, write_pictures
from fxlab.errors import UsageError
from fxlab.viz.html_report import html_report
from fxlab.viz.pictures import FALLBACK_CAP, stage_picture
from tests.viz.test_pictures import small_trace


def _fake_dot(tmp_path: Path, body: str) -> str:
    """A stand-in for graphviz's dot: ``-T<fmt> -o OUT IN``; ``body`` decides. Each is a
    new file, written before any picture is drawn: pictures are drawn in threads, and a
    script written while another thread forks to run dot can fail with "text file busy"."""
    script = tmp_path / f"fake-dot-{len(list(tmp_path.glob('fake-dot-*')))}"
    script.write_text("#!/bin/sh\nout=$3\nin=$4\n" + body)
    script.chmod(0o755)
    return str(script)


def test_without_dot_only_dot_files_are_written_with_install_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graphviz, "dot_binary", lambda: None)
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
    monkeypatch.setattr(graphviz, "dot_binary", lambda: fake)
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
    monkeypatch.setattr(graphviz, "dot_binary", lambda script=_fake_dot(tmp_path, 'echo partial > "$out"; exit 3\n'): script)
    (tmp_path / "graph_0").mkdir()
    (tmp_path / "graph_0" / "ascend_ir.svg").write_text("old picture")
    files, messages = write_pictures(small_trace(), tmp_path, "svg")
    assert [p.suffix for p in files] == [".dot", ".dot"] and len(messages) == 2
    assert all("exit code 3" in m and "The more folded picture failed too" in m for m in messages)
    assert sorted(p.name for p in (tmp_path / "graph_0").iterdir()) == ["ascend_ir.dot", "functional.dot"]
    monkeypatch.setattr(graphviz, "dot_binary", lambda script=_fake_dot(tmp_path, 'echo partial > "$out"; sleep 5\n'): script)
    monkeypatch.setattr(graphviz, "DOT_TIMEOUT_SECONDS", 0.3)
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


def test_the_html_report_is_written_where_asked(tmp_path: Path) -> None:
    path = write_html_report(small_trace(), tmp_path / "sub" / "report.html")
    assert path == tmp_path / "sub" / "report.html"
    assert path.read_text(encoding="utf-8") == html_report(small_trace())
