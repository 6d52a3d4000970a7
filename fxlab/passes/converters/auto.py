"""TorchAir's auto converter for custom ops, on CPU.

When a custom op has no registered converter, TorchAir generates one: the GE op type is
the CamelCase of the op name (namespace dropped, a trailing ``_functional`` stripped:
``npu::my_inplace`` -> ``MyInplace``), the op's tensor arguments become the GE inputs in
schema order, its other arguments the GE attrs in order, and the GE outputs are one
output per mutated input (a *ref* output, named like that input) before the op's own
outputs. It refuses ops of the ``aten``/``prim`` namespaces, ops with ``Scalar``
arguments, and ops whose counts do not match the registered Ascend IR prototype. fxlab
also refuses every op of torch's and torch_npu's own namespaces
(:func:`fxlab.passes.torchair_refusals.is_protected`): TorchAir converts those with its
registered converters, and a GE type made up from their name would not exist.

Nor does fxlab assume a GE op for a custom op an installed library defines (transformers'
``grouped_mm_fallback``, a Python function made an op so ``torch.compile`` does not trace
into it) when no Ascend C prototype of it is known: TorchAir's auto converter would look
for an Ascend IR op of its CamelCase name in CANN, and nobody built one, so graph mode
fails on it on the NPU machine (:func:`library_op_refusal`). Who defined an op is read
from its registration (:func:`op_definition`): the function behind
``torch.library.custom_op``, else the code that made the ``torch.library.Library``
defining it, else where its fake function was registered.

TorchAir reads the prototype from CANN's operator registry. fxlab has no CANN, so the
prototype comes from :data:`PROTOTYPE_LOOKUPS` (the custom-op kit registers the
msOpGen prototypes it knows) or, failing that, is the one the schema implies under the
rules above — the prototype a well-formed Ascend C op has.

Every op made here carries ``_fxlab_torch_op`` (and how its inputs and attrs map back to
the schema) so the reference executor can run the torch op's CPU kernel for it.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch._library.custom_ops import _maybe_get_opdef
from torch._library.simple_registry import singleton

from fxlab.ir import ge
from fxlab.ir.builder import current_builder
from fxlab.ir.ge import desc_from_meta
from fxlab.ir.model import DataType, ge_dtype
from fxlab.passes.converters.registry import AUTO_CONVERTER_LOOKUPS
from fxlab.passes.torchair_refusals import NO_CONVERTER, TorchAirVerdict, is_protected
from fxlab import source_lines

TORCH_OP_ATTR = "_fxlab_torch_op"
INPUT_GROUPS_ATTR = "_fxlab_input_groups"
ATTR_NAMES_ATTR = "_fxlab_attr_names"
TENSOR_TYPES = ("Tensor", "Optional[Tensor]", "List[Tensor]")
_BUILTIN_MARKERS = ("prim", "prims", "aten")  # substring test, as TorchAir does it
_REGISTERED_AT = re.compile(r"registered at (.+):(\d+)\s*$")  # the dispatcher's note on a schema
# torch's registration API: a frame in it is not where an op was defined.
_TORCH_DIR = os.path.realpath(os.path.dirname(torch.__file__))
_REGISTRATION_CODE = (os.path.join(_TORCH_DIR, "library.py"), os.path.join(_TORCH_DIR, "_library") + os.sep)


@dataclass(frozen=True)
class GePrototype:
    """An Ascend IR op prototype: inputs ``(name, "required"|"optional"|"dynamic")``,
    outputs ``(name, "required"|"dynamic")`` and attr names, in order."""

    op_type: str
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]
    attrs: tuple[str, ...]

    @classmethod
    def from_msopgen(cls, data: Mapping[str, Any]) -> GePrototype:
        """From one op of an msOpGen JSON file (``op``, ``input_desc``, ``output_desc``, ``attr``)."""
        return cls(
            op_type=str(data["op"]),
            inputs=tuple((d["name"], d.get("param_type", "required")) for d in data.get("input_desc", [])),
            outputs=tuple((d["name"], d.get("param_type", "required")) for d in data.get("output_desc", [])),
            attrs=tuple(a["name"] for a in data.get("attr", [])),
        )


PrototypeLookup = Callable[[Any], "GePrototype | None"]
# Known Ascend IR prototypes of custom ops (the custom-op kit adds its msOpGen files here).
PROTOTYPE_LOOKUPS: list[PrototypeLookup] = []


class NotAutoConvertible(RuntimeError):
    """TorchAir's auto converter would refuse this op; the message says why."""


def ge_type_of(op: Any) -> str:
    """The GE op type TorchAir looks for: CamelCase of the op name (``_functional`` stripped)."""
    name = str(op).split(".")[1]
    if name.split("_")[-1] == "functional":
        name = "_".join(name.split("_")[:-1])
    return "".join(word.capitalize() for word in name.split("_"))


def is_tensor_arg(arg: Any) -> bool:
    return str(arg.type) in TENSOR_TYPES


def mutated_arg_names(op: Any) -> list[str]:
    return [a.name for a in op._schema.arguments if a.alias_info is not None and a.alias_info.is_write]


def prototype_from_schema(op: Any) -> GePrototype:
    """The prototype the schema implies: tensor args as inputs, a ref output per mutated
    input, then the returns (named as in the schema, else ``y`` / ``y<i>``), other args as attrs."""
    args = op._schema.arguments
    inputs = tuple((a.name, _input_kind(a)) for a in args if is_tensor_arg(a))
    refs = tuple((name, "required") for name in mutated_arg_names(op))
    returns = op._schema.returns
    taken = {name for name, _ in inputs}
    own = tuple(
        (r.name or _unused_name("y" if len(returns) == 1 else f"y{i}", taken), "dynamic" if str(r.type) == "List[Tensor]" else "required")
        for i, r in enumerate(returns)
    )
    return GePrototype(ge_type_of(op), inputs, refs + own, tuple(a.name for a in args if not is_tensor_arg(a)))


def _unused_name(name: str, taken: set[str]) -> str:
    # An unnamed return must not share an input's name: that would make it a ref output.
    while name in taken:
        name += "_out"
    return name


def _input_kind(arg: Any) -> str:
    kind = str(arg.type)
    return {"Optional[Tensor]": "optional", "List[Tensor]": "dynamic"}.get(kind, "required")


def find_prototype(op: Any) -> GePrototype | None:
    for lookup in PROTOTYPE_LOOKUPS:
        found = lookup(op)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class OpDefinition:
    """Where a custom op was defined (``file:line``, ``None`` when its registration does
    not say) and whether an installed library defined it rather than the user's code
    (their model, plugin files, own project, or fxlab's kit defining it for them)."""

    site: str | None
    by_library: bool


def op_definition(op: Any) -> OpDefinition:
    """Who defined ``op``: the first of its registration sites outside torch's
    registration API, told user from library by :func:`fxlab.source_lines.kind`."""
    for file, line in _definition_sites(op):
        if os.path.realpath(file).startswith(_REGISTRATION_CODE):
            continue
        if source_lines.is_fxlab_file(file) or source_lines.kind(file) == source_lines.USER:
            return OpDefinition(f"{file}:{line}", False)
        return OpDefinition(f"{source_lines.library_relative(file)}:{line}", True)
    return OpDefinition(None, False)


def _definition_sites(op: Any) -> Iterator[tuple[str, int]]:
    """``(file, line)`` of ``op``'s registrations, the defining one first: the function
    behind ``torch.library.custom_op``; the frame that made the defining ``Library`` (the
    dispatcher notes it on the schema); where its fake function was registered."""
    opdef = _maybe_get_opdef(op)
    code = getattr(inspect.unwrap(opdef._init_fn), "__code__", None) if opdef is not None else None
    if code is not None:
        yield code.co_filename, code.co_firstlineno
    match = _REGISTERED_AT.search(op._handle.debug())
    if match:
        yield match.group(1), int(match.group(2))
    fake = singleton.find(op._name).fake_impl.kernel
    file, _, line = (getattr(fake, "source", "") or "").rpartition(":")
    if file and line.isdigit():
        yield file, int(line)


def library_op_reason(op: Any, definition: OpDefinition) -> str:
    """Why no GE op is assumed for a library's custom op, after "it is" / "<op> is"."""
    return (
        f"a custom op defined by an installed library ({definition.site}), not by the user's code, and no "
        f"Ascend C prototype of it is known: TorchAir's auto converter would look for an Ascend IR op {ge_type_of(op)} "
        "registered in CANN, and a library's Python op has none, so graph mode fails on it on the NPU machine; "
        "there is no GE op to convert it to"
    )


def library_op_refusal(target: Any) -> TorchAirVerdict | None:
    """TorchAir's verdict on ``target`` when it is a custom op an installed library
    defines and no Ascend C prototype of it is known: no converter, with why."""
    if not isinstance(target, torch._ops.OpOverload) or is_protected(str(target)) or find_prototype(target) is not None:
        return None
    definition = op_definition(target)
    if not definition.by_library:
        return None
    return TorchAirVerdict(str(target), NO_CONVERTER, f"it is {library_op_reason(target, definition)}")


def check_auto_convertible(op: Any, prototype: GePrototype | None = None) -> GePrototype:
    """TorchAir's checks, in its order; returns the prototype used, raises
    :class:`NotAutoConvertible` with the reason."""
    if not isinstance(op, torch._ops.OpOverload):
        raise NotAutoConvertible(f"{op} is not an OpOverload: only custom operator overloads are auto-converted")
    if any(marker in str(op) for marker in _BUILTIN_MARKERS):
        raise NotAutoConvertible(
            f"{op} counts as a PyTorch built-in op (TorchAir refuses any op whose name contains "
            "'aten', 'prim' or 'prims'); register a converter for it"
        )
    if is_protected(str(op)):
        raise NotAutoConvertible(
            f"{op} is an operator of torch or torch_npu, not a custom op: TorchAir converts it only with a registered "
            "converter, and fxlab assumes no GE op for it"
        )
    for arg in op._schema.arguments:
        if isinstance(arg.type, torch._C.NumberType):
            raise NotAutoConvertible(
                f"{op} has the Scalar argument {arg.name!r}; TorchAir's auto converter refuses Scalar "
                "arguments: declare it int or float, or register a converter"
            )
    ge_type = ge_type_of(op)
    proto = prototype or find_prototype(op)
    if proto is None:
        definition = op_definition(op)
        if definition.by_library:
            raise NotAutoConvertible(f"{op} is {library_op_reason(op, definition)}")
        proto = prototype_from_schema(op)
    if proto.op_type != ge_type:
        raise NotAutoConvertible(
            f"no Ascend IR {ge_type} is registered (the prototype is named {proto.op_type}); the GE op type "
            f"must be the CamelCase of the op name, or register a converter"
        )
    _check_counts(op, proto)
    return proto


def _check_counts(op: Any, proto: GePrototype) -> None:
    args = op._schema.arguments
    tensor_names = [a.name for a in args if is_tensor_arg(a)]
    other_names = [a.name for a in args if not is_tensor_arg(a)]
    mutated = mutated_arg_names(op)
    proto_inputs = [name for name, _ in proto.inputs]
    if len(tensor_names) != len(proto_inputs):
        raise NotAutoConvertible(
            f"{op} has {len(tensor_names)} tensor inputs {tensor_names}, Ascend IR {proto.op_type} has "
            f"{len(proto_inputs)} inputs {proto_inputs}"
        )
    if len(other_names) > len(proto.attrs):
        raise NotAutoConvertible(
            f"{op} has {len(other_names)} non-tensor inputs {other_names}, more than the "
            f"{len(proto.attrs)} attrs {list(proto.attrs)} of Ascend IR {proto.op_type}"
        )
    expected_outputs = len(mutated) + len(op._schema.returns)
    if expected_outputs != len(proto.outputs):
        raise NotAutoConvertible(
            f"{op} has {expected_outputs} outputs ({len(mutated)} mutated inputs + {len(op._schema.returns)} "
            f"returns), Ascend IR {proto.op_type} has {len(proto.outputs)}"
        )
    refs = ref_output_indexes(proto)
    if mutated and len(mutated) != len(refs):
        raise NotAutoConvertible(
            f"{op} mutates {len(mutated)} inputs {mutated}, Ascend IR {proto.op_type} has {len(refs)} outputs "
            "named like an input (ref outputs); give each mutated input a same-named output"
        )


def ref_output_indexes(proto: GePrototype) -> list[int]:
    """Indexes of the outputs named like an input: GE's in-place (ref) outputs."""
    input_names = {name for name, _ in proto.inputs}
    return [i for i, (name, _) in enumerate(proto.outputs) if name in input_names]


def auto_converter_verdict(op: Any, prototype: GePrototype | None = None) -> tuple[bool, str, str]:
    """Would TorchAir's auto converter convert ``op``? ``(ok, GE type, reason)``;
    the reason is empty when it would."""
    ge_type = ge_type_of(op) if isinstance(op, torch._ops.OpOverload) else ""
    try:
        check_auto_convertible(op, prototype)
    except NotAutoConvertible as exc:
        return False, ge_type, str(exc)
    return True, ge_type, ""


def auto_converter(op: Any) -> Callable[..., Any] | None:
    """The converter TorchAir would generate for ``op``, or ``None`` when it would refuse."""
    try:
        proto = check_auto_convertible(op)
    except NotAutoConvertible:
        return None

    def convert(*args: Any, meta_outputs: Any = None, **kwargs: Any) -> Any:
        return emit_custom_op(op, proto, args, kwargs, meta_outputs)

    convert.__doc__ = str(op._schema)
    return convert


def emit_custom_op(op: Any, proto: GePrototype, args: Sequence[Any], kwargs: Mapping[str, Any], meta_outputs: Any) -> Any:
    """One GE op of type ``proto.op_type`` for a call of ``op``; returns the op's own
    outputs (the ref outputs are found by name by whoever needs them)."""
    bound = bind_arguments(op, args, kwargs)
    schema_args = op._schema.arguments
    tensor_args = [a for a in schema_args if is_tensor_arg(a)]
    other_args = [a for a in schema_args if not is_tensor_arg(a)]
    mutated = mutated_arg_names(op)
    inputs, groups = _ge_inputs(proto, tensor_args, bound, mutated)
    attrs, attr_names = _ge_attrs(proto, other_args, bound)
    attrs.update({TORCH_OP_ATTR: str(op), INPUT_GROUPS_ATTR: groups, ATTR_NAMES_ATTR: attr_names})
    own_metas = _own_metas(meta_outputs, len(op._schema.returns))
    names, dtypes, shapes = _ge_outputs(proto, inputs, own_metas, bool(mutated))
    outs = current_builder().add_op(proto.op_type, inputs, attrs, names, dtypes=dtypes, shapes=shapes)
    return _own_outputs(outs, proto, own_metas, bool(mutated))


def bind_arguments(op: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Each schema argument of ``op`` by name: given positionally, by keyword, or its default."""
    bound: dict[str, Any] = {}
    for i, arg in enumerate(op._schema.arguments):
        if i < len(args) and not arg.kwarg_only:
            bound[arg.name] = args[i]
        elif arg.name in kwargs:
            bound[arg.name] = kwargs[arg.name]
        else:
            bound[arg.name] = arg.default_value if arg.has_default_value() else None
    return bound


def _ge_inputs(proto: GePrototype, tensor_args: list[Any], bound: dict[str, Any], mutated: list[str]) -> tuple[dict[str, Any], list[int]]:
    inputs: dict[str, Any] = {}
    groups: list[int] = []
    for arg, (name, _) in zip(tensor_args, proto.inputs):
        value = bound[arg.name]
        if isinstance(value, (list, tuple)):
            inputs.update({f"{name}{i}": t for i, t in enumerate(value)})
            groups.append(len(value))
        else:
            inputs[name] = value
            groups.append(1)
    if not mutated:
        # The prototype updates inputs in place the schema does not declare mutated: TorchAir
        # copies them first (its ``Clone`` is a TensorMove) so the caller's tensor stays intact.
        for index in ref_output_indexes(proto):
            name = proto.outputs[index][0]
            if inputs.get(name) is not None:
                inputs[name] = ge.op1("TensorMove", {"x": inputs[name]}, shapes=[inputs[name].shape])
    return inputs, groups


def _ge_attrs(proto: GePrototype, other_args: list[Any], bound: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    attrs: dict[str, Any] = {}
    names: list[str] = []
    for arg, name in zip(other_args, proto.attrs):
        value = bound[arg.name]
        if value is None:
            names.append("")
            continue
        attrs[name] = ge_dtype(value) if isinstance(value, torch.dtype) else value
        names.append(name)
    return attrs, names


def _own_metas(meta_outputs: Any, count: int) -> list[Any]:
    if count == 0:
        return []
    if count == 1:
        return [meta_outputs]
    return list(meta_outputs) if isinstance(meta_outputs, (list, tuple)) else [None] * count


def _ge_outputs(
    proto: GePrototype, inputs: dict[str, Any], own_metas: list[Any], has_mutation: bool
) -> tuple[list[str], list[DataType], list[tuple[int, ...]]]:
    refs = set(ref_output_indexes(proto)) if has_mutation else set()
    names: list[str] = []
    descs = []
    own = iter(own_metas)
    for i, (name, kind) in enumerate(proto.outputs):
        if i in refs:
            names.append(name)
            descs.append(inputs[name].desc if inputs.get(name) is not None else desc_from_meta(None))
            continue
        meta = next(own, None)
        metas = list(meta) if kind == "dynamic" and isinstance(meta, (list, tuple)) else [meta]
        if kind == "dynamic":
            names.extend(f"{name}{k}" for k in range(len(metas)))
        else:
            names.append(name)
        descs.extend(desc_from_meta(m) for m in metas)
    return names, [d.dtype for d in descs], [d.shape for d in descs]


def _own_outputs(outs: list[Any], proto: GePrototype, own_metas: list[Any], has_mutation: bool) -> Any:
    refs = set(ref_output_indexes(proto)) if has_mutation else set()
    own: list[Any] = []
    position = 0
    for i, (_, kind) in enumerate(proto.outputs):
        if i in refs:
            position += 1
            continue
        meta = own_metas[len(own)] if len(own) < len(own_metas) else None
        if kind == "dynamic":
            count = len(meta) if isinstance(meta, (list, tuple)) else 0
            own.append(outs[position : position + count])
            position += count
        else:
            own.append(outs[position])
            position += 1
    if not own:
        return None
    return own[0] if len(own) == 1 else tuple(own)


AUTO_CONVERTER_LOOKUPS.append(auto_converter)
