"""The rooms of fxlab import only downwards, and no module imports itself round a circle
(docs/architecture.md, "The rooms").

Every ``import`` of an ``fxlab`` module anywhere in the package, at module level or inside
a function, is read from the source. A room may import its own modules and the rooms
below it, never one above: so there is no import circle between rooms. Within a room,
the modules' imports form no circle either: an import inside a function is an edge like
any other (hiding an import in a function does not break a circle, it only delays it).
An import names one module (``from fxlab.a import b`` names ``fxlab.a.b`` when that is a
module, else ``fxlab.a``); a package's ``__init__`` that imports its own modules to
register them is an edge from the package to them.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fxlab"

# Lowest first. A room is a subpackage, or a top-level module of the base.
LAYERS: list[set[str]] = [
    {"errors", "escape", "scope", "npu_streams", "npu_kernels", "socs", "heap", "stack", "source_lines", "python_files", "stage_names", "saved_layout", "version", "__init__"},
    {"ir"},
    {"npu_dumps"},
    {"passes"},
    {"reports"},
    {"ops"},
    {"capture"},
    {"compat"},
    {"session"},
    {"distributed"},
    {"diff"},
    {"viz"},
    {"cli", "__main__"},
]
RANK = {room: rank for rank, rooms in enumerate(LAYERS) for room in rooms}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from M import name``: ``M.name``, a module or a name in M (see _imported_module)
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names if node.module.split(".")[0] == "fxlab"]
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
    assert _imports(probe) == [(2, f"fxlab.{higher}.x.y")]


def _modules(package: Path) -> dict[str, Path]:
    return {_module_name(path, package): path for path in sorted(package.rglob("*.py"))}


def _imported_module(name: str, modules: dict[str, Path]) -> str | None:
    """The module an imported name is (``fxlab.a.b.X`` -> ``fxlab.a.b``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _module_imports(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module -> the package's modules it imports (``from M import name`` counts as
    an import of ``M.name`` when that is a module)."""
    modules = _modules(package)
    edges: dict[str, set[str]] = {}
    for importer, path in modules.items():
        found = {_imported_module(name, modules) for _, name in _imports(path)}
        edges[importer] = {m for m in found if m is not None and m != importer}
    return edges


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected groups of two or more modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(edges.get(module, ())):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_itself_round_a_circle():
    edges = _module_imports()
    circles = _circles(edges)
    assert circles == [], "import circles (move the shared piece into a module both import): " + "; ".join(
        " <-> ".join(group) for group in circles
    )


def test_the_check_sees_a_circle_through_an_import_inside_a_function(tmp_path):
    package = tmp_path / "fxlab"
    (package / "room").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "room" / "__init__.py").write_text("from fxlab.room import a  # registers\n")
    (package / "room" / "a.py").write_text("from fxlab.room.b import helper\n")
    (package / "room" / "b.py").write_text("def helper():\n    from fxlab.room import a\n")
    (package / "room" / "c.py").write_text("from fxlab.room.b import helper\n")
    edges = _module_imports(package)
    assert edges["fxlab.room"] == {"fxlab.room.a"}  # a package importing its modules: no circle with them
    assert edges["fxlab.room.b"] == {"fxlab.room.a"}
    assert _circles(edges) == [["fxlab.room.a", "fxlab.room.b"]]


# -- names, files and the map ---------------------------------------------------------------
DOC = PACKAGE.parent / "docs" / "architecture.md"
# Stand-ins keep the names of the modules they stand in for (torchair's, torch_npu's).
STANDINS = PACKAGE / "compat" / "standins"


def _room_names(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module's name inside its room (``kernels.npu_moe`` in ``ir``) -> the rooms
    that have a module of that name; a room's own name counts as a name in the base."""
    names: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        if STANDINS in path.parents:
            continue
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if len(parts) == 1 and (package / parts[0]).is_dir():
            names.setdefault(parts[0], set()).add("base")  # a room
        elif parts:
            room = parts[0] if len(parts) > 1 else "base"
            names.setdefault(".".join(parts[1:]) or parts[0], set()).add(room)
    return names


def test_no_two_modules_of_one_name_live_in_different_rooms() -> None:
    shared = {name: sorted(rooms) for name, rooms in _room_names().items() if len(rooms) > 1}
    assert shared == {}, f"modules of one name in different rooms (rename one to say what it is): {shared}"


# Where fxlab writes files: the command line (through cli/files.py), fxlab's own cache of
# TorchAir's sources, and the rank processes' progress records in the launcher's temporary folder.
WRITERS_OUTSIDE_CLI = {"compat/torchair_fetch.py", "distributed/launch.py"}
WRITE_CALLS = ("write_text(", "write_bytes(", ".mkdir(", "mkdtemp(", "os.replace(", "shutil.move(", "shutil.copy", ".extract(", "rmtree(")


def _writes(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = [call for call in WRITE_CALLS if call in text]
    found += [f"open(..., {mode!r})" for mode in ("w", "wb", "a") if f'"{mode}"' in text and "open(" in text]
    return found


def test_only_the_command_line_writes_files() -> None:
    writers = {str(p.relative_to(PACKAGE)): _writes(p) for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts[:1]}
    writers = {path: calls for path, calls in writers.items() if calls and path not in WRITERS_OUTSIDE_CLI}
    assert writers == {}, f"only fxlab/cli writes files (renderers return data): {writers}"


_MODULE_MENTION = re.compile(r"`((?:fxlab/)?[a-z_]+/[a-z_/]+?)(?:\.py)?`")


def test_every_module_the_map_names_exists() -> None:
    """docs/architecture.md names modules as `room/module` (or `fxlab/room/module.py`): each
    is a module or package of fxlab."""
    missing = []
    for mention in sorted(set(_MODULE_MENTION.findall(DOC.read_text(encoding="utf-8")))):
        relative = mention.removeprefix("fxlab/")
        if relative.split("/")[0] in ("tests", "docs", "examples", "bench", "scripts"):
            if not (PACKAGE.parent / relative).exists() and not (PACKAGE.parent / f"{relative}.py").exists():
                missing.append(mention)
            continue
        if not any((PACKAGE / f"{relative}{suffix}").exists() for suffix in (".py", "", ".js", ".proto", ".pth")):
            missing.append(mention)
    assert missing == [], f"docs/architecture.md names modules that do not exist: {missing}"


def test_every_room_is_in_the_map() -> None:
    text = DOC.read_text(encoding="utf-8")
    rooms = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert [room for room in rooms if f"`{room}`" not in text] == []


# -- imports inside functions ---------------------------------------------------------------
# An import sits at the top of its module unless a comment on its line, or on the comment
# lines just above the block of consecutive imports it belongs to, says why it cannot:
# importing it at the top would make an import circle (``cycle``), it is an optional
# dependency probed where it is used (``optional``), it is heavy and deferred so that a
# caller that does not need it does not pay for it (``lazy``), or it is imported for the
# registration it makes at that moment (``registers``).
IMPORT_REASONS = re.compile(r"\b(cycle|optional|lazy|registers)\b", re.IGNORECASE)


def _comments(source: str) -> dict[int, str]:
    """Line number -> the comment on that line."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {token.start[0]: token.string for token in tokens if token.type == tokenize.COMMENT}


def _statement_lists(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every list of statements inside a function (its body, a branch's, a handler's)."""
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                for field in ("body", "orelse", "finalbody"):
                    statements = getattr(node, field, None)
                    if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                        yield statements


def _import_blocks(statements: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """Runs of consecutive import statements."""
    block: list[ast.stmt] = []
    for statement in [*statements, None]:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            block.append(statement)
            continue
        if block:
            yield block
        block = []


def _comment_above(line: int, lines: list[str], comments: dict[int, str]) -> str:
    """The comment lines directly above ``line``, joined."""
    above = []
    while line > 1 and lines[line - 2].strip().startswith("#"):
        line -= 1
        above.append(comments.get(line, ""))
    return " ".join(above)


def _unexplained_imports(path: Path) -> list[int]:
    """The lines of the imports inside functions that give no reason."""
    source = path.read_text(encoding="utf-8")
    lines, comments = source.splitlines(), _comments(source)
    found = set()
    for statements in _statement_lists(ast.parse(source)):
        for block in _import_blocks(statements):
            block_reason = _comment_above(block[0].lineno, lines, comments)
            for statement in block:
                own = " ".join(comments.get(line, "") for line in range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
                if not IMPORT_REASONS.search(f"{block_reason} {own}"):
                    found.add(statement.lineno)
    return sorted(found)


def test_every_import_inside_a_function_says_why() -> None:
    unexplained = [
        f"{path.relative_to(PACKAGE.parent)}:{line}" for path in sorted(PACKAGE.rglob("*.py")) for line in _unexplained_imports(path)
    ]
    assert unexplained == [], (
        "imports inside functions with no reason: move each to the top of its module, or say in a comment "
        "on its line (or above its block) why it stays (cycle, optional, lazy, registers): " + ", ".join(unexplained)
    )


def test_the_check_sees_an_import_inside_a_function_with_no_reason(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import json\n\n\n"
        "def bare():\n    import os\n\n    return os\n\n\n"
        "def explained():\n    # lazy: the compiler stack takes seconds\n    import torch._dynamo\n    import torch._inductor\n\n"
        "    if True:\n        import graphviz  # optional: probed where used\n        import sys\n    return sys\n\n\n"
        "class Probe:\n    def method(self):\n        # a comment that gives no reason\n        from fxlab import errors\n"
        "        return errors\n\n\n"
        "def later():\n    # lazy: a reason for the line below, not for the import after it\n    x = 1\n    import os\n"
        "    try:\n        pass\n    except ImportError:\n        import json as other\n    return x, os, other\n"
    )
    assert _unexplained_imports(probe) == [5, 17, 24, 31, 35]


def _fxlab_names_imported(path: Path) -> Iterator[tuple[int, str, str]]:
    """``(line, module, name)`` of each ``from fxlab... import name`` in a file."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "fxlab":
            yield from ((node.lineno, node.module, alias.name) for alias in node.names)


@pytest.mark.parametrize("folder", ["bench", "scripts"])
def test_what_the_benchmarks_and_scripts_import_from_fxlab_exists(folder: str) -> None:
    """They run outside the suite: a name a change removed from fxlab shows here, not on the
    day someone measures."""
    import importlib

    missing = []
    for path in sorted((Path(__file__).resolve().parents[1] / folder).glob("*.py")):
        for line, module, name in _fxlab_names_imported(path):
            if not hasattr(importlib.import_module(module), name) and not _is_module(f"{module}.{name}"):
                missing.append(f"{folder}/{path.name}:{line}: {module}.{name}")
    assert missing == []


def _is_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # its parent is a module, not a package
        return False
