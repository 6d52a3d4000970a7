"""TorchAir's aten/prims converters, read from its sources, and fxlab's coverage of them.

A TorchAir converter module registers functions with
``@register_fx_node_ge_converter(torch.ops.<ns>.<op>.<overload>)``. Most of them only
``raise NotImplementedError``: TorchAir ships a stub for every overload. A converter
"really converts" when its body does anything besides raising (a docstring aside); one
that raises only for some arguments still counts as converting.

Run ``python tools/torchair_converters.py [TORCHAIR_DIR]`` to print the counts, fxlab's
coverage and the real converters fxlab lacks (``--missing``).
"""
from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

NAMESPACES = ("aten", "prims")


@dataclass(frozen=True)
class TorchAirConverter:
    """One registered converter: the overload's qualified name (``aten.add.Tensor``),
    whether it really converts, and where it is."""

    qualname: str
    converts: bool
    file: str
    line: int


def _only_raises(fn: ast.FunctionDef) -> bool:
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    return bool(body) and all(isinstance(stmt, (ast.Raise, ast.Pass)) for stmt in body)


def _target_of(decorator: ast.expr) -> str | None:
    """``aten.add.Tensor`` of ``register_fx_node_ge_converter(torch.ops.aten.add.Tensor)``."""
    if not (isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "register_fx_node_ge_converter"):
        return None
    if not decorator.args:
        return None
    dotted = ast.unparse(decorator.args[0])
    prefix = "torch.ops."
    if not dotted.startswith(prefix):
        return None
    parts = dotted[len(prefix):].split(".")
    # Two parts name an OpOverloadPacket (``torch.ops.aten.sym_size``): a target of its own.
    return ".".join(parts) if len(parts) in (2, 3) and parts[0] in NAMESPACES else None


def _module_converters(path: Path) -> Iterator[TorchAirConverter]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            target = _target_of(decorator)
            if target is not None:
                yield TorchAirConverter(target, not _only_raises(node), str(path), node.lineno)


def converter_dir(torchair_root: Path) -> Path:
    """``_ge_concrete_graph/ge_converter`` under a TorchAir copy (the package folder or
    any folder above it)."""
    for candidate in [torchair_root, *sorted(torchair_root.glob("**/torchair"))]:
        found = candidate / "_ge_concrete_graph" / "ge_converter"
        if found.is_dir():
            return found
    raise FileNotFoundError(f"no _ge_concrete_graph/ge_converter folder under {torchair_root}")


def torchair_converters(torchair_root: Path) -> dict[str, TorchAirConverter]:
    """Every aten/prims converter TorchAir registers, by qualified overload name."""
    found: dict[str, TorchAirConverter] = {}
    base = converter_dir(torchair_root)
    for namespace in NAMESPACES:
        for path in sorted((base / namespace).glob("*.py")):
            for converter in _module_converters(path):
                # A later registration replaces an earlier one, as in TorchAir's registry.
                found[converter.qualname] = converter
    return found


def fxlab_converted() -> set[str]:
    """Qualified names of the overloads (and packets) fxlab's built-in registry converts."""
    import torch

    from fxlab.passes import converters  # noqa: F401 - registers the shipped converters
    from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB

    names = set()
    for converter in CONVERTERS:
        if converter.origin != ORIGIN_FXLAB:
            continue
        target = converter.target
        if isinstance(target, torch._ops.OpOverloadPacket):
            names.add(target._qualified_op_name.replace("::", "."))
            continue
        schema = getattr(target, "_schema", None)
        if schema is None:  # higher-order ops (auto_functionalized_v2) are not aten/prims
            continue
        ns, name = schema.name.split("::")
        names.add(f"{ns}.{name}.{schema.overload_name or 'default'}")
    return names


def coverage(torchair_root: Path) -> tuple[list[str], list[str]]:
    """TorchAir's real converters that fxlab converts, and those it lacks (sorted)."""
    real = sorted(q for q, c in torchair_converters(torchair_root).items() if c.converts)
    ours = fxlab_converted()
    return [q for q in real if q in ours], [q for q in real if q not in ours]


def _default_root() -> Path:
    from fxlab.compat.bridge import find_torchair

    found = find_torchair()
    if found is None:
        import torchair

        found = Path(torchair.__file__).parent
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("torchair", nargs="?", type=Path, help="a TorchAir copy (default: the one the bridge uses)")
    parser.add_argument("--missing", action="store_true", help="list the real converters fxlab lacks")
    args = parser.parse_args(argv)
    root = args.torchair or _default_root()
    every = torchair_converters(root)
    covered, missing = coverage(root)
    real = len(covered) + len(missing)
    print(f"TorchAir aten/prims converters: {len(every)}; really convert: {real}; only raise: {len(every) - real}")
    print(f"fxlab converts {len(covered)} of the {real} ({100.0 * len(covered) / max(real, 1):.1f}%)")
    if args.missing:
        for name in missing:
            print(f"  missing {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
