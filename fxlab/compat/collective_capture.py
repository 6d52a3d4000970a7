"""Collectives as TorchAir captures and converts them, for one block of fxlab's work.

:func:`torchair_collectives` opens, for the block: TorchAir's ``npu_define`` operators
with CPU kernels (:mod:`fxlab.compat.npu_define_ops`), its traceable-collective remaps
(:mod:`fxlab.compat.collective_remaps`), its decomposition of the functional all-to-all
(in the capture's decomposition table) and fxlab's converters of the ``npu_define``
operators. A TorchAir loaded before (``--converter torchair``) keeps its own operators
and remaps; fxlab then adds only the CPU kernels. All of it is undone on exit.

Open it inside a TorchAir session, never around one: TorchAir's modules define the
operators only when absent, and one of them imports a name that exists only then.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from fxlab.capture.stages import COLLECTIVE_DECOMPOSITIONS
from fxlab.compat.collective_remaps import torchair_collective_remaps
from fxlab.compat.npu_define_ops import decompositions, npu_define_operators
from fxlab.passes.converters.collectives import npu_define_converters


@contextlib.contextmanager
def _collective_decompositions() -> Iterator[None]:
    added = {op: fn for op, fn in decompositions().items() if op not in COLLECTIVE_DECOMPOSITIONS}
    COLLECTIVE_DECOMPOSITIONS.update(added)
    try:
        yield
    finally:
        for op in added:
            COLLECTIVE_DECOMPOSITIONS.pop(op, None)


@contextlib.contextmanager
def torchair_collectives() -> Iterator[None]:
    """See the module docstring."""
    with npu_define_operators(), torchair_collective_remaps(), _collective_decompositions(), npu_define_converters():
        yield
