"""TorchAir's ``CompilerConfig`` tree, read from its sources (``configs/*.py``): each config
class's options, the values an option takes where TorchAir lists them, the kind of value a
typed option checks (``IntRangeValue(default, min, max)``, ``RegexValue``, ``StrOptionValue``
... with the arguments its check reads), its sub-configs, and whether the class refuses a
name it does not have (an ``NpuBaseConfig``: ``has no option``).

The stand-in ``torchair.CompilerConfig`` (:mod:`fxlab.compat.config`) follows the table
fxlab ships (``torchair_configs.json``, written by ``scripts/scan_torchair_configs.py``), so
a model file or program that sets an option TorchAir does not have, or a value it does not
take, fails as it fails with TorchAir.
"""

from __future__ import annotations

import ast
import json
import operator
from pathlib import Path
from typing import Any

CONFIGS_PATH = Path(__file__).with_name("torchair_configs.json")
ROOT = "compiler_config.CompilerConfig"
_STRICT_BASE = "_option_base.NpuBaseConfig"
_VALUE_BASE = "_option_base.OptionValue"
_LISTED = "_option_base.OptionValue"  # OptionValue(default, [values...]): the values it takes
_PACKAGE = "torchair.configs."
# The typed values whose check reads arguments of their constructor: which ones (after the default).
_CHECK_ARGUMENTS = {"IntRangeValue": slice(1, 3), "RegexValue": slice(1, 3)}


class _Module:
    """One file of ``configs/``: its classes, and the names it imports from the others."""

    def __init__(self, stem: str, tree: ast.Module) -> None:
        self.stem = stem
        self.classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        self.constants: dict[str, Any] = {}  # module-level ``INT64_MAX = 2**63 - 1``
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    self.constants[node.targets[0].id] = constant(node.value, self.constants)
                except ValueError:
                    continue
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
    ``names`` (those it has), ``options`` (name -> the values it takes, or None for any),
    ``checks`` (name -> ``{"kind": the typed value's class, "args": what its check reads}``,
    for the options that are no plain ``OptionValue``) and ``sections`` (name -> its config class)."""
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
        found = _Found()
        for owner in reversed(self._lineage(key)):  # a base's __init__ runs first (super().__init__)
            module, node = self.classes[owner]
            init = next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
            for statement in ast.walk(init) if init is not None else []:
                self._read(module, statement, found)
        return {
            "strict": self.derives(key, _STRICT_BASE),
            "names": found.names,
            "options": found.options,
            "checks": found.checks,
            "sections": found.sections,
        }

    def _lineage(self, key: str) -> list[str]:
        found = [key]
        while (nxt := next((base for base in self.bases(found[-1]) if base in self.classes), None)) is not None:
            found.append(nxt)
        return found

    def _read(self, module: _Module, statement: ast.AST, found: _Found) -> None:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
                return
            call = statement.value
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                return
            called = module.resolve(call.func.id)
            if called is not None and self.derives(called, _VALUE_BASE):  # NpuBaseConfig has every OptionValue attribute
                found.options[target.attr] = _listed(call) if called == _LISTED else None
                if called != _LISTED:
                    found.checks[target.attr] = _check(module, called, call)
                _add(found.names, target.attr)
            elif called in self.classes:
                found.sections[target.attr] = called
                if self.derives(called, _STRICT_BASE):  # and its NpuBaseConfig attributes, no other
                    _add(found.names, target.attr)
        elif isinstance(statement, ast.Call) and isinstance(statement.func, ast.Attribute) and statement.func.attr == "append":
            owner = statement.func.value
            if isinstance(owner, ast.Attribute) and owner.attr == "_fixed_attrs" and statement.args:
                name = statement.args[0]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    found.options.setdefault(name.value, None)
                    _add(found.names, name.value)


class _Found:
    """What one config class's ``__init__`` s give (see :func:`scan_configs`)."""

    def __init__(self) -> None:
        self.options: dict[str, list[Any] | None] = {}
        self.checks: dict[str, dict[str, Any]] = {}
        self.sections: dict[str, str] = {}
        self.names: list[str] = []


def _check(module: _Module, called: str, call: ast.Call) -> dict[str, Any]:
    """A typed value's kind (its class's name) and the constructor arguments its check reads."""
    kind = called.rpartition(".")[2]
    wanted = call.args[_CHECK_ARGUMENTS[kind]] if kind in _CHECK_ARGUMENTS else []
    return {"kind": kind, "args": [constant(arg, module.constants) for arg in wanted]}


def constant(node: ast.expr, names: dict[str, Any]) -> Any:
    """The value of a constant expression of a config file: literals, the file's own
    constants, and arithmetic on them (``2**63 - 1``). ``ValueError`` for anything else."""
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -constant(node.operand, names)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](constant(node.left, names), constant(node.right, names))
    return ast.literal_eval(node)


_ARITHMETIC: dict[type[ast.operator], Any] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow}


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
