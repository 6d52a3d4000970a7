"""The rooms of fxlab import only downwards (docs/architecture.md, "Who may import whom").

Every ``import`` of an ``fxlab`` module anywhere in the package, at module level or inside
a function, is read from the source; a room may import its own modules and the rooms
below it, never one above. So there is no import circle between rooms.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fxlab"

# Lowest first. A room is a subpackage, or a top-level module of the base.
LAYERS: list[set[str]] = [
    {"errors", "escape", "scope", "npu_streams", "socs", "heap", "stack", "__init__"},
    {"ir"},
    {"passes"},
    {"reports"},
    {"ops"},
    {"capture"},
    {"compat"},
    {"diff"},
    {"viz"},
    {"cli", "__main__"},
]
RANK = {room: rank for rank, rooms in enumerate(LAYERS) for room in rooms}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] if node.module != "fxlab" else [f"fxlab.{a.name}" for a in node.names]
            found += [(node.lineno, n) for n in names if n.startswith("fxlab")]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("fxlab")]
    return found


def _upward_imports() -> list[str]:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = _module_name(path)
        if importer == "fxlab":  # the lazy public API re-exports from any room
            continue
        rank = RANK[_room(importer)]
        for line, imported in _imports(path):
            room = _room(imported)
            if imported == "fxlab.__version__":
                continue
            if RANK.get(room, -1) > rank:
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({_room(importer)}) imports {imported} ({room})")
    return bad


def test_every_room_is_placed_in_a_layer():
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    rooms |= {p.stem for p in PACKAGE.glob("*.py")}
    assert rooms <= set(RANK), f"place these rooms in LAYERS and docs/architecture.md: {sorted(rooms - set(RANK))}"


def test_no_room_imports_one_above_it():
    assert _upward_imports() == []


@pytest.mark.parametrize("rank", range(1, len(LAYERS)))
def test_the_check_sees_an_upward_import(tmp_path, rank):
    """The walk itself: an import of a higher room is found."""
    lower = sorted(LAYERS[rank - 1])[0]
    higher = sorted(LAYERS[rank])[0]
    assert RANK[_room(f"fxlab.{higher}.x")] > RANK[_room(f"fxlab.{lower}.y")]
    probe = tmp_path / "probe.py"
    probe.write_text(f"def f():\n    from fxlab.{higher}.x import y\n")
    assert _imports(probe) == [(2, f"fxlab.{higher}.x")]
