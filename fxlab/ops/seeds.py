"""The seed ops of the user's documents, in namespace ``npu`` like torch_npu's OpPlugin ops.

- ``npu_add_custom(Tensor x, Tensor y) -> Tensor``: ``x + y`` (seed 003's AddCustom).
  GE op ``AddCustom(x, y) -> z``. Its PyTorch name is not the CamelCase of the GE type
  (``NpuAddCustom``), so TorchAir's auto converter cannot find it: it needs a converter.
- ``my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor``: a fused
  scale-and-accumulate, ``attr1 * x + y + attr2 * sum(z)`` (``y`` absent counts as 0, an
  empty ``z`` sums to 0); the result has ``x``'s shape and dtype. GE op ``MyOp(x, y
  optional, z dynamic; attrs attr1, attr2) -> out``. The scalars rule out the auto converter.
- ``my_inplace(Tensor(a!) x, Tensor y) -> Tensor``: an accumulator update, ``x += y`` in
  place, returning the squared increment ``y * y`` (a new tensor shaped like ``y``).
  GE op ``MyInplace(x, y) -> (x, z)``: ``x`` is the ref output for the mutated input.

Each op has a CPU kernel, a Meta function, a converter, its msOpGen prototype file (in
``prototypes/``) and samples; the GE types get CPU reference kernels for the executor.
Defining them reuses an op torch_npu (or anyone) already defined under the same name.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from fxlab.ir import ge
from fxlab.ir.builder import Tensor
from fxlab.ir.kernels.registry import register_kernel
from fxlab.ir.model import IrOp
from fxlab.ops.define import CustomOp, define_op
from fxlab.passes.converters.registry import Sample

PROTOTYPE_DIR = Path(__file__).parent / "prototypes"


# -- npu_add_custom --------------------------------------------------------------------
def add_custom_cpu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.add(x, y)


def add_custom_meta(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


def convert_add_custom(x: Tensor, y: Tensor, *, meta_outputs: Any = None) -> Tensor:
    """npu::npu_add_custom(Tensor x, Tensor y) -> Tensor"""
    return ge.op("AddCustom", {"x": x, "y": y}, outputs=("z",))[0]


def add_custom_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 3), torch.randn(2, 3))),
        Sample((torch.randn(4, 8, dtype=torch.float16), torch.randn(4, 8, dtype=torch.float16))),
        Sample((torch.randint(-5, 5, (3,), dtype=torch.int32), torch.randint(-5, 5, (3,), dtype=torch.int32))),
    ]


# -- my_op -----------------------------------------------------------------------------
def my_op_cpu(x: torch.Tensor, y: torch.Tensor | None, z: Sequence[torch.Tensor], attr1: float, attr2: int) -> torch.Tensor:
    out = x * attr1
    if y is not None:
        out = out + y
    for item in z:
        out = out + item * attr2
    return out.to(x.dtype)


def my_op_meta(x: torch.Tensor, y: torch.Tensor | None, z: Sequence[torch.Tensor], attr1: float, attr2: int) -> torch.Tensor:
    return torch.empty_like(x)


def convert_my_op(x: Tensor, y: Tensor | None, z: Sequence[Tensor], attr1: float, attr2: int, *, meta_outputs: Any = None) -> Tensor:
    """npu::my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"""
    inputs: dict[str, Tensor | None] = {"x": x, "y": y}
    inputs.update({f"z{i}": t for i, t in enumerate(z)})
    return ge.op("MyOp", inputs, {"attr1": float(attr1), "attr2": int(attr2)}, outputs=("out",))[0]


def my_op_samples() -> list[Sample]:
    x = torch.randn(4, 8)
    return [
        Sample((x, torch.randn(4, 8), [torch.randn(4, 8), torch.randn(4, 8)], 2.0, 5)),
        Sample((x, None, [torch.randn(4, 8)], 0.5, 3)),
    ]


# -- my_inplace ------------------------------------------------------------------------
def my_inplace_cpu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.add_(y)
    return y * y


def my_inplace_meta(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(y)


def convert_my_inplace(x: Tensor, y: Tensor, *, meta_outputs: Any = None) -> Tensor:
    """npu::my_inplace(Tensor(a!) x, Tensor y) -> Tensor"""
    # Output 0 is the ref output for x (same name as the mutated input); z is the op's own.
    ref_x, z = ge.op("MyInplace", {"x": x, "y": y}, outputs=("x", "z"))
    return z


def my_inplace_samples() -> list[Sample]:
    return [
        Sample((torch.randn(2, 3), torch.randn(2, 3))),
        Sample((torch.randn(8), torch.randn(8))),
    ]


# -- CPU reference kernels of the GE ops (for fxlab's executor) --------------------------
@register_kernel("AddCustom")
def _add_custom_kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    return [torch.ops.npu.npu_add_custom.default(inputs[0], inputs[1])]


@register_kernel("MyOp")
def _my_op_kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    names = [d.name for d in op.input_desc]
    x = inputs[names.index("x")]
    y = inputs[names.index("y")] if "y" in names else None
    z = [t for name, t in zip(names, inputs) if name.startswith("z") and name[1:].isdigit()]
    return [torch.ops.npu.my_op.default(x, y, z, float(attrs["attr1"]), int(attrs["attr2"]))]


@register_kernel("MyInplace")
def _my_inplace_kernel(op: IrOp, inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, y = inputs
    z = torch.ops.npu.my_inplace.default(x, y)  # writes x in place: x is the ref output
    return [x, z]


def define_seed_ops() -> dict[str, CustomOp]:
    """Define (or reuse) the three seed ops; called once when :mod:`fxlab.ops` is imported."""
    return {
        "npu_add_custom": define_op(
            "npu::npu_add_custom(Tensor x, Tensor y) -> Tensor",
            kernels={"cpu": add_custom_cpu},
            fake=add_custom_meta,
            converter=convert_add_custom,
            prototype=PROTOTYPE_DIR / "add_custom.json",
            samples=add_custom_samples,
        ),
        "my_op": define_op(
            "npu::my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor",
            kernels={"cpu": my_op_cpu},
            fake=my_op_meta,
            converter=convert_my_op,
            prototype=PROTOTYPE_DIR / "my_op.json",
            samples=my_op_samples,
        ),
        "my_inplace": define_op(
            "npu::my_inplace(Tensor(a!) x, Tensor y) -> Tensor",
            kernels={"cpu": my_inplace_cpu},
            fake=my_inplace_meta,
            converter=convert_my_inplace,
            prototype=PROTOTYPE_DIR / "my_inplace.json",
            samples=my_inplace_samples,
        ),
    }
