"""Define a custom op in one place: schema, kernels per device, fake function, converter,
Ascend C prototype and samples.

This is a thin layer over ``torch.library`` (``Library.define`` / ``Library.impl``) and
fxlab's converter registry, nothing more: every piece lands where PyTorch and TorchAir
expect it, so the op behaves the same when fxlab is not around. Two choices matter:

- The fake function is registered as the op's ``Meta`` kernel (as torch_npu registers
  its ops' Meta functions), not with ``torch.library.register_fake``. A plugin file that
  adds its own ``Meta`` kernel with ``Library(ns, "IMPL", "Meta")`` (the seeds' style)
  then replaces fxlab's, exactly as it would replace torch_npu's.
- An op that already exists (torch_npu loaded, or a plugin defined it first) is reused:
  its schema must match, and only the pieces it lacks are registered.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator, Mapping, Sequence

import torch
from torch._library.simple_registry import singleton

from fxlab.errors import FxlabError
from fxlab.ops.prototype import PROTOTYPES, Prototype, load_prototype
from fxlab.passes.converters.registry import CONVERTERS, Sample, register_converter

# Device names users write -> dispatch keys.
DEVICE_KEYS = {
    "cpu": "CPU",
    "cuda": "CUDA",
    "npu": "PrivateUse1",
    "privateuse1": "PrivateUse1",
    "meta": "Meta",
    "default": "CompositeExplicitAutograd",
}

# Kept alive for the process: dropping a Library object would undo its registrations.
_LIBRARIES: dict[str, torch.library.Library] = {}


class OpDefinitionError(FxlabError):
    """A custom op cannot be defined as asked (bad schema, clash with an existing op)."""


@dataclass
class CustomOp:
    """What fxlab knows about one custom op it defined or reused."""

    qualname: str  # "npu::my_inplace"
    schema: str  # "my_inplace(Tensor(a!) x, Tensor y) -> Tensor"
    overload: Any  # the OpOverload (torch.ops.npu.my_inplace.default)
    kernels: dict[str, str] = field(default_factory=dict)  # dispatch key -> where it came from
    fake: str = ""  # where the fake (Meta) function came from
    prototype: Prototype | None = None
    prototype_path: Path | None = None
    samples: Callable[[], Sequence[Sample]] | None = None
    reused: bool = False  # the op existed before fxlab (torch_npu or a plugin defined it)
    where: str = ""

    @property
    def name(self) -> str:
        return self.qualname.split("::", 1)[1]

    @property
    def namespace(self) -> str:
        return self.qualname.split("::", 1)[0]

    def sample_list(self) -> list[Sample]:
        return list(self.samples()) if self.samples is not None else []


class CustomOpRegistry:
    """Custom ops defined through :func:`define_op`, keyed by their default OpOverload."""

    def __init__(self) -> None:
        self._ops: dict[Any, CustomOp] = {}

    def register(self, op: CustomOp) -> CustomOp:
        existing = self._ops.get(op.overload)
        if existing is not None:
            raise OpDefinitionError(
                f"{op.qualname} is defined twice through fxlab: at {existing.where} and at {op.where}. Keep one definition."
            )
        self._ops[op.overload] = op
        return op

    def get(self, overload: Any) -> CustomOp | None:
        return self._ops.get(overload)

    def __iter__(self) -> Iterator[CustomOp]:
        return iter(list(self._ops.values()))

    def __len__(self) -> int:
        return len(self._ops)


CUSTOM_OPS = CustomOpRegistry()


def define_op(
    schema: str,
    *,
    namespace: str | None = None,
    kernels: Mapping[str, Callable[..., Any]] | None = None,
    fake: Callable[..., Any] | None = None,
    converter: Callable[..., Any] | None = None,
    prototype: str | Path | None = None,
    samples: Sequence[Sample] | Callable[[], Sequence[Sample]] | None = None,
) -> CustomOp:
    """Define (or reuse) a custom op and register everything it needs.

    ``schema`` is ``"ns::name(args) -> returns"`` or ``"name(args) -> returns"`` with
    ``namespace``. ``kernels`` maps a device (``"cpu"``, ``"npu"``, ``"default"``, ...) to
    its implementation; ``fake`` is the Meta/fake function; ``converter`` the Ascend IR
    converter (signature mirrors the schema plus keyword ``meta_outputs``); ``prototype``
    the op's msOpGen JSON file (a relative path is beside the file calling define_op);
    ``samples`` sample calls (:class:`Sample`) or a function
    returning them. Returns the :class:`CustomOp` record ``fxlab ops`` reports on.
    """
    qualname, body = _split_schema(schema, namespace)
    where = _caller_location()
    overload, reused = _define_or_reuse(qualname, body, where)
    record = CustomOp(qualname=qualname, schema=body, overload=overload, reused=reused, where=where)
    for device, fn in (kernels or {}).items():
        _register_kernel(record, device, fn)
    if fake is not None:
        _register_fake(record, fake)
    sample_source = _sample_source(samples)
    record.samples = sample_source
    if converter is not None and CONVERTERS.get(overload) is None:
        register_converter(overload, samples=sample_source)(converter)
    if prototype is not None:
        record.prototype_path = prototype_beside(prototype, where)
        record.prototype = PROTOTYPES.register(load_prototype(record.prototype_path))
    return CUSTOM_OPS.register(record)


def _split_schema(schema: str, namespace: str | None) -> tuple[str, str]:
    schema = schema.strip()
    name_part = schema.split("(", 1)[0]
    if "::" in name_part:
        ns, body = schema.split("::", 1)
    elif namespace:
        ns, body = namespace, schema
    else:
        raise OpDefinitionError(f'schema {schema!r} names no namespace: write "npu::{schema}" or pass namespace=.')
    try:
        torch._C.parse_schema(f"{ns}::{body}")
    except RuntimeError as exc:
        raise OpDefinitionError(f"schema {schema!r} does not parse: {str(exc).splitlines()[0]}. Fix the schema string.") from exc
    return f"{ns}::{body.split('(', 1)[0]}", body


def existing_overload(qualname: str, overload_name: str = "default") -> Any | None:
    """``torch.ops.<ns>.<name>.<overload>`` if the dispatcher knows the op, else None."""
    ns, name = qualname.split("::", 1)
    try:
        return getattr(getattr(getattr(torch.ops, ns), name), overload_name)
    except (AttributeError, RuntimeError):
        return None


def _define_or_reuse(qualname: str, body: str, where: str) -> tuple[Any, bool]:
    existing = existing_overload(qualname)
    if existing is not None:
        ours = torch._C.parse_schema(f"{qualname.split('::')[0]}::{body}")
        if _schema_key(existing._schema) != _schema_key(ours):
            raise OpDefinitionError(
                f"{qualname} already exists with schema `{existing._schema}`, but {where} defines it as `{ours}`. "
                "Use the existing schema, or pick another op name."
            )
        return existing, True
    _library(qualname.split("::")[0]).define(body)
    overload = existing_overload(qualname)
    if overload is None:
        raise OpDefinitionError(f"defining {qualname} did not create torch.ops.{qualname.replace('::', '.')}.default.")
    return overload, False


def _schema_key(schema: Any) -> tuple[Any, ...]:
    args = tuple((str(a.type), a.name, bool(a.alias_info and a.alias_info.is_write), a.kwarg_only) for a in schema.arguments)
    rets = tuple(str(r.type) for r in schema.returns)
    return schema.name, schema.overload_name, args, rets


def _library(namespace: str) -> torch.library.Library:
    lib = _LIBRARIES.get(namespace)
    if lib is None:
        lib = _LIBRARIES[namespace] = torch.library.Library(namespace, "FRAGMENT")
    return lib


def has_kernel(qualname: str, dispatch_key: str) -> bool:
    return bool(torch._C._dispatch_has_kernel_for_dispatch_key(qualname, dispatch_key))


def _register_kernel(record: CustomOp, device: str, fn: Callable[..., Any]) -> None:
    key = DEVICE_KEYS.get(device.lower())
    if key is None:
        raise OpDefinitionError(f"unknown device {device!r} for {record.qualname}; use one of {', '.join(DEVICE_KEYS)}.")
    if has_kernel(record.qualname, key):
        record.kernels[key] = "existing registration (kept)"
        return
    _library(record.namespace).impl(record.name, fn, key)
    record.kernels[key] = _location(fn)


def _register_fake(record: CustomOp, fake: Callable[..., Any]) -> None:
    if has_fake(record.qualname):
        record.fake = "existing registration (kept)"
        return
    _library(record.namespace).impl(record.name, fake, "Meta")
    record.fake = _location(fake)


def has_fake(qualname: str) -> bool:
    """Whether FakeTensor can run the op: a fake impl or a Meta kernel is registered."""
    return singleton.find(qualname).fake_impl.kernel is not None or has_kernel(qualname, "Meta")


def fake_function_site(qualname: str) -> str | None:
    """Where the op's fake function was registered (the ``register_fake`` call, as torch
    records it), or None: the dispatcher records torch's own library as its Meta kernel's site."""
    kernel = singleton.find(qualname).fake_impl.kernel
    return str(kernel.source) if kernel is not None and getattr(kernel, "source", None) else None


def _sample_source(samples: Sequence[Sample] | Callable[[], Sequence[Sample]] | None) -> Callable[[], Sequence[Sample]] | None:
    if samples is None or callable(samples):
        return samples
    fixed = tuple(samples)
    return lambda: fixed


def _location(fn: Callable[..., Any]) -> str:
    try:
        return f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return getattr(fn, "__qualname__", repr(fn))


def prototype_beside(prototype: str | Path, where: str) -> Path:
    """A relative ``prototype`` path is looked up beside the file that calls define_op
    (``where`` is its ``file:line``), as a plugin ships its op's JSON next to it, whatever
    folder fxlab runs in; an absolute path, or a call from no file (a REPL), is kept."""
    path = Path(prototype).expanduser()
    caller = Path(where.rsplit(":", 1)[0])
    if path.is_absolute() or not caller.is_file():
        return path
    return caller.parent / path


def _caller_location() -> str:
    frame = inspect.currentframe()
    try:
        caller = frame.f_back.f_back if frame and frame.f_back else None
        return f"{caller.f_code.co_filename}:{caller.f_lineno}" if caller else "?"
    finally:
        del frame


# Ops defined by plugin files loaded in this process (``fxlab ops list`` lists them);
# fxlab.compat.plugins records them as it loads each file.
_PLUGIN_OPS: list[str] = []


def record_plugin_ops(qualnames: list[str]) -> None:
    _PLUGIN_OPS.extend(q for q in qualnames if q not in _PLUGIN_OPS)


def plugin_defined_ops() -> list[str]:
    return list(_PLUGIN_OPS)
