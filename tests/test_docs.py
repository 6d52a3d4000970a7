"""What the docs show is what the commands print: every ``$ fxlab ...`` block in the README
and ``docs/`` is run again and compared, line by line, with the output it shows.

A block is a fenced code block whose lines starting with ``$ `` are commands, each
followed by the output it shows. A line ``...`` stands for any number of lines the block
leaves out; numbers a CPU computes (a max |diff|) are compared within the checks' fp32
tolerance; trailing spaces do not count. The commands run from a fresh folder holding a
copy of ``examples/``, as a user runs them from a checkout, at the width the block was
printed at (``<!-- docs-test: width=N -->`` before the block; 100 by default). stdout is
compared, and stderr too where the block shows ``note:``, ``warning:`` or ``error:`` lines.

A block runs with an empty cache and no TorchAir path, as a fresh machine has it (so it
shows the same wherever it runs), unless ``<!-- docs-test: needs torchair -->`` before it
says it shows TorchAir's own code at work: then it runs with the TorchAir copy fxlab finds,
and carries the ``torchair`` marker (skipped without one, as the other such tests).

A ```python block after ``<!-- docs-test: python -->`` is run as a script from a fresh
folder and must end without an error.

A block that needs files a test makes first (an NPU machine's dumps) is run by that test:
``<!-- docs-test: run by tests/PATH -->`` before it names the test, which must exist and
run the block's command.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DEFAULT_WIDTH = 100
FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?\d+[eE][-+]?\d+")
MARKER = re.compile(r"<!--\s*docs-test:\s*(.*?)\s*-->")
FENCE = re.compile(r"^```")
ELIDED = "..."
STDERR_PREFIXES = ("note:", "warning:", "error:")


@dataclass
class Command:
    line: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    doc: Path
    line: int
    commands: list[Command]
    width: int = DEFAULT_WIDTH
    run_by: str | None = None
    needs_torchair: bool = False

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    """The blocks of ``doc`` with ``$ fxlab`` commands, with their markers."""
    found: list[Block] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    marker: dict[str, str] = {}
    inside, start, body = False, 0, []
    for number, text in enumerate(lines, start=1):
        if FENCE.match(text):
            if inside:
                block = _block(doc, start, body, marker)
                if block is not None:
                    found.append(block)
                marker = {}
            inside, start, body = not inside, number, []
            continue
        if inside:
            body.append(text)
        elif MARKER.search(text):
            marker.update(_marker(MARKER.search(text).group(1)))  # type: ignore[union-attr]
        elif text.strip():
            marker = {}
    return found


def _marker(text: str) -> dict[str, str]:
    if text.startswith("run by "):
        return {"run_by": text.removeprefix("run by ").strip()}
    if text == "needs torchair":
        return {"needs_torchair": "yes"}
    key, _, value = text.partition("=")
    return {key.strip(): value.strip()}


def _block(doc: Path, start: int, body: list[str], marker: dict[str, str]) -> Block | None:
    commands: list[Command] = []
    for text in body:
        if text.startswith("$ "):
            commands.append(Command(text[2:].strip()))
        elif commands:
            commands[-1].expected.append(text.rstrip())
    if not any(c.line.startswith("fxlab ") for c in commands):
        return None
    width = int(marker.get("width", DEFAULT_WIDTH))
    return Block(doc, start, commands, width, marker.get("run_by"), "needs_torchair" in marker)


ALL_BLOCKS = [block for doc in DOCS for block in blocks(doc)]
RUN_HERE = [
    pytest.param(block, id=block.id, marks=[pytest.mark.torchair] if block.needs_torchair else [])
    for block in ALL_BLOCKS
    if block.run_by is None
]


def matches(expected: list[str], actual: list[str]) -> bool:
    """``actual`` shows ``expected``: line by line, ``...`` standing for any lines."""
    actual = [line.rstrip() for line in actual]
    while actual and not actual[-1]:
        actual.pop()
    expected = list(expected)
    while expected and not expected[-1]:
        expected.pop()
    return _match(expected, 0, actual, 0, {})


def _match(expected: list[str], i: int, actual: list[str], j: int, seen: dict[tuple[int, int], bool]) -> bool:
    key = (i, j)
    if key in seen:
        return seen[key]
    if i == len(expected):
        result = j == len(actual)
    elif expected[i].strip() == ELIDED:
        result = any(_match(expected, i + 1, actual, k, seen) for k in range(j, len(actual) + 1))
    else:
        result = j < len(actual) and same_line(expected[i], actual[j]) and _match(expected, i + 1, actual, j + 1, seen)
    seen[key] = result
    return result


def same_line(expected: str, actual: str) -> bool:
    """Equal, but for floats within the checks' fp32 tolerance."""
    if expected.rstrip() == actual.rstrip():
        return True
    if FLOAT.split(expected.rstrip()) != FLOAT.split(actual.rstrip()):
        return False
    pairs = zip(FLOAT.findall(expected), FLOAT.findall(actual))
    return all(abs(float(a) - float(b)) <= 1e-6 + 1e-5 * abs(float(a)) for a, b in pairs)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh folder with a copy of the examples, as a checkout's root looks to a user."""
    folder = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "examples", folder / "examples")
    return folder


@pytest.fixture(scope="module")
def empty_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder with nothing in it: no TorchAir copy is found."""
    return tmp_path_factory.mktemp("cache")


def run(command: str, home: Path, width: int, cache: Path | None = None) -> tuple[str, str]:
    """stdout and stderr of a command line (``a && b``: each in turn); with ``cache``, the
    cache folder and no TorchAir path."""
    out, err = "", ""
    # The checkout's environment active, as a user runs the docs' commands: its torchrun too.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "FXLAB_WIDTH": str(width), "NO_COLOR": "1", "PYTHONPATH": str(ROOT), "PATH": path}
    env.pop("FXLAB_DEBUG", None)
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
        for name in ("FXLAB_TORCHAIR_PATH", "FXLAB_CACHE_DIR"):
            env.pop(name, None)
    for part in command.split("&&"):
        words = shlex.split(part)
        assert words[0] == "fxlab", f"the docs run only fxlab commands: {part!r}"
        done = subprocess.run([sys.executable, "-m", "fxlab", *words[1:]], cwd=home, env=env, capture_output=True, text=True, timeout=900)
        out, err = out + done.stdout, err + done.stderr
    return out, err


@pytest.mark.parametrize("block", RUN_HERE)
def test_the_docs_show_what_the_command_prints(block: Block, home: Path, empty_cache: Path) -> None:
    for command in block.commands:
        out, err = run(command.line, home, block.width, None if block.needs_torchair else empty_cache)
        shown = out.splitlines()
        if any(line.startswith(STDERR_PREFIXES) for line in command.expected):
            shown += err.splitlines()
        assert matches(command.expected, shown), (
            f"{block.id}: `{command.line}` prints (width {block.width}):\n{out}{err}\nthe docs show:\n" + "\n".join(command.expected)
        )


def python_blocks(doc: Path) -> list[tuple[str, str]]:
    """``(id, source)`` of each ```python block marked ``<!-- docs-test: python -->``."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    found = []
    for number, text in enumerate(lines, start=1):
        if text.strip() == "```python" and number > 1 and MARKER.search(lines[number - 2] or ""):
            if MARKER.search(lines[number - 2]).group(1).strip() == "python":  # type: ignore[union-attr]
                end = lines.index("```", number)
                found.append((f"{doc.relative_to(ROOT)}:{number}", "\n".join(lines[number:end]) + "\n"))
    return found


PYTHON_BLOCKS = [block for doc in DOCS for block in python_blocks(doc)]


@pytest.mark.parametrize("source", [source for _, source in PYTHON_BLOCKS], ids=[name for name, _ in PYTHON_BLOCKS])
def test_the_docs_python_runs(source: str, tmp_path: Path, empty_cache: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(empty_cache)}
    for name in ("FXLAB_TORCHAIR_PATH", "FXLAB_CACHE_DIR", "FXLAB_DEBUG"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", source], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_readme_shows_python_that_runs() -> None:
    assert any(name.startswith("README.md") for name, _ in PYTHON_BLOCKS)


@pytest.mark.parametrize("block", [b for b in ALL_BLOCKS if b.run_by], ids=[b.id for b in ALL_BLOCKS if b.run_by])
def test_a_block_run_elsewhere_names_a_test_that_runs_it(block: Block) -> None:
    test_file = ROOT / block.run_by.split("::")[0] if block.run_by else ROOT
    assert test_file.is_file(), f"{block.id}: {block.run_by} does not exist"
    text = test_file.read_text(encoding="utf-8")
    for command in block.commands:
        words = shlex.split(command.line)[1:3]
        assert all(word in text for word in words), f"{block.id}: {block.run_by} does not run `{command.line}`"


def test_the_comparison_sees_a_changed_line_and_skips_elided_ones() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "c"], ["a", "c"])
    assert not matches(["a", "...", "d"], ["a", "b", "c", "e"])
    assert not matches(["a", "b"], ["a", "b", "c"])
    assert matches(["match (8 tensors, max |diff| 1.19e-07)"], ["match (8 tensors, max |diff| 2.38e-07)"])
    assert not matches(["match (8 tensors, max |diff| 1.19e-07)"], ["match (9 tensors, max |diff| 1.19e-07)"])
    assert not matches(["status: ok"], ["status: partial"])


def test_every_doc_with_commands_is_read() -> None:
    assert ALL_BLOCKS, "no `$ fxlab` block found"
    assert {b.doc.name for b in ALL_BLOCKS} >= {"README.md"}
