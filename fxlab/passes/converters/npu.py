"""Converters of torch_npu's common operators, making the GE ops TorchAir makes for them.

torch_npu's operators (``torch.ops.npu.*``) exist only while they are defined: by a real
torch_npu, or by fxlab from a torch_npu copy (``fxlab.compat.torch_npu_ops``). So these
converters are kept by operator name and registered for the live operators by
:func:`npu_converters`, for as long as the operators are defined; a converter a plugin
registers for the same operator replaces fxlab's, as for any other.

The GE op types, input names and attrs are those of TorchAir's converters in
``ge_converter/custom/`` (torch_npu 2.13.0): ``npu_rms_norm`` → ``RmsNorm``,
``npu_add_rms_norm`` → ``AddRmsNorm``, ``npu_swiglu`` → ``SwiGlu``,
``npu_scatter_nd_update`` → ``TensorMove`` + ``ScatterNdUpdate`` (the in-place form
without the move), ``npu_moe_gating_top_k_softmax`` → ``MoeGatingTopKSoftmax``, ``npu_dynamic_quant``
(per token, no int4) → ``DynamicQuant``. The reference kernels of these GE ops are in
``fxlab.ir.kernels.npu``. The other families have their own modules
(``npu_attention``, ``npu_rope``, ``npu_kv_cache``, ...), registered here by name with
:func:`npu_converter`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch

from fxlab.ir import ge
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


# -- normalisation and activations ----------------------------------------------------------
@npu_converter(
    "npu_rms_norm.default", lambda: [Sample((torch.randn(2, 3, 8), torch.randn(8))), Sample((torch.randn(4, 16), torch.randn(16), 1e-2))]
)
def convert_rms_norm(self: ge.Tensor, gamma: ge.Tensor, epsilon: float = 1e-6, *, meta_outputs: Any = None) -> list[ge.Tensor]:
    """npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)"""
    return ge.op("RmsNorm", {"x": self, "gamma": gamma}, {"epsilon": float(epsilon)}, outputs=("y", "rstd"))


@npu_converter("npu_add_rms_norm.default", lambda: [Sample((torch.randn(2, 3, 8), torch.randn(2, 3, 8), torch.randn(8)))])
def convert_add_rms_norm(
    x1: ge.Tensor, x2: ge.Tensor, gamma: ge.Tensor, epsilon: float = 1e-6, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_add_rms_norm(Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor, Tensor)"""
    return ge.op("AddRmsNorm", {"x1": x1, "x2": x2, "gamma": gamma}, {"epsilon": float(epsilon)}, outputs=("y", "rstd", "x"))


@npu_converter("npu_swiglu.default", lambda: [Sample((torch.randn(2, 8),)), Sample((torch.randn(4, 6, 3), 1))])
def convert_swiglu(self: ge.Tensor, dim: int = -1, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_swiglu(Tensor self, int dim=-1) -> Tensor"""
    return ge.op1("SwiGlu", {"x": self}, {"dim": int(dim)})


# -- KV-cache writes ---------------------------------------------------------------------------
def _scatter_samples() -> list[Sample]:
    return [Sample((torch.zeros(2, 6, 4), torch.tensor([[[0, 1]], [[1, 3]]]), torch.randn(2, 1, 4)))]


@npu_converter("npu_scatter_nd_update.default", _scatter_samples)
def convert_scatter_nd_update(self: ge.Tensor, indices: ge.Tensor, updates: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_scatter_nd_update(Tensor self, Tensor indices, Tensor updates) -> Tensor"""
    moved = ge.op1("TensorMove", {"x": self})
    return ge.op("ScatterNdUpdate", {"var": moved, "indices": indices, "updates": updates}, {"use_locking": False}, outputs=("var",))[0]


@npu_converter("npu_scatter_nd_update_.default")
def convert_scatter_nd_update_(self: ge.Tensor, indices: ge.Tensor, updates: ge.Tensor, *, meta_outputs: Any = None) -> ge.Tensor:
    """npu_scatter_nd_update_(Tensor(a!) self, Tensor indices, Tensor updates) -> Tensor(a!)"""
    return ge.op("ScatterNdUpdate", {"var": self, "indices": indices, "updates": updates}, {"use_locking": False}, outputs=("var",))[0]


# -- MoE and quantisation -----------------------------------------------------------------------
@npu_converter(
    "npu_moe_gating_top_k_softmax.default",
    lambda: [Sample((torch.randn(5, 8),), {"k": 2}), Sample((torch.randn(3, 4), torch.tensor([False, True, False]), 1))],
)
def convert_moe_gating_top_k_softmax(
    x: ge.Tensor, finished: ge.Tensor | None = None, k: int = 1, *, meta_outputs: Any = None
) -> list[ge.Tensor]:
    """npu_moe_gating_top_k_softmax(Tensor x, Tensor? finished=None, int k=1) -> (Tensor, Tensor, Tensor)"""
    return ge.op("MoeGatingTopKSoftmax", {"x": x, "finished": finished}, {"k": int(k)}, outputs=("y", "expert_idx", "row_idx"))


@npu_converter(
    "npu_dynamic_quant.default",
    lambda: [Sample((torch.randn(3, 16),)), Sample((torch.randn(2, 3, 8),), {"smooth_scales": torch.rand(8) + 0.5})],
)
def convert_dynamic_quant(
    input: ge.Tensor,
    *,
    smooth_scales: ge.Tensor | None = None,
    group_index: ge.Tensor | None = None,
    dst_type: int | None = None,
    quant_mode: str = "pertoken",
    dst_type_max: float = 0.0,
    meta_outputs: Any = None,
) -> list[ge.Tensor]:
    """npu_dynamic_quant(Tensor input, *, Tensor? smooth_scales=None, Tensor? group_index=None, int? dst_type=None, str quant_mode="pertoken", float dst_type_max=0.0) -> (Tensor, Tensor)"""
    if dst_type not in (None, 1) or quant_mode != "pertoken":
        raise NotImplementedError("npu_dynamic_quant: only per-token int8 has fxlab's converter; use --converter torchair for the others")
    # TorchAir's op wrapper leaves out absent optional inputs and attrs at their IR default
    # (dst_type DT_INT8 here), so neither is written.
    inputs = {"x": input, "smooth_scales": smooth_scales, "group_index": group_index}
    while inputs[next(reversed(inputs))] is None:
        inputs.popitem()
    return ge.op("DynamicQuant", inputs, {}, outputs=("y", "scale"))
