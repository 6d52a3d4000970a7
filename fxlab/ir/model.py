"""The Ascend IR (GE graph) data model: graphs of typed ops with tensor descriptors.

The model mirrors GE's ``ge.proto`` closely enough that writing it as a ``ModelDef`` and
reading it back is lossless, but it is plain Python: converters build it, passes read it,
writers serialize it. Each op also keeps its provenance (the FX node and source line it
came from), which GE has no field for; the JSON dump carries it, the protobuf dumps keep
it as op attrs only when asked.
"""

from __future__ import annotations

import ctypes
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

import torch

from fxlab.ir.json_values import float_from_json


class DataType(enum.IntEnum):
    """GE tensor element types, numbered as in ``ge.proto`` (the wire format)."""

    DT_UNDEFINED = 0
    DT_FLOAT = 1
    DT_FLOAT16 = 2
    DT_INT8 = 3
    DT_UINT8 = 4
    DT_INT16 = 5
    DT_UINT16 = 6
    DT_INT32 = 7
    DT_INT64 = 8
    DT_UINT32 = 9
    DT_UINT64 = 10
    DT_BOOL = 11
    DT_DOUBLE = 12
    DT_STRING = 13
    DT_COMPLEX64 = 16
    DT_COMPLEX128 = 17
    DT_BF16 = 27
    # The quantised types of torch_npu's operators (int4, 8- and 4-bit floats).
    DT_INT4 = 28
    DT_HIFLOAT8 = 33
    DT_FLOAT8_E5M2 = 34
    DT_FLOAT8_E4M3FN = 35
    DT_FLOAT8_E8M0 = 36
    DT_FLOAT4_E2M1 = 39
    DT_FLOAT4_E1M2 = 40


# TorchAir's Python ``ge.DataType`` numbers types differently from the proto enum; attrs
# such as ``Cast.dst_type`` carry TorchAir's numbers, so converters need both.
TORCHAIR_DTYPE_NUMBER: dict[DataType, int] = {
    DataType.DT_FLOAT: 0,
    DataType.DT_FLOAT16: 1,
    DataType.DT_INT8: 2,
    DataType.DT_INT32: 3,
    DataType.DT_UINT8: 4,
    DataType.DT_INT16: 6,
    DataType.DT_UINT16: 7,
    DataType.DT_UINT32: 8,
    DataType.DT_INT64: 9,
    DataType.DT_UINT64: 10,
    DataType.DT_DOUBLE: 11,
    DataType.DT_BOOL: 12,
    DataType.DT_STRING: 13,
    DataType.DT_COMPLEX64: 16,
    DataType.DT_COMPLEX128: 17,
    DataType.DT_BF16: 27,
    DataType.DT_UNDEFINED: 28,
    DataType.DT_INT4: 29,
    DataType.DT_HIFLOAT8: 34,
    DataType.DT_FLOAT8_E5M2: 35,
    DataType.DT_FLOAT8_E4M3FN: 36,
    DataType.DT_FLOAT8_E8M0: 37,
    DataType.DT_FLOAT4_E2M1: 40,
    DataType.DT_FLOAT4_E1M2: 41,
}
DTYPE_FROM_TORCHAIR_NUMBER: dict[int, DataType] = {v: k for k, v in TORCHAIR_DTYPE_NUMBER.items()}


_TORCH_TO_GE: dict[torch.dtype, DataType] = {
    torch.float32: DataType.DT_FLOAT,
    torch.float16: DataType.DT_FLOAT16,
    torch.bfloat16: DataType.DT_BF16,
    torch.float64: DataType.DT_DOUBLE,
    torch.int8: DataType.DT_INT8,
    torch.uint8: DataType.DT_UINT8,
    torch.uint16: DataType.DT_UINT16,
    torch.uint32: DataType.DT_UINT32,
    torch.uint64: DataType.DT_UINT64,
    torch.int16: DataType.DT_INT16,
    torch.int32: DataType.DT_INT32,
    torch.int64: DataType.DT_INT64,
    torch.bool: DataType.DT_BOOL,
    torch.complex64: DataType.DT_COMPLEX64,
    torch.complex128: DataType.DT_COMPLEX128,
    torch.float8_e5m2: DataType.DT_FLOAT8_E5M2,
    torch.float8_e4m3fn: DataType.DT_FLOAT8_E4M3FN,
    torch.float8_e8m0fnu: DataType.DT_FLOAT8_E8M0,
    torch.float4_e2m1fn_x2: DataType.DT_FLOAT4_E2M1,
}
_GE_TO_TORCH: dict[DataType, torch.dtype] = {v: k for k, v in _TORCH_TO_GE.items()}


def ge_dtype(dtype: torch.dtype) -> DataType:
    """The GE type of a torch dtype (``DT_UNDEFINED`` for types GE has no name for)."""
    return _TORCH_TO_GE.get(dtype, DataType.DT_UNDEFINED)


def torch_dtype(dtype: DataType) -> torch.dtype:
    """The torch dtype of a GE type; raises ``KeyError`` for types torch lacks."""
    return _GE_TO_TORCH[dtype]


UNKNOWN_DIM = -1
UNKNOWN_RANK = (-2,)


@dataclass(slots=True)  # slots: converters create thousands of these
class TensorDesc:
    """A GE ``TensorDescriptor``: name, element type, shape (``-1`` unknown dim,
    ``(-2,)`` unknown rank) and layout."""

    name: str = ""
    dtype: DataType = DataType.DT_UNDEFINED
    shape: tuple[int, ...] = ()
    layout: str = "ND"
    attrs: dict[str, Attr] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "dtype": self.dtype.name,
            "shape": list(self.shape),
            "layout": self.layout,
        }
        if self.attrs:
            out["attrs"] = {k: v.to_typed_json() for k, v in self.attrs.items()}
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TensorDesc:
        return cls(
            name=data.get("name", ""),
            dtype=DataType[data.get("dtype", "DT_UNDEFINED")],
            shape=tuple(data.get("shape", ())),
            layout=data.get("layout", "ND"),
            attrs={k: Attr.from_json(v) for k, v in data.get("attrs", {}).items()},
        )


class AttrKind(str, enum.Enum):
    """The ``AttrDef`` value a GE attr is stored in."""

    STR = "s"
    INT = "i"
    FLOAT = "f"
    BOOL = "b"
    DTYPE = "dt"
    TENSOR = "t"
    LIST_STR = "list_s"
    LIST_INT = "list_i"
    LIST_FLOAT = "list_f"
    LIST_BOOL = "list_b"
    LIST_DTYPE = "list_dt"
    LIST_LIST_INT = "list_list_int"
    # One ListValue holding ints and strings side by side: TorchAir's
    # ``input_layout_info``/``output_layout_info`` (tensor index i has layout s).
    LIST_INDEXED_STR = "list_i_s"


@dataclass(frozen=True, slots=True)
class TensorValue:
    """A constant tensor attr (``Const.value``): its descriptor and raw little-endian bytes."""

    desc: TensorDesc
    data: bytes

    def to_torch(self) -> torch.Tensor:
        dtype = torch_dtype(self.desc.dtype)
        flat = torch.frombuffer(bytearray(self.data), dtype=dtype) if self.data else torch.empty(0, dtype=dtype)
        return flat.reshape(self.desc.shape).clone()

    @classmethod
    def from_torch(cls, value: torch.Tensor, name: str = "") -> TensorValue:
        value = value.detach().contiguous().cpu()
        desc = TensorDesc(name=name, dtype=ge_dtype(value.dtype), shape=tuple(value.shape))
        # ctypes, not numpy: numpy is not a dependency and the copy is one memcpy.
        data = ctypes.string_at(value.data_ptr(), value.numel() * value.element_size()) if value.numel() else b""
        return cls(desc=desc, data=data)


@dataclass(frozen=True, slots=True)
class Attr:
    """A typed GE attr value. ``kind`` says which ``AttrDef`` field holds it."""

    kind: AttrKind
    value: Any

    def to_json(self) -> Any:
        """Plain JSON: dtypes by name, tensors as ``{"dtype", "shape", "values"}``."""
        if self.kind is AttrKind.DTYPE:
            return self.value.name
        if self.kind is AttrKind.LIST_DTYPE:
            return [v.name for v in self.value]
        if self.kind is AttrKind.TENSOR:
            if self.value.desc.dtype not in _GE_TO_TORCH:  # a type torch lacks (int4): its bytes
                return {"dtype": self.value.desc.dtype.name, "shape": list(self.value.desc.shape), "bytes": self.value.data.hex()}
            t = self.value.to_torch()
            return {"dtype": self.value.desc.dtype.name, "shape": list(t.shape), "values": t.reshape(-1).tolist()}
        if self.kind in (AttrKind.LIST_INT, AttrKind.LIST_FLOAT, AttrKind.LIST_STR, AttrKind.LIST_BOOL):
            return list(self.value)
        if self.kind in (AttrKind.LIST_LIST_INT, AttrKind.LIST_INDEXED_STR):
            return [list(v) for v in self.value]
        return self.value

    def to_typed_json(self) -> dict[str, Any]:
        """JSON that keeps the kind, so reading it back is exact."""
        return {"kind": self.kind.value, "value": self.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Attr:
        kind = AttrKind(data["kind"])
        value = data["value"]
        if kind is AttrKind.DTYPE:
            return cls(kind, DataType[value])
        if kind is AttrKind.LIST_DTYPE:
            return cls(kind, tuple(DataType[v] for v in value))
        if kind is AttrKind.TENSOR:
            return cls(kind, TensorValue.from_torch(_tensor_from_json(value)))
        if kind in (AttrKind.FLOAT, AttrKind.LIST_FLOAT):  # "NaN", "Infinity" in strict JSON
            value = float_from_json(value)
        if kind in (AttrKind.LIST_LIST_INT, AttrKind.LIST_INDEXED_STR):
            return cls(kind, tuple(tuple(v) for v in value))
        if kind.value.startswith("list_"):
            return cls(kind, tuple(value))
        return cls(kind, value)


def _tensor_from_json(value: dict[str, Any]) -> torch.Tensor:
    """A tensor attr's ``{"dtype", "shape", "values"}``; complex values are [real, imag] pairs."""
    dtype = torch_dtype(DataType[value["dtype"]])
    values = float_from_json(value["values"]) if dtype.is_floating_point or dtype.is_complex else value["values"]
    if dtype.is_complex:
        pairs = torch.tensor(values, dtype=torch.float64).reshape(-1, 2)
        return torch.view_as_complex(pairs).to(dtype).reshape(value["shape"])
    return torch.tensor(values, dtype=dtype).reshape(value["shape"])


def attr_of(value: Any) -> Attr:
    """Infer the GE attr kind of a plain Python value (bool before int: bool is an int)."""
    kind = _SCALAR_ATTR_KINDS.get(type(value))
    if kind is not None:
        if kind is not AttrKind.FLOAT:
            attr = _SCALAR_ATTRS.get((type(value), value))
            if attr is not None:
                return attr
        return _scalar_attr(kind, value)
    if isinstance(value, Attr):
        return value
    if isinstance(value, bool):
        return Attr(AttrKind.BOOL, value)
    if isinstance(value, DataType):
        return Attr(AttrKind.DTYPE, value)
    if isinstance(value, int):
        return Attr(AttrKind.INT, value)
    if isinstance(value, float):
        return Attr(AttrKind.FLOAT, value)
    if isinstance(value, str):
        return Attr(AttrKind.STR, value)
    if isinstance(value, TensorValue):
        return Attr(AttrKind.TENSOR, value)
    if isinstance(value, torch.Tensor):
        return Attr(AttrKind.TENSOR, TensorValue.from_torch(value))
    if isinstance(value, (list, tuple)):
        return _list_attr_of(tuple(value))
    raise TypeError(f"cannot store {type(value).__name__} value {value!r} as a GE attr")


# Exact types only: subclasses (DataType is an int, str enums are strs) take the checks.
_SCALAR_ATTR_KINDS: dict[type, AttrKind] = {bool: AttrKind.BOOL, int: AttrKind.INT, float: AttrKind.FLOAT, str: AttrKind.STR}
# Attrs are immutable, so ops may share them: converters set the same few values
# (``keep_dims=True``, ``axis=0``) thousands of times. Floats are not cached (``-0.0 ==
# 0.0``, ``nan != nan``); the key's type keeps ``True`` and ``1`` apart.
_SCALAR_ATTRS: dict[tuple[type, Any], Attr] = {}
_SCALAR_ATTR_LIMIT = 4096


def _scalar_attr(kind: AttrKind, value: Any) -> Attr:
    if kind is AttrKind.FLOAT:
        return Attr(kind, value)
    key = (type(value), value)
    attr = _SCALAR_ATTRS.get(key)
    if attr is None:
        if len(_SCALAR_ATTRS) >= _SCALAR_ATTR_LIMIT:
            _SCALAR_ATTRS.clear()
        attr = _SCALAR_ATTRS[key] = Attr(kind, value)
    return attr


def _list_attr_of(values: tuple[Any, ...]) -> Attr:
    if not values:
        return Attr(AttrKind.LIST_INT, ())
    if all(type(v) is int for v in values):  # the common case, decided in one pass
        return Attr(AttrKind.LIST_INT, values)
    if all(isinstance(v, bool) for v in values):
        return Attr(AttrKind.LIST_BOOL, values)
    if all(isinstance(v, DataType) for v in values):
        return Attr(AttrKind.LIST_DTYPE, values)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return Attr(AttrKind.LIST_INT, values)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return Attr(AttrKind.LIST_FLOAT, tuple(float(v) for v in values))
    if all(isinstance(v, str) for v in values):
        return Attr(AttrKind.LIST_STR, values)
    if all(isinstance(v, (list, tuple)) for v in values):
        return Attr(AttrKind.LIST_LIST_INT, tuple(tuple(int(x) for x in v) for v in values))
    raise TypeError(f"cannot store mixed list {values!r} as a GE attr")


class FrozenAttrs(dict):
    """An op's attrs: a dict that refuses changes. Ops may share one (converters reuse
    attr dicts, and scoping keeps shared ones shared), so an op's attrs are changed by
    giving it new ones (:meth:`IrOp.set_attrs`, :meth:`IrOp.drop_attrs`), never in place."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            "an op's attrs may be shared with other ops and are read-only: give the op new ones with IrOp.set_attrs or IrOp.drop_attrs"
        )

    __setitem__ = __delitem__ = pop = popitem = clear = update = setdefault = __ior__ = _refuse

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle rebuild it whole
        return (FrozenAttrs, (dict(self),))


NO_ATTRS = FrozenAttrs()


def frozen_attrs(attrs: Mapping[str, Attr] | None) -> FrozenAttrs:
    """``attrs`` as a :class:`FrozenAttrs` (itself when it is one already)."""
    if attrs is None or not attrs:
        return NO_ATTRS
    return attrs if type(attrs) is FrozenAttrs else FrozenAttrs(attrs)


@dataclass(slots=True, init=False)
class IrOp:
    """One GE ``OpDef``. ``inputs`` are ``"producer:index"`` strings (``":-1"`` for a control
    edge); ``fx_node`` and ``source`` say which FX node and source line it came from.

    ``attrs`` (a :class:`FrozenAttrs`) and the desc tuples may be shared between ops:
    a conversion gives repeated ops the same objects, and the dump writers render each
    distinct combination once. Change them by replacing them (:meth:`set_attrs`,
    :meth:`set_output_desc`, or assigning a new tuple), never in place."""

    name: str
    type: str
    inputs: list[str] = field(default_factory=list)
    attrs: FrozenAttrs = field(default_factory=FrozenAttrs)
    input_desc: tuple[TensorDesc, ...] = ()
    output_desc: tuple[TensorDesc, ...] = ()
    fx_node: str | None = None
    source: str | None = None

    # Written out, not generated: a conversion creates thousands of ops and the
    # dataclass's default-factory checks cost nearly as much as the rest of an op.
    def __init__(
        self,
        name: str,
        type: str,
        inputs: list[str] | None = None,
        attrs: Mapping[str, Attr] | None = None,
        input_desc: Iterable[TensorDesc] | None = None,
        output_desc: Iterable[TensorDesc] | None = None,
        fx_node: str | None = None,
        source: str | None = None,
    ) -> None:
        self.name = name
        self.type = type
        self.inputs = [] if inputs is None else inputs
        self.attrs = frozen_attrs(attrs)
        self.input_desc = () if input_desc is None else tuple(input_desc)
        self.output_desc = () if output_desc is None else tuple(output_desc)
        self.fx_node = fx_node
        self.source = source

    def set_attrs(self, attrs: Mapping[str, Attr]) -> None:
        """Give the op new attrs: its own with ``attrs`` added or replaced."""
        self.attrs = FrozenAttrs({**self.attrs, **attrs})

    def drop_attrs(self, *keys: str) -> None:
        """Give the op new attrs: its own without ``keys`` (absent ones are ignored)."""
        if any(key in self.attrs for key in keys):
            self.attrs = frozen_attrs({k: v for k, v in self.attrs.items() if k not in keys})

    def set_output_desc(self, index: int, desc: TensorDesc) -> None:
        """Give the op new output descs, ``desc`` at ``index``."""
        descs = self.output_desc
        self.output_desc = (*descs[:index], desc, *descs[index + 1 :])

    def attr_value(self, key: str, default: Any = None) -> Any:
        attr = self.attrs.get(key)
        return default if attr is None else attr.value

    @property
    def data_inputs(self) -> list[str]:
        return [i for i in self.inputs if not i.endswith(":-1")]

    @property
    def control_inputs(self) -> list[str]:
        return [i for i in self.inputs if i.endswith(":-1")]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "inputs": list(self.inputs),
            "attrs": {k: v.to_json() for k, v in self.attrs.items()},
            "attr_kinds": {k: v.kind.value for k, v in self.attrs.items()},
            "input_desc": [d.to_json() for d in self.input_desc],
            "output_desc": [d.to_json() for d in self.output_desc],
            "fx_node": self.fx_node,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IrOp:
        kinds = data.get("attr_kinds", {})
        attrs = {k: Attr.from_json({"kind": kinds[k], "value": v}) if k in kinds else attr_of(v) for k, v in data.get("attrs", {}).items()}
        return cls(
            name=data["name"],
            type=data["type"],
            inputs=list(data.get("inputs", [])),
            attrs=attrs,
            input_desc=[TensorDesc.from_json(d) for d in data.get("input_desc", [])],
            output_desc=[TensorDesc.from_json(d) for d in data.get("output_desc", [])],
            fx_node=data.get("fx_node"),
            source=data.get("source"),
        )


@dataclass
class IrGraph:
    """A GE ``GraphDef``: ops in creation order; ``inputs``/``outputs`` name the ``Data``
    ops and the ``NetOutput`` inputs."""

    name: str
    ops: list[IrOp] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    attrs: dict[str, Attr] = field(default_factory=dict)

    def op_by_name(self) -> dict[str, IrOp]:
        return {op.name: op for op in self.ops}

    def ops_of_type(self, op_type: str) -> list[IrOp]:
        return [op for op in self.ops if op.type == op_type]

    def ops_by_fx_node(self) -> dict[str, list[str]]:
        """The names of the ops each FX node became, in graph order (ops without an FX
        node are left out)."""
        by_node: dict[str, list[str]] = {}
        for op in self.ops:
            if op.fx_node is not None:
                by_node.setdefault(op.fx_node, []).append(op.name)
        return by_node

    @property
    def types(self) -> list[str]:
        return [op.type for op in self.ops]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
            "attrs": {k: v.to_typed_json() for k, v in self.attrs.items()},
            "ops": [op.to_json() for op in self.ops],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IrGraph:
        return cls(
            name=data["name"],
            ops=[IrOp.from_json(o) for o in data.get("ops", [])],
            inputs=list(data.get("inputs", [])),
            outputs=list(data.get("outputs", [])),
            attrs={k: Attr.from_json(v) for k, v in data.get("attrs", {}).items()},
        )
