"""TorchAir's graph-only operators, given their eager meaning while fxlab runs a model.

A few of TorchAir's operators mean something only inside a compiled graph, and their
eager kernels raise: ``air::wait_tensor`` (``torchair.scope.npu_wait_tensor(x, dep)``,
which TorchAir converts to a GE ``Identity`` of ``x`` with a control edge from ``dep``)
says "kernel_impl is not implemented! npu_wait_tensor is not support in this mode" on CPU
and NPU alike. fxlab runs every model eagerly for its reference run, so while a
compat-layer block is open each gets the meaning it has in the graph:

- ``wait_tensor(Tensor self, Tensor dependency) -> Tensor``: a copy of ``self``. On one
  CPU stream there is nothing to wait for; the schema has no alias annotation, so the
  result is a new tensor, as the GE ``Identity``'s output is (writing into it in place
  leaves ``self`` as it was, in eager as in the graph).

TorchAir's aclgraph path (reduce-overhead, npugraph_ex) runs the graph's operators on the
NPU while it captures the ACL graph, and there ``air::wait_tensor``'s kernel raises: the
aclgraph check runs the graph as the capture would (:meth:`GraphOnlyOps.as_captured`,
registered in :data:`fxlab.npu_streams.CAPTURE_KERNELS`) and says so. Where TorchAir's
sources are loaded, its own NPU kernel is run for that, and its message quoted.

Where TorchAir defined the operator (its own sources are loaded), only its CPU kernel is
overridden for the block; its schema, Meta function and converter stay TorchAir's. Where
fxlab stands in for TorchAir, fxlab defines the operator with TorchAir's schema and Meta
function (the Meta returns ``self``, as TorchAir's does, so the traced graphs are
TorchAir's). Both are undone when the block closes (the definition with it), so TorchAir's
sources can define the operator later in the same process. A real TorchAir installed but
not yet imported when the block opens keeps its own kernels.
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Iterator
from typing import Any

import torch

from fxlab import npu_streams
from fxlab.compat.torchair_state import destroy_library
from fxlab.npu_streams import CaptureStops

NAMESPACE = "air"
WAIT_TENSOR = "wait_tensor"
WAIT_TENSOR_SCHEMA = "wait_tensor(Tensor self, Tensor dependency) -> Tensor"
# The module of TorchAir's that defines air::wait_tensor, imported by its npu_wait_tensor
# on first call; imported here first when TorchAir's own package is loaded, so that the
# block can give its CPU kernel the eager meaning before the model runs.
TORCHAIR_WAIT_TENSOR_MODULE = "torchair.scope._wait_tensor"
TORCHAIR_WAIT_TENSOR_FILE = "torchair/scope/_wait_tensor.py"
# What TorchAir 2.13's CPU and NPU kernels of the operator raise (the same function).
TORCHAIR_WAIT_TENSOR_ERROR = "torch.ops.air.wait_tensor kernel_impl is not implemented! npu_wait_tensor is not support in this mode."


def wait_tensor_eager(self: torch.Tensor, dependency: torch.Tensor) -> torch.Tensor:
    """``air::wait_tensor`` on CPU: nothing to wait for; a new tensor equal to ``self``."""
    return self.clone()


def wait_tensor_meta(self: torch.Tensor, dependency: torch.Tensor) -> torch.Tensor:
    """TorchAir's Meta function of ``air::wait_tensor``: ``self`` itself."""
    return self


def is_defined() -> bool:
    return hasattr(getattr(torch.ops, NAMESPACE), WAIT_TENSOR)


class GraphOnlyOps:
    """What one compat-layer block registered to run graph-only operators eagerly."""

    def __init__(self) -> None:
        self.library: torch.library.Library | None = None
        self.torchairs_kernels = False  # TorchAir defined the operator (its NPU kernel is there to run)

    def ensure_eager_wait_tensor(self) -> None:
        """``air::wait_tensor`` with the eager CPU kernel for the rest of the block:
        fxlab's definition where nobody defined it, else an override of its CPU kernel."""
        if self.library is None:
            self.torchairs_kernels = is_defined()
            self.library = _cpu_override(wait_tensor_eager) if self.torchairs_kernels else _own_definition()

    @contextlib.contextmanager
    def as_captured(self) -> Iterator[None]:
        """For the block, ``air::wait_tensor`` does what it does while TorchAir captures an
        ACL graph on the NPU: its NPU kernel raises, and the capture stops
        (:class:`~fxlab.npu_streams.CaptureStops`). Where TorchAir's own kernel is
        registered, it is the one run, and its message is quoted."""
        if self.library is None:
            yield
            return
        library = _cpu_override(self._wait_tensor_as_captured)
        try:
            yield
        finally:
            destroy_library(library)

    def _wait_tensor_as_captured(self, self_: torch.Tensor, dependency: torch.Tensor) -> torch.Tensor:
        if not self.torchairs_kernels:
            raise CaptureStops(capture_stops_message(TORCHAIR_WAIT_TENSOR_ERROR, f"TorchAir 2.13's {TORCHAIR_WAIT_TENSOR_FILE}"))
        npu_kernel = torch._C.DispatchKeySet(torch._C.DispatchKey.PrivateUse1)
        try:
            return torch.ops.air.wait_tensor.default.redispatch(npu_kernel, self_, dependency)
        except NotImplementedError as exc:
            raise CaptureStops(capture_stops_message(str(exc), "TorchAir's own NPU kernel, run here")) from exc

    def close(self) -> None:
        if self.library is not None:
            destroy_library(self.library)
            self.library = None


@contextlib.contextmanager
def eager_graph_only_ops(torchair_is_real: bool, torchair_stood_in: bool) -> Iterator[GraphOnlyOps]:
    """For the block, graph-only operators run eagerly on CPU (see the module docstring).
    ``torchair_is_real``: TorchAir's own package is loaded (a real install, or its sources
    loaded by fxlab's bridge): its module defining ``air::wait_tensor`` is imported now and
    the operator's CPU kernel overridden. ``torchair_stood_in``: fxlab's stand-in answers
    ``import torchair``, and fxlab defines the operator now."""
    ops = GraphOnlyOps()
    npu_streams.CAPTURE_KERNELS.append(ops.as_captured)
    if torchair_is_real:
        with contextlib.suppress(ImportError):
            importlib.import_module(TORCHAIR_WAIT_TENSOR_MODULE)
    if torchair_is_real and is_defined() or torchair_stood_in:
        ops.ensure_eager_wait_tensor()
    try:
        yield ops
    finally:
        npu_streams.CAPTURE_KERNELS.remove(ops.as_captured)
        ops.close()


def capture_stops_message(said: str, whose: str) -> str:
    return (
        f"TorchAir's capture of the ACL graph stops at air::wait_tensor (torchair.scope.npu_wait_tensor): its NPU kernel "
        f'raises "{said}" ({whose}). npu_wait_tensor works in max-autotune (GE) mode only: leave it out of the graphs of '
        "reduce-overhead / npugraph_ex (serving code's wrappers take enabled=False there), or order the streams with "
        "torchair.ops.wait / record"
    )


def _own_definition() -> torch.library.Library:
    """fxlab's ``air::wait_tensor`` (TorchAir's schema and Meta, the eager CPU kernel)."""
    library = torch.library.Library(NAMESPACE, "FRAGMENT")
    library.define(WAIT_TENSOR_SCHEMA)
    library.impl(WAIT_TENSOR, wait_tensor_meta, "Meta")
    library.impl(WAIT_TENSOR, wait_tensor_eager, "CPU")
    return library


def _cpu_override(kernel: Any) -> torch.library.Library:
    """``kernel`` over the operator's CPU kernel, until the library is destroyed."""
    library = torch.library.Library(NAMESPACE, "IMPL")
    with warnings.catch_warnings():
        # torch warns that a kernel is overridden: that is the point, and it is undone.
        warnings.simplefilter("ignore")
        library.impl(WAIT_TENSOR, kernel, "CPU")
    return library
