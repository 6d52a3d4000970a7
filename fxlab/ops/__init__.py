"""The custom-op kit: the seed ops, a one-place way to define an op, and their prototypes.

Importing this package defines the seed ops ``torch.ops.npu.npu_add_custom``,
``torch.ops.npu.my_op`` and ``torch.ops.npu.my_inplace`` (reusing them when torch_npu
already defines them) together with their converters, prototypes and reference kernels.
The checks behind ``fxlab ops check`` live in :mod:`fxlab.ops.op_check`; a converter that
emits GE ops fxlab has no CPU reference for registers one with :func:`reference_kernel`.
"""

from __future__ import annotations

from fxlab.ops.define import CUSTOM_OPS, CustomOp, OpDefinitionError, define_op
from fxlab.ops.reference import reference_kernel
from fxlab.ops.prototype import PROTOTYPES, Prototype, PrototypeError, camel_case, load_prototype, registered_prototype
from fxlab.ops.seeds import define_seed_ops
from fxlab.ops.inspect_op import registered_ge_prototype
from fxlab.passes.converters.auto import PROTOTYPE_LOOKUPS
from fxlab.passes.converters.registry import Sample

SEED_OPS: dict[str, CustomOp] = define_seed_ops()


def _register_prototype_lookup() -> None:
    """Let TorchAir's auto-converter rules see the prototypes registered here (as CANN's
    op registry would answer)."""
    if registered_ge_prototype not in PROTOTYPE_LOOKUPS:
        PROTOTYPE_LOOKUPS.append(registered_ge_prototype)


_register_prototype_lookup()

__all__ = [
    "CUSTOM_OPS",
    "CustomOp",
    "OpDefinitionError",
    "PROTOTYPES",
    "Prototype",
    "PrototypeError",
    "SEED_OPS",
    "Sample",
    "camel_case",
    "define_op",
    "load_prototype",
    "reference_kernel",
    "registered_prototype",
]
