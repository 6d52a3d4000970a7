"""Facts about a custom op, read from the dispatcher and fxlab's registries: which op a
name means, its kernels per dispatch key and where they were registered, its fake
function, its converter, its prototype, and sample inputs (registered or derived from
the schema). ``fxlab ops list`` shows these; :mod:`fxlab.ops.op_check` builds on them.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from fxlab.errors import FxlabError
from fxlab.npu_kernels import serves_cpu
from fxlab.ops.define import CUSTOM_OPS, CustomOp, existing_overload, fake_function_site, has_fake, plugin_defined_ops
from fxlab.ops.prototype import Prototype, camel_case, registered_prototype
from fxlab.passes.converters.auto import GePrototype, auto_converter_verdict
from fxlab.passes.torchair_refusals import TORCH_NAMESPACES
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB, ORIGIN_TORCHAIR, Sample

DEFINE_MODULE = str(Path(__file__).with_name("define.py"))


class UnknownOpError(FxlabError):
    """The op name given does not name a registered custom op."""


def known_op_names() -> list[str]:
    """Qualnames of the custom ops fxlab can report on: defined through fxlab, in the
    ``npu`` namespace, defined by plugin files, or with a non-ATen converter."""
    names = {op.qualname for op in CUSTOM_OPS}
    names.update(n for n in torch._C._dispatch_get_all_op_names() if n.startswith("npu::"))
    names.update(plugin_defined_ops())
    for converter in CONVERTERS:
        qualname = getattr(converter.target, "name", lambda: "")()
        if "::" in qualname and qualname.split("::")[0] not in NOT_CUSTOM_NAMESPACES:
            names.add(qualname.split(".")[0])
    return sorted(names)


# Namespaces whose ops are not custom ops: PyTorch's own (its collectives among them) and
# TorchAir's (its scope markers, its npu_define collectives).
BUILTIN_NAMESPACES = TORCH_NAMESPACES
NOT_CUSTOM_NAMESPACES = TORCH_NAMESPACES | {"air", "npu_define"}


def resolve_op(name: str) -> Any:
    """The OpOverload ``name`` means: ``npu::my_op``, ``npu.my_op[.default]``,
    ``torch.ops.npu.my_op.default``, or a bare ``my_op`` when only one namespace has it."""
    text = name.strip().removeprefix("torch.ops.")
    text = text.replace("::", ".")
    parts = text.split(".")
    if len(parts) >= 2 and parts[0] in BUILTIN_NAMESPACES:
        raise UnknownOpError(
            f"{name!r} is one of PyTorch's own {parts[0]} ops, not a custom op: `fxlab ops check` checks a custom op's "
            "delivery (schema, kernel, Meta function, prototype, converter). Give a custom op such as npu::my_inplace; "
            "to see how TorchAir converts a built-in op, trace a model that uses it with `fxlab trace MODEL.py`."
        )
    candidates: list[tuple[str, str]] = []
    if len(parts) >= 3:
        candidates.append((f"{parts[0]}::{parts[1]}", parts[2]))
    if len(parts) == 2:
        candidates.append((f"{parts[0]}::{parts[1]}", "default"))
    if len(parts) == 1:
        candidates.extend((q, "default") for q in known_op_names() if q.split("::", 1)[-1] == parts[0])
    for qualname, overload_name in candidates:
        overload = existing_overload(qualname, overload_name)
        if overload is not None:
            return overload
    raise UnknownOpError(_unknown_message(name))


def _unknown_message(name: str) -> str:
    known = known_op_names()
    by_bare = {k.split("::")[1]: k for k in known}
    parts = name.strip().removeprefix("torch.ops.").replace("::", ".").split(".")
    bare = parts[1] if len(parts) >= 2 else parts[0]
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    close += [by_bare[b] for b in difflib.get_close_matches(bare, list(by_bare), n=3, cutoff=0.5)]
    close = list(dict.fromkeys(close))[:3]
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return (
        f"no custom op named {name!r} is registered.{hint} Known custom ops: {', '.join(known) or 'none'}. "
        "Load the file that defines it with --plugin FILE, or give the name as namespace::op."
    )


@dataclass
class OpFacts:
    overload: Any
    qualname: str
    schema: str
    kernels: dict[str, str]  # dispatch key -> registration site
    fake: str  # where the active fake/Meta function is registered, "" if none
    converter: str  # "fxlab" / "torchair" / "auto" / "none"
    converter_where: str
    replaced: str  # where the fxlab converter it replaced lives, if any
    prototype: Prototype | None
    record: CustomOp | None

    def to_json(self) -> dict[str, Any]:
        proto = self.prototype
        return {
            "op": self.qualname,
            "schema": self.schema,
            "kernels": dict(self.kernels),
            "fake": self.fake or None,
            "converter": {"origin": self.converter, "where": self.converter_where or None, "replaces": self.replaced or None},
            "prototype": None if proto is None else {"op": proto.op_type, "source": proto.source},
            "reused": bool(self.record and self.record.reused),
        }


def list_ops() -> list[OpFacts]:
    """Facts about every custom op fxlab knows (see :func:`known_op_names`)."""
    facts = []
    for qualname in known_op_names():
        overload = existing_overload(qualname)
        if overload is not None:
            facts.append(op_facts(overload))
    return facts


def op_facts(overload: Any) -> OpFacts:
    qualname = overload.name().split(".")[0]
    record = CUSTOM_OPS.get(overload)
    kernels = dispatch_kernels(qualname, record)
    fake = kernels.pop("Meta", "")
    registered = fake_function_site(qualname)
    if registered and not (record is not None and record.fake):  # define_op's record names the function itself
        fake = registered
    elif not fake and has_fake(qualname):
        fake = "register_fake"
    prototype = prototype_of(overload, record)
    converter, where, replaced = converter_origin(overload, prototype)
    return OpFacts(overload, qualname, str(overload._schema), kernels, fake, converter, where, replaced, prototype, record)


_DUMP_LINE = re.compile(r"^(?P<key>[A-Za-z0-9_]+): registered at (?P<site>.+?) :: ")


def dispatch_kernels(qualname: str, record: CustomOp | None = None) -> dict[str, str]:
    """Active kernels by dispatch key, with where each was registered (fxlab's own
    registrations point at the function, not at fxlab's library)."""
    kernels: dict[str, str] = {}
    for line in torch._C._dispatch_dump(qualname).splitlines():
        match = _DUMP_LINE.match(line)
        if match is None or "(inactive)" in line:
            continue
        key, site = match["key"], match["site"]
        if key == "CPU" and serves_cpu(qualname):
            continue  # the op's npu kernel, registered for CPU by fxlab (no NPU here): not the op's own
        if record is not None and site.startswith(DEFINE_MODULE):
            site = (record.fake if key == "Meta" else record.kernels.get(key)) or site
        kernels[key] = site
    return kernels


def converter_origin(overload: Any, prototype: Prototype | None = None) -> tuple[str, str, str]:
    converter = CONVERTERS.get(overload)
    if converter is not None:
        replaced = converter.replaced.where if converter.replaced is not None else ""
        origin = "torchair" if converter.origin == ORIGIN_TORCHAIR else ("fxlab" if converter.origin == ORIGIN_FXLAB else converter.origin)
        return origin, converter.where, replaced
    verdict = auto_verdict(overload, prototype)
    if verdict[0]:
        return "auto", f"TorchAir auto converter -> {verdict[1]}", ""
    return "none", "", ""


def auto_verdict(overload: Any, prototype: Prototype | None = None) -> tuple[bool, str, str]:
    """TorchAir's auto-converter verdict (against ``prototype`` when given)."""
    if prototype is None:
        return auto_converter_verdict(overload)
    return auto_converter_verdict(overload, ge_prototype(prototype))


def ge_prototype(prototype: Prototype) -> Any:
    """The auto converter's view of a prototype (names and param types, in order)."""
    return GePrototype(
        op_type=prototype.op_type,
        inputs=tuple((p.name, p.param_type) for p in prototype.inputs),
        outputs=tuple((p.name, p.param_type) for p in prototype.outputs),
        attrs=tuple(a.name for a in prototype.attrs),
    )


def registered_ge_prototype(overload: Any) -> Any:
    """Lookup for the auto converter: the prototype registered under the op's CamelCase type."""
    proto = registered_prototype(camel_case(str(overload).split(".")[1]))
    return ge_prototype(proto) if proto is not None else None


def prototype_of(overload: Any, record: CustomOp | None = None) -> Prototype | None:
    if record is not None and record.prototype is not None:
        return record.prototype
    return registered_prototype(camel_case(overload.name().split("::")[1].split(".")[0]))


# -- samples ----------------------------------------------------------------------------
def registered_samples(overload: Any) -> list[Sample]:
    record = CUSTOM_OPS.get(overload)
    if record is not None and record.samples is not None:
        return record.sample_list()
    converter = CONVERTERS.get(overload)
    if converter is not None and converter.samples is not None:
        return list(converter.samples())
    return []


def samples_from_schema(overload: Any) -> list[Sample]:
    """One sample made from the schema: small random float tensors, scalar defaults."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for arg in overload._schema.arguments:
        value = _value_for(arg)
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
    return [Sample(tuple(args), kwargs)]


def _value_for(arg: Any) -> Any:
    text = str(arg.type)
    if arg.has_default_value() and "Tensor" not in text:
        return arg.default_value
    if text == "Tensor":
        return torch.randn(2, 3)
    if text == "Optional[Tensor]":
        return torch.randn(2, 3)
    if text in ("List[Tensor]", "List[Optional[Tensor]]"):
        return [torch.randn(2, 3), torch.randn(2, 3)]
    simple = {
        "int": 2,
        "SymInt": 2,
        "float": 1.5,
        "bool": False,
        "str": "",
        "Scalar": 1.0,
        "ScalarType": torch.float32,
        "List[int]": [1],
        "List[SymInt]": [1],
        "List[float]": [1.0],
        "Device": torch.device("cpu"),
        "Layout": torch.strided,
    }
    if text in simple:
        return simple[text]
    if text.startswith("Optional["):
        return None
    raise ValueError(f"cannot make a sample value for argument {arg.name} of type {text}")
