"""The one registry of Ascend IR converters, keyed by ``OpOverload``.

A converter turns one FX node into GE ops. Its signature mirrors the ATen schema (graph
tensors arrive as :class:`fxlab.ir.ge.Tensor`, scalars and lists as Python values) plus a
keyword ``meta_outputs`` holding the node's fake output, exactly like a TorchAir converter.
Its first docstring line is the schema it implements. Each converter carries sample
inputs beside it so one test can walk the registry and check every converter numerically.

Registering twice for one op is an error naming both places, except that a user (plugin)
converter may replace one fxlab ships: that is how TorchAir plugin files work, and
``fxlab ops list`` shows which one is active.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

ConverterFn = Callable[..., Any]

ORIGIN_FXLAB = "fxlab"
ORIGIN_TORCHAIR = "torchair"  # registered through torchair.register_fx_node_ge_converter
ORIGIN_USER = "user"


@dataclass(frozen=True)
class Sample:
    """One sample call of an op: positional and keyword arguments."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)


SampleSource = Callable[[], Sequence[Sample]]


@dataclass
class Converter:
    target: torch._ops.OpOverload
    fn: ConverterFn
    origin: str = ORIGIN_FXLAB
    samples: SampleSource | None = None
    where: str = ""
    replaced: Converter | None = None

    @property
    def schema_line(self) -> str:
        doc = inspect.getdoc(self.fn) or ""
        return doc.splitlines()[0] if doc else ""


class DuplicateConverterError(ValueError):
    pass


class ConverterRegistry:
    def __init__(self) -> None:
        self._by_target: dict[Any, Converter] = {}

    def register(self, converter: Converter) -> Converter:
        existing = self._by_target.get(converter.target)
        if existing is not None:
            if existing.origin != ORIGIN_FXLAB or converter.origin == ORIGIN_FXLAB:
                raise DuplicateConverterError(
                    f"two converters registered for {converter.target}: one at {existing.where}, "
                    f"another at {converter.where}. Remove one of them (a plugin may replace only "
                    "a converter fxlab ships)."
                )
            converter.replaced = existing
        self._by_target[converter.target] = converter
        return converter

    def unregister(self, target: Any) -> None:
        """Drop the converter for ``target``, restoring the fxlab one it replaced."""
        converter = self._by_target.pop(target, None)
        if converter is not None and converter.replaced is not None:
            self._by_target[target] = converter.replaced

    def get(self, target: Any) -> Converter | None:
        return self._by_target.get(target)

    def __contains__(self, target: Any) -> bool:
        return target in self._by_target

    def __iter__(self) -> Iterator[Converter]:
        return iter(list(self._by_target.values()))

    def __len__(self) -> int:
        return len(self._by_target)


CONVERTERS = ConverterRegistry()

# Lookups for targets without a registered converter, each returning a converter function
# or ``None``; the conversion tries the named ones, then the auto ones, in order.
ConverterLookup = Callable[[Any], "ConverterFn | None"]
# fxlab's own converters by operator name, for operators whose OpOverload objects torch
# may re-create while they are defined (torch_npu's, defined by fxlab).
NAMED_CONVERTER_LOOKUPS: list[ConverterLookup] = []
# TorchAir's auto-converter rules for custom ops (the custom-op kit adds its own here).
AUTO_CONVERTER_LOOKUPS: list[ConverterLookup] = []


def _where(fn: ConverterFn) -> str:
    # The code object knows its file and first line (decorators included, as
    # ``inspect.getsourcelines`` counts), without reading the source: this runs for every
    # converter fxlab registers, at import.
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno}"
    try:
        return f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return getattr(fn, "__qualname__", repr(fn))


def register_converter(
    *targets: Any,
    samples: SampleSource | Sequence[Sample] | None = None,
    origin: str = ORIGIN_FXLAB,
    registry: ConverterRegistry | None = None,
) -> Callable[[ConverterFn], ConverterFn]:
    """Decorator: register ``fn`` as the converter of each of ``targets`` (OpOverloads).

    ``samples`` is a list of :class:`Sample` or a function returning one (tensors are
    then made only when a test asks). Targets that this torch lacks (``None``) are skipped.
    """
    source = samples if samples is None or callable(samples) else (lambda s=tuple(samples): s)

    def decorate(fn: ConverterFn) -> ConverterFn:
        for target in targets:
            if target is None:
                continue
            (CONVERTERS if registry is None else registry).register(
                Converter(target=target, fn=fn, origin=origin, samples=source, where=_where(fn))
            )
        return fn

    return decorate


def overload(qualname: str) -> torch._ops.OpOverload | None:
    """``torch.ops.<ns>.<op>.<overload>`` by name, or ``None`` if this torch lacks it."""
    ns, name, over = qualname.split(".")
    try:
        return getattr(getattr(getattr(torch.ops, ns), name), over)
    except (AttributeError, RuntimeError):
        return None
