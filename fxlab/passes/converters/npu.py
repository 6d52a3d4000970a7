"""The registry of the converters of torch_npu's operators.

torch_npu's operators (``torch.ops.npu.*``) exist only while they are defined: by a real
torch_npu, or by fxlab from a torch_npu copy (``fxlab.compat.torch_npu_ops``). So their
converters are kept by operator name (:func:`npu_converter`) and registered for the live
operators by :func:`npu_converters`, for as long as the operators are defined; a
converter a plugin registers for the same operator replaces fxlab's, as for any other.

The GE op types, input names and attrs are those of TorchAir's converters in
``ge_converter/custom/`` (torch_npu 2.13.0). Each family lives in a module of its own,
registered here by name with :func:`npu_converter`: ``npu_moe``, ``npu_quant``,
``npu_block_quant``, ``npu_norm``, ``npu_activation``, ``npu_scatter``, ``npu_cast``,
``npu_matmul``, ``npu_grouped_matmul``, ``npu_attention``, ``npu_flash_attention``,
``npu_rope``, ``npu_kv_cache``, ``npu_mla``, ``npu_sparse_attention``,
``npu_linear_attention``, ``npu_comm_matmul``, ``npu_moe_comm``, ``npu_afd``; what
TorchAir's op builders do is in ``npu_builders``. The reference kernels of their GE ops
are in ``fxlab.ir.kernels.npu_<family>``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch

from fxlab.passes.converters.registry import CONVERTERS, NAMED_CONVERTER_LOOKUPS, ORIGIN_FXLAB, Converter, Sample
from fxlab.passes.torchair_refusals import TORCH_NPU_OPERATORS


# operator name ("npu_rms_norm.default") -> (converter, its samples)
NPU_CONVERTERS: dict[str, tuple[Callable[..., Any], Callable[[], list[Sample]] | None]] = {}


def npu_converter(name: str, samples: Callable[[], list[Sample]] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in NPU_CONVERTERS:
            raise ValueError(f"two fxlab converters for npu::{name}")
        NPU_CONVERTERS[name] = (fn, samples)
        TORCH_NPU_OPERATORS.add(name.split(".", 1)[0])
        return fn

    return decorate


def _live(name: str) -> torch._ops.OpOverload | None:
    op, _, overload = name.partition(".")
    try:
        return getattr(getattr(torch.ops.npu, op), overload)
    except (AttributeError, RuntimeError):
        return None


def converter_by_name(target: Any) -> Callable[..., Any] | None:
    """fxlab's converter of a torch_npu operator, by its name: torch re-creates an
    operator's OpOverload when its namespace gains definitions (TorchAir's, a plugin's),
    so the object registered may no longer be the one a graph holds."""
    if getattr(target, "namespace", None) != "npu":
        return None
    entry = NPU_CONVERTERS.get(f"{target._opname}.{target._overloadname}")
    return entry[0] if entry is not None else None


NAMED_CONVERTER_LOOKUPS.append(converter_by_name)


@contextlib.contextmanager
def npu_converters() -> Iterator[list[str]]:
    """Register the converters of the torch_npu operators defined now; unregistered on exit."""
    registered = []
    for name, (fn, samples) in NPU_CONVERTERS.items():
        target = _live(name)
        if target is None or target in CONVERTERS:
            continue
        CONVERTERS.register(Converter(target=target, fn=fn, origin=ORIGIN_FXLAB, samples=samples, where=f"{__name__}:{fn.__name__}"))
        registered.append(target)
    try:
        yield [str(t) for t in registered]
    finally:
        for target in registered:
            converter = CONVERTERS.get(target)
            if converter is not None and converter.origin == ORIGIN_FXLAB:
                CONVERTERS.unregister(target)
