"""Ascend C operator prototypes in msOpGen's JSON form, and the registry of them by type.

msOpGen (CANN's operator project generator) reads a JSON list of op definitions::

    [{"op": "MyInplace",
      "input_desc":  [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]}, ...],
      "output_desc": [{"name": "x", ...}, {"name": "z", ...}],
      "attr":        [{"name": "attr1", "param_type": "required", "type": "float"}, ...]}]

Building the project also registers a GE op (Ascend IR) of the same type with those
inputs, outputs and attrs. fxlab has no CANN, so the prototypes a user or the seed ops
register here stand in for CANN's op registry: ``torchair.ge.custom_op(type, *args)``
maps positional arguments through them, and ``fxlab ops check`` compares them with the
PyTorch schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fxlab.errors import FxlabError
from fxlab.ir.model import AttrKind

INPUT_PARAM_TYPES = ("required", "optional", "dynamic")
ATTR_PARAM_TYPES = ("required", "optional")

# msOpGen attr types -> the GE attr kind TorchAir uses for them.
ATTR_KINDS: dict[str, AttrKind] = {
    "int": AttrKind.INT,
    "float": AttrKind.FLOAT,
    "bool": AttrKind.BOOL,
    "str": AttrKind.STR,
    "string": AttrKind.STR,
    "type": AttrKind.DTYPE,
    "data_type": AttrKind.DTYPE,
    "list_int": AttrKind.LIST_INT,
    "listint": AttrKind.LIST_INT,
    "list_float": AttrKind.LIST_FLOAT,
    "listfloat": AttrKind.LIST_FLOAT,
    "list_bool": AttrKind.LIST_BOOL,
    "listbool": AttrKind.LIST_BOOL,
    "list_str": AttrKind.LIST_STR,
    "liststr": AttrKind.LIST_STR,
    "list_type": AttrKind.LIST_DTYPE,
    "list_list_int": AttrKind.LIST_LIST_INT,
}


class PrototypeError(FxlabError):
    """A prototype file is missing, not JSON, or not in msOpGen's form."""


@dataclass(frozen=True)
class TensorParam:
    """One ``input_desc`` / ``output_desc`` entry."""

    name: str
    param_type: str = "required"
    formats: tuple[str, ...] = ()
    types: tuple[str, ...] = ()


@dataclass(frozen=True)
class AttrParam:
    name: str
    param_type: str = "required"
    type: str = ""
    default: Any = None

    @property
    def kind(self) -> AttrKind | None:
        return ATTR_KINDS.get(self.type.lower())


@dataclass(frozen=True)
class Prototype:
    """One op of a prototype file."""

    op_type: str
    inputs: tuple[TensorParam, ...] = ()
    outputs: tuple[TensorParam, ...] = ()
    attrs: tuple[AttrParam, ...] = ()
    source: str = ""

    @property
    def input_names(self) -> list[str]:
        return [p.name for p in self.inputs]

    @property
    def output_names(self) -> list[str]:
        return [p.name for p in self.outputs]


def load_prototypes(path: str | Path) -> list[Prototype]:
    """Every op defined in an msOpGen JSON file (a list of ops, or one op object)."""
    path = Path(path)
    if not path.is_file():
        raise PrototypeError(f"prototype file {path} does not exist. Pass the msOpGen JSON file of the op (e.g. my_inplace.json).")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise PrototypeError(
            f"prototype file {path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}. "
            "Fix the file; msOpGen needs the same JSON."
        ) from exc
    except UnicodeDecodeError as exc:
        raise PrototypeError(
            f"prototype file {path} is not a text file (byte {exc.start} is not UTF-8). Pass the msOpGen JSON file of the op."
        ) from exc
    except OSError as exc:
        raise PrototypeError(f"prototype file {path} cannot be read ({exc.strerror or exc}). Check the path and its permissions.") from exc
    entries = data if isinstance(data, list) else [data]
    return [_prototype_of(entry, f"{path}[{i}]") for i, entry in enumerate(entries)]


def load_prototype(path: str | Path, op_type: str | None = None) -> Prototype:
    """The op ``op_type`` from a prototype file (the only op when ``op_type`` is None)."""
    protos = load_prototypes(path)
    if op_type is None:
        if len(protos) != 1:
            names = ", ".join(p.op_type for p in protos)
            raise PrototypeError(f"prototype file {path} defines {len(protos)} ops ({names}); say which one is meant.")
        return protos[0]
    for proto in protos:
        if proto.op_type == op_type:
            return proto
    names = ", ".join(p.op_type for p in protos) or "none"
    raise PrototypeError(f"prototype file {path} has no op {op_type!r} (it defines: {names}).")


def _prototype_of(entry: Any, where: str) -> Prototype:
    if not isinstance(entry, dict):
        raise PrototypeError(f'{where}: an op must be a JSON object with "op", "input_desc" and "output_desc", got {type(entry).__name__}.')
    op_type = entry.get("op")
    if not isinstance(op_type, str) or not op_type:
        raise PrototypeError(f'{where}: the "op" field (the GE op type, e.g. "MyInplace") is missing or not a string.')
    return Prototype(
        op_type=op_type,
        inputs=tuple(_tensor_param(p, f"{where}.input_desc[{i}]") for i, p in enumerate(_list(entry, "input_desc", where))),
        outputs=tuple(_tensor_param(p, f"{where}.output_desc[{i}]") for i, p in enumerate(_list(entry, "output_desc", where))),
        attrs=tuple(_attr_param(p, f"{where}.attr[{i}]") for i, p in enumerate(_list(entry, "attr", where))),
        source=where,
    )


def _list(entry: dict[str, Any], key: str, where: str) -> list[Any]:
    value = entry.get(key, [])
    if not isinstance(value, list):
        raise PrototypeError(f'{where}: "{key}" must be a list, got {type(value).__name__}.')
    return value


def _tensor_param(data: Any, where: str) -> TensorParam:
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise PrototypeError(f'{where}: each tensor entry needs a string "name".')
    param_type = data.get("param_type", "required")
    if param_type not in INPUT_PARAM_TYPES:
        raise PrototypeError(f"{where}: param_type {param_type!r} is not one of {', '.join(INPUT_PARAM_TYPES)}.")
    return TensorParam(data["name"], param_type, tuple(data.get("format") or ()), tuple(data.get("type") or ()))


def _attr_param(data: Any, where: str) -> AttrParam:
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise PrototypeError(f'{where}: each attr needs a string "name".')
    param_type = data.get("param_type", "required")
    if param_type not in ATTR_PARAM_TYPES:
        raise PrototypeError(f"{where}: attr param_type {param_type!r} is not one of {', '.join(ATTR_PARAM_TYPES)}.")
    return AttrParam(data["name"], param_type, str(data.get("type", "")), data.get("default_value"))


@dataclass
class PrototypeRegistry:
    """GE op prototypes by op type: what CANN's op registry would answer."""

    by_type: dict[str, Prototype] = field(default_factory=dict)

    def register(self, proto: Prototype) -> Prototype:
        existing = self.by_type.get(proto.op_type)
        if existing is not None and existing != proto and _shape_of(existing) != _shape_of(proto):
            raise PrototypeError(
                f"two different prototypes for GE op {proto.op_type}: {existing.source} and {proto.source}. "
                "Keep one definition per op type."
            )
        self.by_type[proto.op_type] = proto
        return proto

    def get(self, op_type: str) -> Prototype | None:
        return self.by_type.get(op_type)


def _shape_of(proto: Prototype) -> tuple[Any, ...]:
    return (proto.inputs, proto.outputs, proto.attrs)


PROTOTYPES = PrototypeRegistry()


def registered_prototype(op_type: str) -> Prototype | None:
    """The prototype registered for GE op ``op_type``, or None (CANN would say 'not registered')."""
    return PROTOTYPES.get(op_type)


def camel_case(op_name: str) -> str:
    """TorchAir's GE type for a PyTorch op name: ``my_inplace`` -> ``MyInplace`` (a trailing
    ``_functional`` is dropped first, as TorchAir does)."""
    if op_name.endswith("_functional"):
        op_name = op_name[: -len("_functional")]
    return "".join(word.capitalize() for word in op_name.split("_"))
