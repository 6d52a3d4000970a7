"""The public names of TorchAir 2.13, npugraph_ex and torch_npu that files written for
them use, and fxlab's error for a name its stand-ins lack.

fxlab's stand-in packages (``fxlab/compat/standins/``) must offer every public name of
the real ones (:data:`API_MODULES`), so that code written for TorchAir imports and runs
unchanged. Which names those are is read from the torch_npu wheel's sources, never by
importing them, with one rule (:func:`public_names`): a module's ``__all__`` when it has
one, else every name its top level binds (functions, classes, assignments, conditional
ones too) that does not start with ``_``; the submodules a package imports as such at
its top level (``import torchair.ops``, ``from . import attr``) are names of the package
too. The lists and every module name of the three packages are
shipped in ``torch_npu_files/public_names.json`` (made by ``scripts/list_public_names.py``;
``tests/compat/test_public_names.py`` compares the stand-ins with it, and it with a
fetched TorchAir).

A name the real package has and fxlab's stand-in lacks is fxlab's gap, never the
user's mistake: :class:`StandinGap` says so, naming the name and the way round it.
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fxlab.errors import FxlabError

SHIPPED_NAMES_FILE = Path(__file__).resolve().with_name("torch_npu_files") / "public_names.json"
# The modules whose public names the stand-ins offer (as files for TorchAir are written).
API_MODULES = (
    "torchair",
    "torchair.scope",
    "torchair.ops",
    "torchair.ge",
    "torchair.ge.attr",
    "torchair.inference",
    "torchair.llm_datadist",
    "torchair.configs.compiler_config",
    "npugraph_ex",
    "npugraph_ex.scope",
    "npugraph_ex.ops",
    "npugraph_ex.inference",
    "npugraph_ex.configs.compiler_config",
    "torch_npu",
    "torch_npu.npu",
)
PACKAGES = ("torchair", "npugraph_ex", "torch_npu")


class StandinGap(FxlabError, ModuleNotFoundError):
    """A name the real TorchAir / npugraph_ex / torch_npu has and fxlab's stand-in lacks.

    An ``ImportError`` (so ``import x`` / ``from x import y`` fail as Python says they
    fail) whose message says whose gap it is."""

    exit_code = 2


def gap_message(what: str) -> str:
    package = what.split(".", 1)[0]
    way_round = (
        "run with --converter torchair, which loads TorchAir's own sources, "
        if package in ("torchair", "npugraph_ex")
        else "run on a machine with torch_npu, "
    )
    return (
        f"{what} is part of {package} {release()}, but fxlab's stand-in for {package} does not offer it yet: "
        f"this is fxlab's gap, not a mistake in your code. To go on, {way_round}or please report the name to fxlab."
    )


def standin_gap(what: str) -> StandinGap:
    return StandinGap(gap_message(what), name=what)


# -- reading the sources ---------------------------------------------------------------------------
def public_names(source: str, package: str = "") -> list[str]:
    """The public names of a module with this source (the rule in the module docstring);
    ``package``: the module's own dotted name when it is a package, for its submodules."""
    tree = ast.parse(source)
    declared: list[str] | None = None
    bound: list[str] = []
    submodules: list[str] = []
    for node in tree.body:
        declared = _all_of(node, declared)
        bound += _bound(node)
        submodules += _submodules(node, package)
    names = declared if declared is not None else [n for n in bound if not n.startswith("_")]
    return sorted(set(names) | {s for s in submodules if not s.startswith("_")})


def _all_of(node: ast.stmt, found: list[str] | None) -> list[str] | None:
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
        return [str(n) for n in ast.literal_eval(node.value)]
    return found


def _bound(node: ast.stmt) -> list[str]:
    """Names a top-level statement binds, looking into ``if`` / ``try`` bodies."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [t.id for t in targets if isinstance(t, ast.Name)]
    if isinstance(node, (ast.If, ast.Try)):
        inner = [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
        inner += [stmt for handler in getattr(node, "handlers", []) for stmt in handler.body]
        return [name for stmt in inner for name in _bound(stmt)]
    return []


def _submodules(node: ast.stmt, package: str) -> list[str]:
    """Submodules of ``package`` a top-level import names as such (``import pkg.sub``,
    ``from . import sub``); a module imported only for a name in it is not counted."""
    if not package:
        return []
    if isinstance(node, ast.Import):
        prefix = package + "."
        return [a.name[len(prefix) :].split(".")[0] for a in node.names if a.name.startswith(prefix)]
    if isinstance(node, ast.ImportFrom) and node.level == 1 and not node.module:
        return [a.name for a in node.names]
    return []


def module_names(root: Path, package: str) -> list[str]:
    """Every module of the package at ``root`` (its folder), as dotted names; the per-op
    converter files under ``ge_converter`` folders are left out (their packages stay)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if "ge_converter" in parts[:-1] and parts[-1] != "__init__":
            continue
        if parts[-1] == "__init__":
            parts.pop()
        found.append(".".join([package, *parts]))
    return found


def scan(roots: dict[str, Path]) -> dict[str, Any]:
    """``{"modules": {package: [module, ...]}, "names": {api module: [name, ...]}}`` from
    the packages' source folders (``{"torchair": Path, ...}``)."""
    modules = {package: module_names(root, package) for package, root in sorted(roots.items())}
    names: dict[str, list[str]] = {}
    for module in API_MODULES:
        package = module.split(".", 1)[0]
        if package not in roots:
            continue
        path = _source_of(roots[package], module)
        if path is not None:
            names[module] = public_names(path.read_text(encoding="utf-8"), module if path.name == "__init__.py" else "")
    return {"modules": modules, "names": names}


def _source_of(root: Path, module: str) -> Path | None:
    parts = module.split(".")[1:]
    folder = root.joinpath(*parts)
    for candidate in (folder / "__init__.py", folder.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


# -- the shipped lists -----------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def shipped() -> dict[str, Any]:
    return dict(json.loads(SHIPPED_NAMES_FILE.read_text(encoding="utf-8")))


def release() -> str:
    return str(shipped().get("torch_npu", ""))


def is_known_module(name: str) -> bool:
    """Whether the real package has a module (or a folder of modules) of this dotted name."""
    return name in _known_modules()


@functools.lru_cache(maxsize=1)
def _known_modules() -> frozenset[str]:
    """Every module, and every folder above one (``torchair._contrib`` has no ``__init__``)."""
    modules = [m for names in shipped()["modules"].values() for m in names]
    return frozenset(".".join(m.split(".")[:depth]) for m in modules for depth in range(1, m.count(".") + 2))


def names_of(module: str) -> list[str]:
    """The public names of an API module of the real package ([] for another module)."""
    return list(shipped()["names"].get(module, []))


def missing_from(module: Any, expected: Iterable[str]) -> list[str]:
    """The names in ``expected`` that ``module`` does not offer."""
    return sorted(name for name in expected if not hasattr(module, name))
