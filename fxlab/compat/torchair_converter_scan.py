"""Which ops TorchAir's converters convert and which they refuse, read from its sources.

Every function under TorchAir's ``_ge_concrete_graph/ge_converter/`` decorated with
``register_fx_node_ge_converter(<op>)``, or passed to it in a call
(``register_fx_node_ge_converter(<op>)(fn)``), is one registration. A converter whose body
(after its docstring) is a single ``raise`` refuses its op: TorchAir fails on every node
of it, with that exception's message. Any other body converts (maybe not every argument
combination). The sources are parsed, not imported, so this needs no torch_npu and no
CANN.

``python scripts/scan_torchair_converters.py [TORCHAIR_DIR]`` (a developer script, not
part of the package) writes the tables fxlab ships (:data:`fxlab.passes.torchair_refusals.TABLE_PATH`,
:data:`fxlab.passes.inference_rule.GE_APIS_PATH`) from a TorchAir copy; a test checks the
shipped tables against a fresh scan whenever a TorchAir copy is present.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CONVERTER_DIR = Path("_ge_concrete_graph") / "ge_converter"
# Converter folders TorchAir imports only when asked: ``lite/`` with its lite export
# (``export.experimental.enable_lite_export``), whose converters then replace the others.
OPTIONAL_CONVERTER_DIRS = ("lite",)
REGISTER = "register_fx_node_ge_converter"
CONVERTS, REFUSES = "converts", "refuses"
GENERATED_BY = "python scripts/scan_torchair_converters.py"  # what the shipped tables say made them


@dataclass(frozen=True)
class Registration:
    """One TorchAir converter registration: ``op`` as ``ns.name.overload``."""

    op: str
    verdict: str  # converts | refuses
    reason: str  # the refusal's exception and message ("" when it converts)
    where: str  # file:line under ge_converter/


def _op_name(expr: ast.expr) -> str | None:
    """``torch.ops.aten.x.y`` or ``getattr(torch.ops.aten.x, "y", None)`` -> ``aten.x.y``."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "getattr" and len(expr.args) >= 2:
        base, attr = _op_name(expr.args[0]), expr.args[1]
        if base is not None and isinstance(attr, ast.Constant) and isinstance(attr.value, str):
            return f"{base}.{attr.value}"
        return None
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name) and expr.id == "torch" and parts[-1:] == ["ops"]:
        return ".".join(reversed(parts[:-1]))
    return None


def _registered_ops(fn: ast.FunctionDef) -> list[str]:
    ops = []
    for decorator in fn.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and getattr(decorator.func, "id", getattr(decorator.func, "attr", None)) == REGISTER
            and decorator.args
        ):
            name = _op_name(decorator.args[0])
            if name is not None:
                ops.append(name)
    return ops


def _refusal(fn: ast.FunctionDef) -> str | None:
    """The message of a converter that only raises, else ``None``."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return None
    exc = body[0].exc
    if isinstance(exc, ast.Call) and exc.args and isinstance(exc.args[0], ast.Constant):
        return f"{ast.unparse(exc.func)}: " + str(exc.args[0].value)  # TorchAir's message, a str
    return ast.unparse(exc)


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            yield node


def _called_registrations(tree: ast.Module) -> Iterator[tuple[str, str]]:
    """``(op, function name)`` for each registration written as a call rather than a
    decorator: ``register_fx_node_ge_converter(<op>)(<function>)``."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and len(node.args) == 1):
            continue
        register, fn = node.func, node.args[0]
        if getattr(register.func, "id", getattr(register.func, "attr", None)) == REGISTER and register.args and isinstance(fn, ast.Name):
            name = _op_name(register.args[0])
            if name is not None:
                yield name, fn.id


def scan_file(path: Path, relative: str) -> list[Registration]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    every = list(_functions(tree))
    functions = {fn.name: fn for fn in every}  # a name defined twice: its last definition, as Python binds it
    registered = [(op, fn) for fn in every for op in _registered_ops(fn)]
    registered += [(op, functions[name]) for op, name in _called_registrations(tree) if name in functions]
    found = []
    for op, fn in registered:
        reason = _refusal(fn)
        where = f"{relative}:{(fn.body[-1] if reason else fn).lineno}"
        found.append(Registration(op, REFUSES if reason else CONVERTS, reason or "", where))
    return found


def scan_converters(torchair_dir: Path) -> list[Registration]:
    """Every registration under ``torchair_dir``'s ``ge_converter/``, sorted by op. An op
    registered twice keeps its last registration, as TorchAir's registry does (files in
    name order)."""
    root = Path(torchair_dir) / CONVERTER_DIR
    if not root.is_dir():
        raise FileNotFoundError(f"{root} does not exist: not a TorchAir source tree")
    by_op: dict[str, Registration] = {}
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] in OPTIONAL_CONVERTER_DIRS:
            continue
        for registration in scan_file(path, str(path.relative_to(root))):
            by_op[registration.op] = registration
    return [by_op[op] for op in sorted(by_op)]


FIELDS = ("op", "verdict", "reason", "where")


def table_text(registrations: list[Registration], origin: str) -> str:
    """The table as JSON, one registration (``[op, verdict, reason, where]``) a line."""
    head = {"generated_by": GENERATED_BY, "from": origin, "fields": list(FIELDS)}
    rows = ",\n".join(json.dumps([getattr(r, f) for f in FIELDS], ensure_ascii=False) for r in registrations)
    return json.dumps(head, ensure_ascii=False)[:-1] + f', "registrations": [\n{rows}\n]}}\n'


# The modules behind TorchAir's ``ge_apis`` (``from ... import *``), and ``ge_apis`` itself.
GE_API_MODULES = ("_ge_concrete_graph/auto_generated_ge_raw_ops.py", "_ge_concrete_graph/dynamic_output_ops.py")
GE_APIS = "_ge_concrete_graph/ge_apis.py"


def scan_ge_op_builders(torchair_dir: Path) -> list[str]:
    """The names ``ge_apis`` offers (its own functions and those it imports by name or by
    ``*`` from the generated op builders), sorted. TorchAir takes an op whose type is one
    of them for a built-in GE op (``hasattr(ge_apis, op.type)``): only the others get the
    ``_inference_rule`` it computes for custom ops."""
    root = Path(torchair_dir)
    names: set[str] = set()
    for relative in GE_API_MODULES:
        tree = ast.parse((root / relative).read_text(encoding="utf-8"))
        names |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    tree = ast.parse((root / GE_APIS).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            names |= {alias.asname or alias.name for alias in node.names if alias.name != "*"}
    return sorted(names)


def builders_text(names: list[str], origin: str) -> str:
    head = {"generated_by": GENERATED_BY, "from": origin}
    return json.dumps(head)[:-1] + ', "ge_apis": [\n' + ",\n".join(json.dumps(n) for n in names) + "\n]}\n"
