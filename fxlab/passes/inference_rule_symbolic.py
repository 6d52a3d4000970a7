"""TorchAir's ``_inference_rule`` with symbolic sizes (dynamic shapes).

Where a converter made an op that is not one of TorchAir's ``ge_apis`` builders (a custom
op) and the node's values have symbolic sizes, TorchAir works the rule out by running the
node's op again on fresh symbols: every symbolic size of the converter's inputs gets a
symbol of its own (a new shape environment, no two sizes sharing one), the op's fake
kernel gives the outputs' sizes as expressions of those symbols, and the rule says which
inputs' sizes name the symbols the outputs need (the first input naming each, in input
order) and writes each output size in GE's rule language (``s0*s1`` as is, ``//`` as
``Floor(Div(a, b))``, ``%`` as ``Mod``, ``/`` as ``Div``, ``**`` as ``Pow``, ceiling and
floor as ``Ceil``/``Floor``; a symbolic scalar input's symbol as ``v<n>``). Ops it cannot
follow get no rule, as in TorchAir (whose failure is only a warning).
"""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, optimization_hint

from fxlab.ir.builder import Tensor
from fxlab.ir.model import DTYPE_FROM_TORCHAIR_NUMBER, TORCHAIR_DTYPE_NUMBER, Attr, AttrKind, DataType, IrOp, ge_dtype

RULE_ATTR = "_inference_rule"
# TorchAir's fresh symbols all come from one source name, numbered as torch numbers them.
SYMBOL_SOURCE = "my_source"


class SymbolicValue:
    """What TorchAir's rule knows of one GE tensor (its ``SymTensor``): sizes, or the
    values of a symbolic scalar or list, and a dtype."""

    def __init__(self, meta: Any = None) -> None:
        self.dtype: DataType | None = None
        self.sizes: list[Any] | None = None
        self.values: list[Any] | None = None
        self.meta = meta
        if isinstance(meta, SymbolicValue):
            self.dtype, self.meta = meta.dtype, meta.meta
            self.sizes = list(meta.sizes) if meta.sizes else None
            self.values = list(meta.values) if meta.values else None
        elif isinstance(meta, torch.Tensor):
            self.sizes, self.dtype = list(meta.size()), ge_dtype(meta.dtype)
        elif isinstance(meta, (torch.SymInt, torch.SymFloat, torch.SymBool, list, tuple)):
            self.values = list(meta) if isinstance(meta, (list, tuple)) else [meta]
            self.dtype = next((_sym_dtype(v) for v in self.values if _is_sym(v)), None)

    def with_dtype(self, dtype: DataType | None) -> SymbolicValue:
        copy = SymbolicValue(self)
        copy.dtype = dtype
        return copy

    @property
    def defined(self) -> bool:
        return self.sizes is not None and self.dtype is not None and all(isinstance(v, (torch.SymInt, int)) for v in self.sizes)

    def free_symbols(self) -> set[Any]:
        found: set[Any] = set()
        for value in [*(self.values or ()), *(self.sizes or ())]:
            if isinstance(value, torch.SymInt):
                found |= value.node.expr.free_symbols
        return found


def _is_sym(value: Any) -> bool:
    return isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool))


def _sym_dtype(value: Any) -> DataType:
    if isinstance(value, torch.SymInt):
        return DataType.DT_INT64
    return DataType.DT_FLOAT if isinstance(value, torch.SymFloat) else DataType.DT_BOOL


def has_symbolic_sizes(values: Iterable[Any]) -> bool:
    """Whether any of ``values`` (fake tensors, sizes, lists of them) is symbolic."""
    for value in values:
        if isinstance(value, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in value.shape):
            return True
        if _is_sym(value) or (isinstance(value, (list, tuple)) and has_symbolic_sizes(value)):
            return True
    return False


class _FreshSymbols:
    """Each symbolic size of the converter's inputs as a symbol of its own, as TorchAir's
    rule makes them (a shape environment without duck sizing)."""

    def __init__(self) -> None:
        self.env = ShapeEnv(duck_shape=False)

    def __call__(self, value: Any) -> Any:
        from torch._dynamo.source import GlobalSource  # lazy: Dynamo takes ~0.6 s to import; loading a saved trace imports this module

        if not isinstance(value, torch.SymInt):
            return value
        return self.env.create_unspecified_symint_and_symbol(optimization_hint(value), GlobalSource(SYMBOL_SOURCE), DimDynamic.DYNAMIC)

    def meta(self, fake: Any) -> Any:
        if isinstance(fake, torch.Tensor):
            return torch.empty([self(d) for d in fake.size()], dtype=fake.dtype, device="meta")
        if isinstance(fake, (list, tuple)):
            return [self(v) for v in fake]
        return self(fake)


def attach_symbolic_rules(
    ops: Sequence[IrOp], target: Callable[..., Any], args: Any, kwargs: Mapping[str, Any], outputs: Any, is_builtin: Callable[[IrOp], bool]
) -> None:
    """Give each op of ``ops`` that ``is_builtin`` rejects its rule (see the module
    docstring); no rule at all when the op's fake kernel cannot run on fresh symbols."""
    try:
        _attach(ops, target, args, kwargs, outputs, is_builtin)
    except Exception:  # noqa: BLE001 - TorchAir only warns and writes no rule
        return


def _attach(
    ops: Sequence[IrOp], target: Callable[..., Any], args: Any, kwargs: Mapping[str, Any], outputs: Any, is_builtin: Callable[[IrOp], bool]
) -> None:
    fresh = _FreshSymbols()
    known: defaultdict[str, SymbolicValue] = defaultdict(SymbolicValue)

    def meta_of(tensor: Tensor) -> Any:
        if tensor.tensor not in known:
            known[tensor.tensor] = SymbolicValue(fresh.meta(tensor.fake))
        return known[tensor.tensor].meta

    meta_args, meta_kwargs = _map_tensors(args, meta_of), {k: _map_tensors(v, meta_of) for k, v in kwargs.items() if k != "meta_outputs"}
    _record_outputs(known, outputs, target(*meta_args, **meta_kwargs))
    for op in ops:
        _follow(op, known)
        for index in range(len(op.output_desc)):
            _output(op, index, known)  # as TorchAir's log line does: inputs read are recorded
        for ref in op.inputs:
            known[ref]  # noqa: B018 - the same
    for op in ops:
        if not is_builtin(op):
            rule = _rule(op, known)
            if rule is not None:
                op.set_attrs({RULE_ATTR: Attr(AttrKind.STR, rule)})


def _map_tensors(value: Any, fn: Callable[[Tensor], Any]) -> Any:
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, Mapping):
        return {k: _map_tensors(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(v, fn) for v in value)
    return value


def _record_outputs(known: dict[str, SymbolicValue], outputs: Any, metas: Any) -> None:
    if isinstance(outputs, Tensor):
        known[outputs.tensor] = SymbolicValue(metas)
    elif isinstance(outputs, (list, tuple)):
        if not isinstance(metas, (list, tuple)) or len(metas) != len(outputs):
            raise ValueError("the converter's outputs and the op's do not pair up")
        for out, meta in zip(outputs, metas):
            _record_outputs(known, out, meta)


def _follow(op: IrOp, known: defaultdict[str, SymbolicValue]) -> None:
    """TorchAir follows ``TensorMove`` (the input as is), ``Cast`` (its new dtype) and
    ``Const`` (a dtype, no sizes)."""
    if op.type == "TensorMove":
        value = known.get(op.inputs[0])
    elif op.type == "Cast":
        source = known.get(op.inputs[0])
        value = source.with_dtype(DTYPE_FROM_TORCHAIR_NUMBER.get(op.attr_value("dst_type"))) if source is not None else None
        if source is None:
            raise AttributeError(f"{op.name} casts a value the rule does not know")  # TorchAir's rule stops here
    elif op.type == "Const":
        tensor = op.attr_value("value")
        value = SymbolicValue().with_dtype(tensor.desc.dtype if tensor is not None else None)
    else:
        return
    if len(op.output_desc) == 1:
        known[f"{op.name}:0"] = value  # type: ignore[assignment]


def _output(op: IrOp, index: int, known: defaultdict[str, SymbolicValue]) -> SymbolicValue:
    name = f"{op.name}:{index}"
    if name in known:
        return known[name]
    input_names = [d.name for d in op.input_desc]
    if op.output_desc[index].name in input_names:  # a ref output: the input it writes
        return known[op.inputs[input_names.index(op.output_desc[index].name)]]
    return SymbolicValue()


def _rule(op: IrOp, known: defaultdict[str, SymbolicValue]) -> str | None:
    inputs = [known[ref] for ref in op.inputs]
    outputs = [_output(op, i, known) for i in range(len(op.output_desc))]
    if not all(o.defined for o in outputs):
        return None
    needed = set().union(*(o.free_symbols() for o in outputs))
    chosen: list[SymbolicValue | None] = [None] * len(inputs)
    for i, value in enumerate(inputs):
        overlap = value.free_symbols() & needed
        if overlap:
            chosen[i] = value
            needed -= overlap
    if needed:
        return None  # some output size names a symbol no input gives
    renames: dict[str, str] = {}
    rule_inputs = [None if value is None else _input_entry(value, renames) for value in chosen]
    rule_outputs = []
    for value in outputs:
        sizes = value.sizes or []
        for i, size in enumerate(sizes):
            sizes[i] = ge_expression(str(size), renames)
        rule_outputs.append([str(s) for s in sizes])
    rule = {"shape": {"inputs": rule_inputs, "outputs": rule_outputs}, "dtype": [TORCHAIR_DTYPE_NUMBER[o.dtype] for o in outputs]}  # type: ignore[index]
    return json.dumps(rule, indent=2)


def _input_entry(value: SymbolicValue, renames: dict[str, str]) -> list[str]:
    if value.sizes is not None:
        return [str(s) for s in value.sizes]
    values = value.values or []
    for i, item in enumerate(values):
        if isinstance(item, torch.SymInt):
            renames.setdefault(str(item), f"v{str(item)[1:]}")
            values[i] = renames[str(item)]
    return [str(v) for v in values]


# -- sizes in GE's rule language -----------------------------------------------------------
_BINARY_CALLS = {ast.Pow: "Pow", ast.Mod: "Mod", ast.Div: "Div"}
_CEIL_NAMES = frozenset({"ceil", "ceiling", "CeilToInt"})
_FLOOR_NAMES = frozenset({"floor", "FloorToInt"})


class _ToGeRule(ast.NodeTransformer):
    def __init__(self, renames: Mapping[str, str]) -> None:
        self.renames = renames

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.renames:
            return ast.copy_location(ast.Name(id=self.renames[node.id], ctx=node.ctx), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        left, right = self.visit(node.left), self.visit(node.right)
        if isinstance(node.op, ast.FloorDiv):
            return _call("Floor", _call("Div", left, right))
        name = _BINARY_CALLS.get(type(node.op))
        if name is not None:
            return _call(name, left, right)
        return ast.BinOp(left=left, op=node.op, right=right)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("ceil", "ceiling", "floor"):
            return _call("Floor" if func.attr == "floor" else "Ceil", self.visit(node.args[0]))
        if isinstance(func, ast.Name):
            if func.id in _CEIL_NAMES or func.id in _FLOOR_NAMES:
                return _call("Ceil" if func.id in _CEIL_NAMES else "Floor", self.visit(node.args[0]))
            if func.id == "IntTrueDiv":
                return _call("Div", self.visit(node.args[0]), self.visit(node.args[1]))
        return self.generic_visit(node)


def _call(name: str, *args: Any) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def ge_expression(expression: str, renames: Mapping[str, str] | None = None) -> str:
    """A size expression as GE's rule language writes it (see the module docstring)."""
    tree = _ToGeRule(renames or {}).visit(ast.parse(expression, mode="eval"))
    return ast.unparse(ast.fix_missing_locations(tree))
