"""The stream, event and core-limit calls TorchAir's aclgraph path puts into a graph, as
operators and functions that run on CPU.

In ``reduce-overhead`` / ``npugraph_ex`` mode TorchAir rewrites scope markers into calls an
NPU executes while the ACL graph is captured: events that close a multi-stream region
(``air::tagged_event_record`` / ``air::tagged_event_wait``, ``air::record`` / ``air::wait``
for ``torchair.ops.wait``; the same under ``npugraph_ex::`` for the standalone backend)
and the stream core limits of ``limit_core_num`` (``torch.npu.current_stream()``,
``torch.npu.get_stream_limit(stream)``, ``torch.npu.set_stream_limit(stream, cube,
vector)``). This module defines those operators with kernels that do nothing on CPU (an
event orders streams; on one CPU stream there is nothing to order) when TorchAir has not
defined them, and the three ``torch.npu`` functions as CPU stand-ins that keep the limits
they are given, so a graph after TorchAir's passes runs on CPU. The functions carry
torch_npu's module names, so FX prints a graph calling them exactly as it prints one
calling torch_npu's (``torch_npu_npu_utils_current_stream``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.fx.node import has_side_effect

# The limits a stream starts with when none was set: "no limit" (TorchAir reads 0 as unset).
UNLIMITED = 0


@dataclass
class Stream:
    """A stream as TorchAir's generated code reads it: its id, device and core limits."""

    stream_id: int = 0
    device_index: int = 0
    device_type: int = 20  # PrivateUse1, the NPU's device type in torch_npu
    limits: dict[str, int] = field(default_factory=lambda: {"cube_core_num": UNLIMITED, "vector_core_num": UNLIMITED})


class Event:
    """``torch.npu.Event``: ordering between streams; nothing to order on one CPU stream."""

    def record(self, stream: Any = None) -> None:
        return None

    def wait(self, stream: Any = None) -> None:
        return None


_STATE = threading.local()


def _default_stream() -> Stream:
    if not hasattr(_STATE, "stream"):
        _STATE.stream = Stream()
    return _STATE.stream


def current_stream(device: Any = None) -> Stream:
    """``torch.npu.current_stream()``: on CPU, one stream per thread."""
    return _default_stream()


def set_stream(stream: Stream) -> None:
    """``torch.npu.set_stream(stream)``: the thread's current stream from now on."""
    _STATE.stream = stream


def get_stream_limit(stream: Stream) -> dict[str, int]:
    """``torch.npu.get_stream_limit(stream)``: ``{"cube_core_num", "vector_core_num"}``."""
    return dict(stream.limits)


def set_stream_limit(stream: Stream, cube_core_num: int, vector_core_num: int) -> None:
    """``torch.npu.set_stream_limit(stream, cube, vector)``: the limits ops on the stream get."""
    stream.limits = {"cube_core_num": int(cube_core_num), "vector_core_num": int(vector_core_num)}


def graph_pool_handle() -> tuple[int, int]:
    """``torch.npu.graph_pool_handle()``: a memory pool id (no pool on CPU)."""
    return (0, 1)


# torch_npu's own homes of the three calls, where FX finds their printed names.
current_stream.__module__ = "torch_npu.npu.utils"
set_stream.__module__ = "torch_npu.npu.utils"
get_stream_limit.__module__ = "torch_npu.npu.npu_config"
set_stream_limit.__module__ = "torch_npu.npu.npu_config"
STREAM_CALLS = (current_stream, get_stream_limit, set_stream_limit)


# -- operators ----------------------------------------------------------------------------
_LIBRARIES: dict[str, torch.library.Library] = {}
_NO_TENSOR_KEYS = ("CPU", "Meta", "BackendSelect", "PrivateUse1")


def _library(namespace: str) -> torch.library.Library:
    if namespace not in _LIBRARIES:
        _LIBRARIES[namespace] = torch.library.Library(namespace, "FRAGMENT")
    return _LIBRARIES[namespace]


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


def _empty_record(*, device: Any = None) -> torch.Tensor:
    return torch.empty(0, device="meta")


def _record(*, device: Any = None) -> torch.Tensor:
    """An empty tensor standing for the event (on ``device``: fake tensors pass ``meta``)."""
    return torch.empty(0, device=device)


def _define(namespace: str, schema: str, kernels: dict[str, Any], side_effect: bool = True) -> None:
    name = schema.split("(", 1)[0]
    if hasattr(getattr(torch.ops, namespace), name):
        return  # TorchAir (or npugraph_ex) defined it first: theirs is used
    lib = _library(namespace)
    lib.define(schema)
    for key, kernel in kernels.items():
        lib.impl(name, kernel, key)
    if side_effect:
        has_side_effect(getattr(getattr(torch.ops, namespace), name).default)


_EVENT_SCHEMAS = (
    "tagged_event_record(str tag, bool created_inside=False) -> ()",
    "tagged_event_wait(str tag, bool created_inside=False) -> ()",
    "tagged_event_record_on_stream(str event_tag, str stream_id, str device_index, str device_type, bool created_inside=False) -> ()",
    "tagged_event_wait_on_stream(str event_tag, str stream_id, str device_index, str device_type, bool created_inside=False) -> ()",
    "tagged_stream_wait_stream(str stream_id, str device_index, str device_type, str other_stream_id, str other_device_index, str other_device_type) -> ()",
)


def _define_all() -> None:
    for namespace in ("air", "npugraph_ex"):
        for schema in _EVENT_SCHEMAS:
            _define(namespace, schema, dict.fromkeys(_NO_TENSOR_KEYS, _nothing))
        _define(namespace, "record(*, Device? device=None) -> Tensor", {"BackendSelect": _record, "Meta": _empty_record}, side_effect=False)
        _define(namespace, "wait(Tensor[] x) -> ()", {"CPU": _nothing, "Meta": _nothing, "BackendSelect": _nothing})


_define_all()


# -- the deterministic level (torch_npu.npu), set by npugraph_ex's deterministic scopes ------
def get_deterministic_level() -> int:
    """``torch_npu.npu._get_deterministic_level()``: on CPU, torch's own switch."""
    if hasattr(_STATE, "deterministic_level"):
        return int(_STATE.deterministic_level)
    return 1 if torch.are_deterministic_algorithms_enabled() else 0


def set_deterministic_level(level: int) -> None:
    """``torch_npu.npu.set_deterministic_level(level)``."""
    _STATE.deterministic_level = int(level)


get_deterministic_level.__name__ = get_deterministic_level.__qualname__ = "_get_deterministic_level"
get_deterministic_level.__module__ = "torch_npu.npu"
set_deterministic_level.__module__ = "torch_npu.npu"
