"""docs/custom-ops.md's examples, run exactly as written.

The files the page shows (each under a "`examples/custom_op/<file>`" label) are taken
from the markdown and written to an empty folder, then the page's `$ fxlab ...` commands
run there in a fresh process, from that folder: not the plugin's own folder, so a
prototype looked up from the working folder instead of beside the plugin fails. Each
command must exit 0 and print the lines the page shows, in order (`...` stands for lines
left out). The page's files are also the ones shipped in examples/custom_op/.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOC = ROOT / "docs" / "custom-ops.md"
_LABELLED = re.compile(r"^`(examples/custom_op/[\w.]+)`[^\n]*\n\n```\w*\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_COMMAND_BLOCK = re.compile(r"^```\n(\$ fxlab .*?)^```$", re.MULTILINE | re.DOTALL)


def doc_files() -> dict[str, str]:
    return {path: text for path, text in _LABELLED.findall(DOC.read_text(encoding="utf-8"))}


def doc_commands() -> list[tuple[str, list[str]]]:
    """Each ``$ fxlab`` command of the page's custom-op examples, with the lines it shows."""
    commands: list[tuple[str, list[str]]] = []
    for block in _COMMAND_BLOCK.findall(DOC.read_text(encoding="utf-8")):
        for line in block.splitlines():
            if line.startswith("$ fxlab "):
                commands.append((line[2:], []))
            elif commands:
                commands[-1][1].append(line)
    return [(command, shown) for command, shown in commands if "examples/custom_op/" in command]


def test_the_pages_files_are_the_shipped_example() -> None:
    files = doc_files()
    assert sorted(files) == sorted(f"examples/custom_op/{p.name}" for p in (ROOT / "examples" / "custom_op").iterdir())
    for path, text in files.items():
        assert (ROOT / path).read_text(encoding="utf-8") == text, path


def _run_fxlab(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FXLAB_WIDTH": "400", "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "fxlab", *command.split()[1:]]
    return subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=600)


def _shows_in_order(shown: list[str], printed: str) -> str | None:
    """The first shown line not printed after the ones before it (None: all are)."""
    lines = [" ".join(line.split()) for line in printed.splitlines()]
    at = 0
    for wanted in (" ".join(line.split()) for line in shown):
        if wanted == "...":
            continue
        while at < len(lines) and lines[at] != wanted:
            at += 1
        if at == len(lines):
            return wanted
        at += 1
    return None


@pytest.fixture(scope="module")
def doc_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("custom_ops_doc")
    for path, text in doc_files().items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("command, shown", doc_commands(), ids=[c for c, _ in doc_commands()])
def test_the_pages_commands_run_as_written(doc_folder: Path, command: str, shown: list[str]) -> None:
    done = _run_fxlab(command, doc_folder)
    assert done.returncode == 0, done.stderr
    assert _shows_in_order(shown, done.stdout) is None, f"not printed: {_shows_in_order(shown, done.stdout)!r}\n{done.stdout}"


def test_the_page_lists_three_commands() -> None:
    assert [command.split()[1] for command, _ in doc_commands()] == ["ops", "trace", "trace"]


def test_without_its_reference_kernel_the_check_says_which_ge_type_lacks_one(doc_folder: Path) -> None:
    plugin = doc_folder / "examples" / "custom_op" / "scale_add_plugin.py"
    bare = plugin.with_name("scale_add_bare_plugin.py")
    bare.write_text(plugin.read_text(encoding="utf-8").split('@reference_kernel("ScaleBy")')[0], encoding="utf-8")
    done = _run_fxlab(f"fxlab trace examples/custom_op/scale_add_model.py --plugin {bare.relative_to(doc_folder)} --summary", doc_folder)
    printed = " ".join(done.stdout.split())
    assert "Ascend IR on CPU vs compiled: not run: graph 0: no reference kernel for GE op type ScaleBy (op ScaleBy, from FX node scale_add)" in printed
    assert done.returncode == 0 and printed.endswith("status: unverified")
