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

The streams and events are also what a script written for an NPU gets from ``torch.npu``
when fxlab runs it on CPU (:mod:`fxlab.compat.npu_device`): ``Stream``, ``Event``,
``stream(s)``, ``set_stream``, ``current_stream``, ``default_stream``. The CPU runs every
op in order, so waits, records and synchronizes have nothing to order and return at
once; what the script computes is what its streams would compute.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.fx.node import has_side_effect

# The limits a stream starts with when none was set: "no limit" (TorchAir reads 0 as unset).
UNLIMITED = 0
NPU_DEVICE_TYPE = 20  # PrivateUse1, the NPU's device type in torch_npu


class Stream(torch.Stream):
    """``torch.npu.Stream`` on CPU: its id, device and core limits, as TorchAir's generated
    code reads them. Everything runs in order on the CPU, so a wait or a synchronize has
    nothing to wait for: it returns at once, and what the script computes is unchanged.
    A ``torch.Stream`` (of the CPU), so that ``tensor.record_stream(s)`` takes it."""

    _next_id = itertools.count(1)

    def __new__(cls, *args: Any, **kwargs: Any) -> Stream:
        return super().__new__(cls, device="cpu")

    def __init__(
        self,
        device: Any = None,
        priority: int = 0,
        *,
        stream_id: int | None = None,
        device_index: int = 0,
        device_type: int = NPU_DEVICE_TYPE,
    ) -> None:
        self._ids = (next(Stream._next_id) if stream_id is None else int(stream_id), int(device_index), int(device_type))
        self.priority = int(priority)
        self.limits = {"cube_core_num": UNLIMITED, "vector_core_num": UNLIMITED}

    # torch.Stream's own read-only fields describe the CPU stream beneath; these are the NPU's.
    @property
    def stream_id(self) -> int:  # type: ignore[override]
        return self._ids[0]

    @property
    def device_index(self) -> int:  # type: ignore[override]
        return self._ids[1]

    @property
    def device_type(self) -> int:  # type: ignore[override]
        return self._ids[2]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and self._ids == other._ids

    def __ne__(self, other: object) -> bool:  # torch.Stream's own compares the CPU stream beneath
        return not self == other

    def __hash__(self) -> int:
        return hash(self._ids)

    def __repr__(self) -> str:
        return f"Stream(stream_id={self.stream_id}, device_index={self.device_index}, device_type={self.device_type})"

    def wait_event(self, event: Any) -> None:
        return None

    def wait_stream(self, stream: Any) -> None:
        return None

    def record_event(self, event: Any = None) -> Any:
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None


class Event:
    """``torch.npu.Event`` on CPU: ordering between streams, with nothing to order on one
    CPU stream; with ``enable_timing`` it keeps the time it was recorded, so
    ``elapsed_time`` gives the milliseconds between two records, as on a device."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.enable_timing = enable_timing
        self.recorded_at: float | None = None

    def record(self, stream: Any = None) -> None:
        # Dynamo cannot trace a clock: read it only in eager code, so a record inside a
        # compiled forward does not split its graph (there is nothing to time on the CPU).
        if not torch.compiler.is_compiling():
            self.recorded_at = time.perf_counter()

    def wait(self, stream: Any = None) -> None:
        return None

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event's record to ``end_event``'s."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self.recorded_at is None or end_event.recorded_at is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event.recorded_at - self.recorded_at) * 1000.0


_STATE = threading.local()


def default_stream(device: Any = None) -> Stream:
    """``torch.npu.default_stream()``: stream 0 of this thread."""
    if not hasattr(_STATE, "default"):
        _STATE.default = Stream(stream_id=0)
    return _STATE.default


def current_stream(device: Any = None) -> Stream:
    """``torch.npu.current_stream()``: the stream set last on this thread (the default one
    until ``torch.npu.stream(s)`` / ``set_stream(s)``)."""
    return getattr(_STATE, "current", None) or default_stream()


def set_stream(stream: Stream | None) -> None:
    """``torch.npu.set_stream(stream)``."""
    if stream is not None:
        _STATE.current = stream


class StreamContext:
    """``torch.npu.stream(s)`` / ``torch.npu.StreamContext(s)``: ``s`` is the current
    stream inside the block (``None`` changes nothing)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.previous: Stream | None = None

    def __enter__(self) -> Stream | None:
        self.previous = current_stream()
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc_info: object) -> None:
        if self.previous is not None:
            _STATE.current = self.previous


def stream(stream: Stream | None) -> StreamContext:
    return StreamContext(stream)


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


# -- what an operator does while TorchAir captures the ACL graph --------------------------------
class CaptureStops(RuntimeError):
    """An operator of an aclgraph graph whose NPU kernel raises: TorchAir's capture of the
    ACL graph stops there (``air::wait_tensor``'s does). The message says which and why."""


# Context managers that give operators, for the block, what their NPU kernels do while the
# ACL graph is captured, where that differs from their eager meaning on CPU; registered by
# whoever gave them that eager meaning (fxlab.compat, while a block is open).
CAPTURE_KERNELS: list[Callable[[], contextlib.AbstractContextManager[Any]]] = []


@contextlib.contextmanager
def as_captured() -> Iterator[None]:
    """Every operator as the ACL graph's capture on the NPU runs it, for the block."""
    with contextlib.ExitStack() as stack:
        for kernels in list(CAPTURE_KERNELS):
            stack.enter_context(kernels())
        yield
