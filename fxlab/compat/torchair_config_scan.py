"""TorchAir's ``CompilerConfig`` tree, read from its sources (``configs/*.py``): each config
class's options, the values an option takes where TorchAir lists them, its sub-configs, and
whether the class refuses a name it does not have (an ``NpuBaseConfig``: ``has no option``).

The stand-in ``torchair.CompilerConfig`` (:mod:`fxlab.compat.config`) follows the table
fxlab ships (``torchair_configs.json``, written by ``scripts/scan_torchair_configs.py``), so
a model file or program that sets an option TorchAir does not have, or a value it does not
take, fails as it fails with TorchAir.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

CONFIGS_PATH = Path(__file__).with_name("torchair_configs.json")
ROOT = "compiler_config.CompilerConfig"
_STRICT_BASE = "_option_base.NpuBaseConfig"
_VALUE_BASE = "_option_base.OptionValue"
_LISTED = "_option_base.OptionValue"  # OptionValue(default, [values...]): the values it takes
_PACKAGE = "torchair.configs."


class _Module:
    """One file of ``configs/``: its classes, and the names it imports from the others."""

    def __init__(self, stem: str, tree: ast.Module) -> None:
        self.stem = stem
        self.classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        self.imported: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(_PACKAGE):
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = f"{(node.module or '')[len(_PACKAGE) :]}.{alias.name}"

    def resolve(self, name: str) -> str | None:
        """A class name as this file sees it: ``module.Class``."""
        return f"{self.stem}.{name}" if name in self.classes else self.imported.get(name)


def scan_configs(torchair_dir: Path) -> dict[str, dict[str, Any]]:
    """Each config class (``module.Class``): ``strict`` (refuses names it does not have),
    ``names`` (those it has), ``options`` (name -> the values it takes, or None for any)
    and ``sections`` (name -> its config class)."""
    modules = {
        path.stem: _Module(path.stem, ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted((Path(torchair_dir) / "configs").glob("*.py"))
    }
    classes = {f"{m.stem}.{name}": (m, node) for m in modules.values() for name, node in m.classes.items()}
    scan = _Scan(classes)
    return {key: scan.config(key) for key in sorted(classes) if not scan.derives(key, _VALUE_BASE) and key != _STRICT_BASE}


class _Scan:
    def __init__(self, classes: dict[str, tuple[_Module, ast.ClassDef]]) -> None:
        self.classes = classes

    def bases(self, key: str) -> list[str]:
        module, node = self.classes[key]
        return [found for base in node.bases if isinstance(base, ast.Name) and (found := module.resolve(base.id))]

    def derives(self, key: str, ancestor: str) -> bool:
        return key == ancestor or (key in self.classes and any(self.derives(base, ancestor) for base in self.bases(key)))

    def config(self, key: str) -> dict[str, Any]:
        options: dict[str, list[Any] | None] = {}
        sections: dict[str, str] = {}
        names: list[str] = []
        for owner in reversed(self._lineage(key)):  # a base's __init__ runs first (super().__init__)
            module, node = self.classes[owner]
            init = next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
            for statement in ast.walk(init) if init is not None else []:
                self._read(module, statement, options, sections, names)
        return {"strict": self.derives(key, _STRICT_BASE), "names": names, "options": options, "sections": sections}

    def _lineage(self, key: str) -> list[str]:
        found = [key]
        while (nxt := next((base for base in self.bases(found[-1]) if base in self.classes), None)) is not None:
            found.append(nxt)
        return found

    def _read(self, module: _Module, statement: ast.AST, options: dict[str, Any], sections: dict[str, str], names: list[str]) -> None:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
                return
            call = statement.value
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                return
            called = module.resolve(call.func.id)
            if called is not None and self.derives(called, _VALUE_BASE):  # NpuBaseConfig has every OptionValue attribute
                options[target.attr] = _listed(call) if called == _LISTED else None
                _add(names, target.attr)
            elif called in self.classes:
                sections[target.attr] = called
                if self.derives(called, _STRICT_BASE):  # and its NpuBaseConfig attributes, no other
                    _add(names, target.attr)
        elif isinstance(statement, ast.Call) and isinstance(statement.func, ast.Attribute) and statement.func.attr == "append":
            owner = statement.func.value
            if isinstance(owner, ast.Attribute) and owner.attr == "_fixed_attrs" and statement.args:
                name = statement.args[0]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    options.setdefault(name.value, None)
                    _add(names, name.value)


def _listed(call: ast.Call) -> list[Any] | None:
    """The values ``OptionValue(default, [values])`` takes (None: any)."""
    if len(call.args) < 2:
        return None
    try:
        listed = ast.literal_eval(call.args[1])
    except ValueError:
        return None
    return list(listed) if isinstance(listed, (list, tuple)) else None


def _add(names: list[str], name: str) -> None:
    if name not in names:
        names.append(name)


def configs_text(configs: dict[str, dict[str, Any]], origin: str) -> str:
    return json.dumps({"from": origin, "root": ROOT, "configs": configs}, indent=1, sort_keys=True) + "\n"


def load_configs() -> dict[str, dict[str, Any]]:
    """The shipped table's config classes (empty when it is not there)."""
    try:
        return json.loads(CONFIGS_PATH.read_text(encoding="utf-8"))["configs"]
    except (OSError, ValueError, KeyError):
        return {}
