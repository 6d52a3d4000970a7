"""TorchAir's ``_inference_rule`` attr: the shape/dtype rule it gives GE for custom ops.

After each converter, TorchAir's ``infer_symbol_shape`` looks at the ops the converter
made whose type is not one of its built-in GE op builders (``ge_apis``; a custom op, or
a builder named apart from the type it makes, as ``ForeachACos`` makes ``ForeachAcos``).
For each, it works out the (symbolic) shape and dtype of every output from the fake
values it knows: the converter's inputs, the converter's result (the node's value),
``TensorMove``/``Cast``/``Const`` it follows through, and a ref output (named as an
input) taken as that input. When every output is known, the op gets, as a JSON string
attr::

    {"shape": {"inputs": [...], "outputs": [["2", "8"], ...]}, "dtype": [0, ...]}

``inputs`` has one entry per op input (``null`` unless its sizes name a symbol an
output needs), ``outputs`` the output sizes as expressions, ``dtype`` TorchAir's dtype
numbers. :func:`attach_inference_rules` does the same for static shapes, and with
symbolic sizes as :mod:`fxlab.passes.inference_rule_symbolic` describes.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Sequence

import torch

from fxlab.ir.builder import SYMBOLIC_SHAPE_ATTR, Tensor, current_builder
from fxlab.passes.inference_rule_symbolic import attach_symbolic_rules, has_symbolic_sizes
from fxlab.ir.model import DTYPE_FROM_TORCHAIR_NUMBER, TORCHAIR_DTYPE_NUMBER, Attr, AttrKind, DataType, IrOp, ge_dtype

GE_APIS_PATH = Path(__file__).with_name("torchair_ge_apis.json")
RULE_ATTR = "_inference_rule"
Call = tuple[Any, dict[str, Any]]  # a converter's (args, kwargs)


@functools.lru_cache(maxsize=1)
def ge_api_names() -> frozenset[str]:
    """The names TorchAir's ``ge_apis`` offers (generated from its sources)."""
    return frozenset(json.loads(GE_APIS_PATH.read_text(encoding="utf-8"))["ge_apis"])


_BUILTIN: frozenset[str] = frozenset()


def _load_builtin() -> frozenset[str]:
    global _BUILTIN
    _BUILTIN = ge_api_names()
    return _BUILTIN


@dataclass(frozen=True)
class Known:
    """What TorchAir knows of one tensor: its sizes (``None``: unknown) and dtype."""

    shape: tuple[int, ...] | None
    dtype: DataType | None

    @property
    def defined(self) -> bool:
        return self.shape is not None and self.dtype is not None


UNKNOWN = Known(None, None)


def _known_from_meta(meta: Any) -> Known:
    if isinstance(meta, torch.Tensor):
        if not all(type(d) is int for d in meta.shape):
            return UNKNOWN
        return Known(tuple(meta.shape), ge_dtype(meta.dtype))
    return UNKNOWN


def _flat_pairs(outputs: Any, metas: Any) -> Iterable[tuple[Any, Any]]:
    if isinstance(outputs, (list, tuple)):
        if isinstance(metas, (list, tuple)) and len(metas) == len(outputs):
            for out, meta in zip(outputs, metas):
                yield from _flat_pairs(out, meta)
        return
    yield outputs, metas


def _flat_pairs_metas(outputs: Any, metas: Any) -> list[Any]:
    return [meta for _, meta in _flat_pairs(outputs, metas)]


def _inputs_of(args: Any) -> Iterable[Tensor]:
    if isinstance(args, Tensor):
        yield args
    elif isinstance(args, dict):
        for value in args.values():
            yield from _inputs_of(value)
    elif isinstance(args, (list, tuple)):
        for value in args:
            yield from _inputs_of(value)


def attach_inference_rules(
    ops: Sequence[IrOp], call: Call, outputs: Any, meta_outputs: Any, fx_node: str | None, target: Any = None
) -> None:
    """Give each op of ``ops`` (made by one converter for FX node ``fx_node``, calling
    ``target``) that TorchAir takes for a custom op its ``_inference_rule``, from the
    converter's arguments ``call`` (args, kwargs; their descs carry their fake values) and
    its ``outputs`` with their ``meta_outputs``. With symbolic sizes the rule comes from
    running ``target`` on fresh symbols (:mod:`fxlab.passes.inference_rule_symbolic`)."""
    builtin = _BUILTIN or _load_builtin()
    for op in ops:  # the common case, every op a built-in one, costs one look-up an op
        if op.type not in builtin:
            break
    else:
        return
    args, kwargs = call
    fakes = [t.fake for t in _inputs_of(call)]
    if target is not None and has_symbolic_sizes([*fakes, *_flat_pairs_metas(outputs, meta_outputs)]):
        attach_symbolic_rules(ops, target, args, kwargs, outputs, lambda op: op.type in builtin)
        return
    by_hand = current_builder().dtype_set_by_hand
    known: dict[str, Known] = {}
    for tensor in _inputs_of(call):
        known[tensor.tensor] = _known_input(tensor, fx_node, by_hand)
    for out, meta in _flat_pairs(outputs, meta_outputs):
        if isinstance(out, Tensor):
            known[out.tensor] = _known_from_meta(meta)
    for op in ops:
        followed = _follow(op, known)
        if followed is not None:
            known[f"{op.name}:0"] = followed
    for op in ops:
        if op.type not in builtin:
            rule = _rule(op, known)
            if rule is not None:
                op.set_attrs({RULE_ATTR: Attr(AttrKind.STR, rule)})


def _known_input(tensor: Tensor, fx_node: str | None, by_hand: set[str]) -> Known:
    """A converter input's fake value, as its desc carries it: a graph input's, an earlier
    node's result's, or an output whose dtype a converter set by hand."""
    op = tensor.op
    if op.type != "Data" and op.fx_node == fx_node and tensor.tensor not in by_hand:
        return UNKNOWN
    desc = tensor.desc
    if any(d < 0 for d in desc.shape) or SYMBOLIC_SHAPE_ATTR in desc.attrs:
        return UNKNOWN
    return Known(tuple(desc.shape), desc.dtype)


def _follow(op: IrOp, known: dict[str, Known]) -> Known | None:
    """TorchAir's own inference of the three ops it follows through (first input read as
    ``op.input[0]``, as TorchAir reads it)."""
    if op.type == "Const":
        value = op.attrs.get("value")
        return Known(None, value.value.desc.dtype) if value is not None else UNKNOWN
    if op.type not in ("TensorMove", "Cast") or not op.inputs:
        return None
    source = known.get(op.inputs[0], UNKNOWN)
    if op.type == "Cast":
        return Known(source.shape, DTYPE_FROM_TORCHAIR_NUMBER.get(op.attr_value("dst_type")))
    return source


def _output_known(op: IrOp, index: int, known: dict[str, Known]) -> Known:
    found = known.get(f"{op.name}:{index}")
    if found is not None:
        return found
    input_names = [d.name for d in op.input_desc]
    name = op.output_desc[index].name
    if name in input_names:  # a ref output: the input it writes
        return known.get(op.inputs[input_names.index(name)], UNKNOWN)
    return UNKNOWN


def _rule(op: IrOp, known: dict[str, Known]) -> str | None:
    outputs = [_output_known(op, i, known) for i in range(len(op.output_desc))]
    shapes = [o.shape for o in outputs if o.shape is not None]
    dtypes = [o.dtype for o in outputs if o.dtype is not None]
    if len(shapes) < len(outputs) or len(dtypes) < len(outputs):  # some output is not known
        return None
    rule = {
        # static sizes name no symbol, so no input is needed to compute them
        "shape": {"inputs": [None] * len(op.inputs), "outputs": [[str(d) for d in shape] for shape in shapes]},
        "dtype": [TORCHAIR_DTYPE_NUMBER[dtype] for dtype in dtypes],
    }
    return json.dumps(rule, indent=2)
