"""Converters of TorchAir's own ``air::`` operators that carry data.

``air::wait_tensor(self, dependency)`` (``torchair.scope.npu_wait_tensor``) becomes an
``Identity`` of ``self`` with a control edge from ``dependency``'s producer, after its data
input, as TorchAir's converter builds it (``scope/_wait_tensor.py``): the op waits for
the dependency, then passes ``self`` on. The operator exists only while defined (by
TorchAir, or by fxlab's compat layer while a model runs), so its converter is kept by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fxlab.ir import ge
from fxlab.passes.converters.registry import NAMED_CONVERTER_LOOKUPS

NAMESPACE = "air"


def convert_wait_tensor(self: ge.Tensor, dependency: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """wait_tensor(Tensor self, Tensor dependency) -> Tensor"""
    identity = ge.op1("Identity", {"x": self})
    identity.op.inputs.append(dependency.controller)
    return identity


AIR_CONVERTERS: dict[str, Callable[..., Any]] = {"wait_tensor.default": convert_wait_tensor}


def converter_by_name(target: Any) -> Callable[..., Any] | None:
    if getattr(target, "namespace", None) != NAMESPACE:
        return None
    return AIR_CONVERTERS.get(f"{target._opname}.{target._overloadname}")


NAMED_CONVERTER_LOOKUPS.append(converter_by_name)
