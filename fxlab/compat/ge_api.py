"""``torchair.ge`` for the stand-in: ``custom_op``, the ``ge.attr`` wrappers, ``DataType``,
``Const`` / ``Cast`` / ``Clone``, and the ``Tensor`` / ``TensorSpec`` hint types.

Every call lands in fxlab's own graph builder (:mod:`fxlab.ir.ge`), so a converter written
for TorchAir builds fxlab's Ascend IR. Behaviour follows TorchAir's public API:

- ``custom_op(op_type, inputs={...}, outputs=[...], attrs={...})``: inputs in the dict's
  order, ``None`` for an absent optional input, a list for a dynamic input (named
  ``name0, name1, ...``); attrs must be ``ge.attr.*`` wrappers; outputs are names or
  ``(name, count)`` pairs; one output item gives a tensor (or list), several a tuple.
- ``custom_op(op_type, *args)``: arguments in prototype order (inputs, then attrs),
  mapped through the op's registered prototype (fxlab's stand-in for CANN's op
  registry: an msOpGen JSON registered with :func:`fxlab.ops.define_op` or
  :func:`fxlab.ops.prototype.PROTOTYPES`).
"""

from __future__ import annotations

import enum
from typing import Any
from collections.abc import Mapping, Sequence

import torch

from fxlab.ir import ge as fxge
from fxlab.ir.builder import Tensor, current_builder
from fxlab.ir.model import DTYPE_FROM_TORCHAIR_NUMBER, TORCHAIR_DTYPE_NUMBER, Attr, AttrKind, ge_dtype
from fxlab.ops.prototype import Prototype, registered_prototype


class TensorSpec:
    """Type hint stand-in for TorchAir's ``TensorSpec`` (a converter's ``meta_outputs``
    is the node's fake tensor in fxlab)."""


# TorchAir's Python DataType numbering (what dtype attrs carry), built from fxlab's table.
DataType = type("DataType", (), {dt.name: number for dt, number in TORCHAIR_DTYPE_NUMBER.items()})


class Format(enum.IntEnum):
    FORMAT_UNDEFINED = -1
    FORMAT_NCHW = 0
    FORMAT_NHWC = 1
    FORMAT_ND = 2
    FORMAT_NC1HWC0 = 3
    FORMAT_FRACTAL_Z = 4
    FORMAT_NC1HWC0_C04 = 12
    FORMAT_HWCN = 16
    FORMAT_NDHWC = 27
    FORMAT_FRACTAL_NZ = 29


class GeAttr:
    """One ``ge.attr.<Kind>``: the bare builder (``ge.attr.Int``) or a value (``ge.attr.Int(3)``)."""

    def __init__(self, cls: str, kind: AttrKind | None, value: Any = None) -> None:
        self.cls = cls
        self.kind = kind
        self.value = value

    def __call__(self, value: Any) -> GeAttr:
        if isinstance(value, GeAttr):
            if value.cls != self.cls:
                raise TypeError(f"ge.attr.{self.cls} given a ge.attr.{value.cls} value")
            return value
        if value is None:
            raise TypeError(f"ge.attr.{self.cls}(None): an attr needs a value")
        return GeAttr(self.cls, self.kind, value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GeAttr) and (self.cls, self.value) == (other.cls, other.value)

    def __hash__(self) -> int:
        return hash((self.cls, repr(self.value)))

    def __repr__(self) -> str:
        return f"ge.attr.{self.cls}({self.value!r})"

    def to_attr(self) -> Attr:
        """The typed fxlab attr; dtype values are TorchAir numbers or torch dtypes."""
        if self.kind is None:
            raise TypeError(f"ge.attr.{self.cls} has no counterpart in fxlab's Ascend IR model (no list_list_float attrs)")
        return Attr(self.kind, _convert(self.kind, self.value))


def _convert(kind: AttrKind, value: Any) -> Any:
    if kind is AttrKind.INT:
        return int(value)
    if kind is AttrKind.FLOAT:
        return float(value)
    if kind is AttrKind.BOOL:
        return bool(value)
    if kind is AttrKind.STR:
        return value.decode() if isinstance(value, bytes) else str(value)
    if kind is AttrKind.DTYPE:
        return _dtype(value)
    if kind is AttrKind.LIST_DTYPE:
        return tuple(_dtype(v) for v in value)
    if kind is AttrKind.LIST_INT:
        return tuple(int(v) for v in value)
    if kind is AttrKind.LIST_FLOAT:
        return tuple(float(v) for v in value)
    if kind is AttrKind.LIST_BOOL:
        return tuple(bool(v) for v in value)
    if kind is AttrKind.LIST_STR:
        return tuple(v.decode() if isinstance(v, bytes) else str(v) for v in value)
    if kind is AttrKind.LIST_LIST_INT:
        return tuple(tuple(int(x) for x in v) for v in value)
    return value


def _dtype(value: Any) -> Any:
    if isinstance(value, torch.dtype):
        return ge_dtype(value)
    return DTYPE_FROM_TORCHAIR_NUMBER[int(value)]


ATTR_BUILDERS: dict[str, GeAttr] = {
    "Int": GeAttr("Int", AttrKind.INT),
    "Float": GeAttr("Float", AttrKind.FLOAT),
    "Bool": GeAttr("Bool", AttrKind.BOOL),
    "Str": GeAttr("Str", AttrKind.STR),
    "DataType": GeAttr("DataType", AttrKind.DTYPE),
    "ListInt": GeAttr("ListInt", AttrKind.LIST_INT),
    "ListFloat": GeAttr("ListFloat", AttrKind.LIST_FLOAT),
    "ListBool": GeAttr("ListBool", AttrKind.LIST_BOOL),
    "ListStr": GeAttr("ListStr", AttrKind.LIST_STR),
    "ListDataType": GeAttr("ListDataType", AttrKind.LIST_DTYPE),
    "ListListInt": GeAttr("ListListInt", AttrKind.LIST_LIST_INT),
    "ListListFloat": GeAttr("ListListFloat", None),
}

# msOpGen attr kinds -> the wrapper TorchAir picks for a positional custom_op argument.
_BUILDER_OF_KIND = {b.kind: b for b in ATTR_BUILDERS.values() if b.kind is not None}


def custom_op(
    op_type: str,
    *args: Any,
    inputs: Mapping[str, Any] | None = None,
    outputs: Sequence[str | tuple[str, int]] | None = None,
    attrs: Mapping[str, GeAttr] | None = None,
    node_name: str | None = None,
) -> Any:
    """Create GE op ``op_type`` in the graph being converted (see the module docstring)."""
    if args:
        if inputs is not None or outputs is not None or attrs is not None:
            raise TypeError(f"custom_op({op_type!r}, ...): pass either positional arguments or inputs=/outputs=/attrs=, not both")
        inputs, outputs, attrs = _args_by_prototype(op_type, args)
    named_inputs = _named_inputs(op_type, inputs)
    typed_attrs = _typed_attrs(op_type, attrs)
    names, layout = _output_layout(op_type, outputs)
    handles = current_builder().add_op(op_type, named_inputs, typed_attrs, names, name=node_name)
    return _group_outputs(handles, layout)


def _args_by_prototype(op_type: str, args: Sequence[Any]) -> tuple[dict[str, Any], list[str], dict[str, GeAttr]]:
    proto = registered_prototype(op_type)
    if proto is None:
        raise RuntimeError(
            f"GE op {op_type} is not registered, so custom_op({op_type!r}, *args) cannot map its arguments. "
            "Register its msOpGen prototype JSON (fxlab.ops.define_op(..., prototype=FILE)), or call custom_op "
            "with inputs={...}, outputs=[...], attrs={...}."
        )
    expected = len(proto.inputs) + len(proto.attrs)
    if len(args) != expected:
        raise IndexError(
            f"custom_op({op_type!r}, *args) got {len(args)} arguments; its prototype has {len(proto.inputs)} inputs "
            f"and {len(proto.attrs)} attrs ({expected} in all)."
        )
    inputs = {p.name: _check_input(op_type, p.name, p.param_type, a) for p, a in zip(proto.inputs, args)}
    attrs = _attrs_by_prototype(op_type, proto, args[len(proto.inputs) :])
    return inputs, _prototype_outputs(proto), attrs


def _check_input(op_type: str, name: str, param_type: str, value: Any) -> Any:
    ok = {
        "required": isinstance(value, Tensor),
        "optional": value is None or isinstance(value, Tensor),
        "dynamic": isinstance(value, (list, tuple)),
    }[param_type]
    if not ok:
        want = {"required": "a Tensor", "optional": "a Tensor or None", "dynamic": "a list of Tensors"}[param_type]
        raise TypeError(f"custom_op({op_type!r}): input {name!r} ({param_type}) must be {want}, got {type(value).__name__}")
    return value


def _attrs_by_prototype(op_type: str, proto: Prototype, values: Sequence[Any]) -> dict[str, GeAttr]:
    attrs: dict[str, GeAttr] = {}
    for param, value in zip(proto.attrs, values):
        if value is None:
            continue
        builder = _BUILDER_OF_KIND.get(param.kind) if param.kind is not None else None
        if builder is None:
            raise ValueError(f"custom_op({op_type!r}): attr {param.name!r} has msOpGen type {param.type!r}, which fxlab cannot map")
        attrs[param.name] = builder(value)
    return attrs


def _prototype_outputs(proto: Prototype) -> list[str]:
    if any(p.param_type == "dynamic" for p in proto.outputs):
        raise ValueError(f"custom_op({proto.op_type!r}, *args): dynamic outputs need outputs=[(name, count)]; call it with keywords")
    return proto.output_names


def _named_inputs(op_type: str, inputs: Mapping[str, Any] | None) -> dict[str, Tensor | None]:
    if inputs is None:
        return {}
    if not isinstance(inputs, Mapping):
        raise TypeError(f"custom_op({op_type!r}): inputs must be a dict of name -> Tensor, got {type(inputs).__name__}")
    named: dict[str, Tensor | None] = {}
    for name, value in inputs.items():
        if value is None or isinstance(value, Tensor):
            named[name] = value
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                if not isinstance(item, Tensor):
                    raise TypeError(f"custom_op({op_type!r}): input {name!r}[{i}] must be a ge.Tensor, got {type(item).__name__}")
                named[f"{name}{i}"] = item
        else:
            raise TypeError(
                f"custom_op({op_type!r}): input {name!r} must be a ge.Tensor, a list of them or None, got {type(value).__name__}"
            )
    return named


def _typed_attrs(op_type: str, attrs: Mapping[str, Any] | None) -> dict[str, Attr]:
    typed: dict[str, Attr] = {}
    for key, value in (attrs or {}).items():
        if not isinstance(value, GeAttr) or value.value is None:
            allowed = ", ".join(f"ge.attr.{k}" for k in ATTR_BUILDERS)
            raise TypeError(f"custom_op({op_type!r}): attr {key!r} is {value!r}; wrap it in one of {allowed}")
        typed[key] = value.to_attr()
    return typed


def _output_layout(op_type: str, outputs: Sequence[Any] | None) -> tuple[list[str], list[int | None]]:
    """Flat output names, and per output item its count (None for a single tensor)."""
    if outputs is None:
        return [], []
    if not isinstance(outputs, (list, tuple)):
        raise TypeError(f"custom_op({op_type!r}): outputs must be a list of names, got {type(outputs).__name__}")
    names: list[str] = []
    layout: list[int | None] = []
    for item in outputs:
        if isinstance(item, str):
            names.append(item)
            layout.append(None)
        elif isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], int):
            names.extend(f"{item[0]}{i}" for i in range(item[1]))
            layout.append(item[1])
        else:
            raise TypeError(f"custom_op({op_type!r}): an output must be a name or a (name, count) pair, got {item!r}")
    return names, layout


def _group_outputs(handles: list[Tensor], layout: list[int | None]) -> Any:
    if not layout:
        return None
    grouped: list[Any] = []
    position = 0
    for count in layout:
        if count is None:
            grouped.append(handles[position])
            position += 1
        else:
            grouped.append(handles[position : position + count])
            position += count
    return grouped[0] if len(grouped) == 1 else tuple(grouped)


def Const(v: Any, dtype: int | None = None, node_name: str | None = None, readable: bool = True) -> Tensor:  # noqa: N802 - TorchAir's name
    """A ``Const`` op; ``dtype`` is a TorchAir DataType number."""
    out = fxge.const(v, None if dtype is None else DTYPE_FROM_TORCHAIR_NUMBER[dtype])
    if not readable:
        out.op.drop_attrs("_readable_value")
    return out


def Cast(x: Tensor, *, dst_type: int, dependencies: Sequence[Tensor] = (), node_name: str | None = None) -> Tensor:  # noqa: N802
    """``Cast(x)``; ``dst_type`` is a TorchAir DataType number."""
    target = DTYPE_FROM_TORCHAIR_NUMBER[dst_type]
    return fxge.op1(
        "Cast", {"x": x}, {"dst_type": dst_type}, dtypes=target, shapes=[x.shape], dependencies=list(dependencies), name=node_name
    )


def Clone(x: Tensor, *, dependencies: Sequence[Tensor] = (), node_name: str | None = None) -> Tensor:  # noqa: N802
    """A copy of ``x`` (GE ``TensorMove``), as TorchAir's ``ge.Clone``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"ge.Clone: input must be a ge.Tensor, got {type(x).__name__}")
    return fxge.op1("TensorMove", {"x": x}, dependencies=list(dependencies), name=node_name, shapes=[x.shape])
