"""``torch.npu`` (``torch_npu.npu``) on the CPU that stands in for the NPU.

What a script written for an NPU calls, with the meaning it keeps on one CPU:

- devices: ``is_available()`` is True and ``device_count()`` the local ranks
  (``LOCAL_WORLD_SIZE``, else ``FXLAB_NPUS``, which ``fxlab run --npus`` sets, else 1): every
  ``npu:N`` is the CPU. ``set_device`` /
  ``current_device`` / ``device(i)`` keep the index the script chose; the device's name is
  the SoC fxlab stands in for (:data:`DEFAULT_SOC`), its memory the host's.
- streams and events (:mod:`fxlab.npu_streams`): the CPU runs every op in order, so
  ``synchronize``, waits and records return at once, and events time what ran between
  their records.
- random numbers: npu tensors are CPU tensors and draw from the CPU generator, so
  ``manual_seed`` and the RNG state calls act on it.
- memory statistics are 0 and ``empty_cache`` frees nothing: the CPU has no device
  allocator to count or empty.
- the NPU runtime's settings (``set_option``, ``set_compile_mode``, HF32 switches, dumps,
  stream and device core limits, ...) are kept and change nothing the CPU computes.

What only an NPU can do (capturing an ACL graph, raw device pointers, external streams,
the overflow flag, device recovery, ...) raises :class:`~fxlab.errors.NpuNotEmulated`
naming the call and the script's line. :func:`npu_module` builds the module: every public
name of torch_npu 2.13's ``torch_npu.npu`` is in it, as one or the other.
"""

from __future__ import annotations

import os
import threading
import traceback
import types
from collections.abc import Callable
from typing import Any

import torch

from fxlab import npu_streams
from fxlab.compat.native_standins.torch_npu_runtime import DEFAULT_SOC
from fxlab.errors import NpuNotEmulated
from fxlab.source_lines import TORCH, USER, is_fxlab_file, kind

MODULE_NAME = "torch.npu"
NPUS_VARIABLE = "FXLAB_NPUS"  # how many NPUs a program run stands in for (fxlab run --npus)

# What each call that only an NPU can make needs, by name (the error says it).
NEEDS_AN_NPU = {
    "NPUGraph": "capturing and replaying an ACL graph",
    "graph": "capturing an ACL graph",
    "make_graphed_callables": "capturing ACL graphs",
    "graph_task_group_begin": "updating a captured ACL graph",
    "graph_task_group_end": "updating a captured ACL graph",
    "graph_task_update_begin": "updating a captured ACL graph",
    "graph_task_update_end": "updating a captured ACL graph",
    "super_kernel_scope_begin": "a SuperKernel scope in a captured ACL graph",
    "super_kernel_scope_end": "a SuperKernel scope in a captured ACL graph",
    "NpuGraphOpHandler": "an operator handler of captured ACL graphs",
    "register_npu_graph_handler": "an operator handler of captured ACL graphs",
    "ExternalStream": "a stream made outside torch_npu",
    "ExternalEvent": "an event made outside torch_npu",
    "SyncLaunchStream": "a synchronous-launch NPU stream",
    "caching_allocator_alloc": "raw device memory",
    "caching_allocator_delete": "raw device memory",
    "MemPool": "a device memory pool",
    "use_mem_pool": "a device memory pool",
    "NPUPluggableAllocator": "a device allocator",
    "change_current_allocator": "a device allocator",
    "get_allocator_backend": "the device allocator",
    "get_device_capability": "the device's capability",
    "utilization": "the device's utilisation",
    "current_blas_handle": "the device's BLAS handle",
    "get_npu_overflow_flag": "the NPU's floating-point overflow flag",
    "clear_npu_overflow_flag": "the NPU's floating-point overflow flag",
    "stress_detect": "an NPU hardware stress test",
    "check_uce_in_memory": "device memory error reports",
    "stop_device": "stopping the device",
    "restart_device": "restarting the device",
    "enable_deterministic_with_backward": "the NPU's deterministic backward",
    "disable_deterministic_with_backward": "the NPU's deterministic backward",
    "obfuscation_initialize": "the NPU's model obfuscation",
    "obfuscation_finalize": "the NPU's model obfuscation",
    "obfuscation_calculate": "the NPU's model obfuscation",
    "npurt": "the NPU runtime's own API",
}


def script_line(frames: list[traceback.FrameSummary] | None = None) -> str:
    """``file, line N`` of the innermost frame of the user's code (not fxlab's, torch's or
    an installed library's), else the innermost frame outside fxlab and torch; of the
    stack here, or of ``frames`` (an exception's traceback)."""
    stack = [f for f in (traceback.extract_stack()[:-1] if frames is None else frames) if not f.filename.startswith("<")]
    outside = [f for f in stack if not is_fxlab_file(f.filename) and kind(f.filename) != TORCH]
    users = [f for f in outside if kind(f.filename) == USER]
    chosen = users or outside or stack
    return f"{chosen[-1].filename}, line {chosen[-1].lineno}" if chosen else "an unknown line"


def not_emulated(call: str, needs: str) -> NpuNotEmulated:
    return NpuNotEmulated(
        f"{call} ({script_line()}) needs {needs}, which the CPU standing in for the NPU cannot give: fxlab runs the script "
        "on the CPU because this machine has no NPU. Run the script on an NPU machine, or leave the call out of runs without one."
    )


def _needs_an_npu(name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        raise not_emulated(f"{MODULE_NAME}.{name}", NEEDS_AN_NPU[name])

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``{MODULE_NAME}.{name}``: needs {NEEDS_AN_NPU[name]}; raises on the CPU."
    return call


# -- devices ----------------------------------------------------------------------------------
class _DeviceState(threading.local):
    def __init__(self) -> None:
        self.index = 0


_DEVICE = _DeviceState()
SETTINGS: dict[str, Any] = {}  # the runtime settings a script made (kept, changing nothing)


def reset() -> None:
    """Forget the device index and settings a script chose (a new block starts afresh)."""
    _DEVICE.index = 0
    SETTINGS.clear()


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def init() -> None:
    return None


def device_count() -> int:
    """One NPU per local rank (``LOCAL_WORLD_SIZE``, as torchrun sets it), else the NPUs of
    the machine a program run stands in for (``FXLAB_NPUS``: ``fxlab run --npus``), else one."""
    try:
        return max(1, int(os.environ.get("LOCAL_WORLD_SIZE") or os.environ.get(NPUS_VARIABLE) or "1"))
    except ValueError:
        return 1


def device_index(device: Any) -> int:
    """The index of ``npu:N`` / ``N`` / a device (the CPU's stands for the current one)."""
    if device is None:
        return _DEVICE.index
    if isinstance(device, str):
        _, _, index = device.partition(":")
        return int(index) if index else _DEVICE.index
    if isinstance(device, torch.device):
        return device.index if device.index is not None and device.type != "cpu" else _DEVICE.index
    return int(device)


def set_device(device: Any) -> None:
    index = device_index(device)
    if not 0 <= index < device_count():
        raise NpuNotEmulated(
            f"torch.npu.set_device({device!r}) ({script_line()}): the CPU stands in for {device_count()} NPU(s) here "
            f"(one per local rank, from LOCAL_WORLD_SIZE, else {NPUS_VARIABLE}: fxlab run --npus N), so the device index must be below that."
        )
    _DEVICE.index = index


def current_device() -> int:
    return _DEVICE.index


class device:  # noqa: N801 - torch.npu.device's name
    """``with torch.npu.device(i):`` makes ``i`` the current device inside the block."""

    def __init__(self, device: Any) -> None:
        self.index = -1 if device is None else device_index(device)
        self.previous = -1

    def __enter__(self) -> None:
        if self.index >= 0:
            self.previous, _DEVICE.index = _DEVICE.index, self.index

    def __exit__(self, *exc_info: object) -> None:
        if self.previous >= 0:
            _DEVICE.index = self.previous


class device_of(device):  # noqa: N801
    """``with torch.npu.device_of(tensor):`` the tensor's device (every npu tensor is on the CPU)."""

    def __init__(self, obj: Any) -> None:
        super().__init__(None)


def can_device_access_peer(device_id: int, peer_device_id: int) -> bool:
    return True  # every npu:N is the one CPU


def get_device_name(device: Any = None) -> str:
    """The SoC fxlab stands in for (its conversions and core limits assume it)."""
    return DEFAULT_SOC


def _host_memory() -> tuple[int, int]:
    """(free, total) bytes of the host's memory."""
    page = os.sysconf("SC_PAGE_SIZE")
    return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page


def get_device_properties(device: Any = None) -> types.SimpleNamespace:
    return types.SimpleNamespace(name=DEFAULT_SOC, total_memory=_host_memory()[1], cube_core_num=0, vector_core_num=0, L2_cache_size=0)


def mem_get_info(device: Any = None) -> tuple[int, int]:
    return _host_memory()


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: every op ran when it was called."""
    return None


def is_bf16_supported(including_emulation: bool = False) -> bool:
    return True


def is_current_stream_capturing() -> bool:
    return False  # no ACL graph is ever captured here


# -- random numbers: the CPU generator the npu tensors draw from ------------------------------------
def manual_seed(seed: int) -> None:
    torch.manual_seed(seed)


def seed() -> None:
    torch.seed()


def initial_seed() -> int:
    return torch.initial_seed()


def get_rng_state(device: Any = "npu") -> torch.Tensor:
    return torch.get_rng_state()


def set_rng_state(new_state: torch.Tensor, device: Any = "npu") -> None:
    torch.set_rng_state(new_state)


def get_rng_state_all() -> list[torch.Tensor]:
    return [torch.get_rng_state() for _ in range(device_count())]


def set_rng_state_all(new_states: list[torch.Tensor]) -> None:
    for state in new_states[:1]:
        torch.set_rng_state(state)


# -- memory: no device allocator, nothing counted -----------------------------------------------
def _zero(device: Any = None) -> int:
    return 0


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


def _no_stats(device: Any = None) -> dict[str, Any]:
    return {}


def memory_snapshot(mempool_id: Any = None) -> list[Any]:
    return []


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    return "fxlab runs this script on the CPU: there is no NPU memory allocator, so no NPU memory is counted."


def get_per_process_memory_fraction(device: Any = None) -> float:
    return float(SETTINGS.get("memory_fraction", 1.0))


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    SETTINGS["memory_fraction"] = float(fraction)


MEMORY_COUNTS = ("memory_allocated max_memory_allocated memory_reserved max_memory_reserved memory_cached max_memory_cached").split()
MEMORY_RESETS = (
    "empty_cache empty_virt_addr_cache host_empty_cache reset_accumulated_memory_stats reset_peak_memory_stats "
    "reset_max_memory_allocated reset_max_memory_cached reset_accumulated_host_memory_stats reset_peak_host_memory_stats ipc_collect"
).split()
MEMORY_STATS = "memory_stats memory_stats_as_nested_dict host_memory_stats host_memory_stats_as_nested_dict".split()


# -- the runtime's settings: kept, changing nothing the CPU computes -----------------------------------
def _setting(name: str, default: Any = None) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """A setter keeping its argument under ``name`` and a getter giving it back."""

    def set_value(value: Any = True, *args: Any, **kwargs: Any) -> None:
        SETTINGS[name] = value

    def get_value(*args: Any, **kwargs: Any) -> Any:
        return SETTINGS.get(name, default)

    return set_value, get_value


SETTING_PAIRS = {
    ("set_sync_debug_mode", "get_sync_debug_mode"): ("sync_debug_mode", 0),
    ("set_task_queue_enable", "get_task_queue_enable"): ("task_queue", True),
    ("set_mm_bmm_format_nd", "get_mm_bmm_format_nd"): ("mm_bmm_format_nd", True),
    ("use_compatible_impl", "are_compatible_impl_enabled"): ("compatible_impl", False),
    ("set_option", "_get_option"): ("option", {}),
    ("set_aoe", "_get_aoe"): ("aoe", None),
    ("set_dump", "_get_dump"): ("dump", None),
    ("set_op_timeout_ms", "_get_op_timeout_ms"): ("op_timeout_ms", None),
}


def set_compile_mode(jit_compile: bool = False) -> None:
    SETTINGS["jit_compile"] = jit_compile


def is_jit_compile_false() -> bool:
    return not SETTINGS.get("jit_compile", False)


def set_device_limit(device: Any, cube_num: int = -1, vector_num: int = -1) -> None:
    SETTINGS[f"device_limit_{device_index(device)}"] = {"cube_core_num": cube_num, "vector_core_num": vector_num}


def get_device_limit(device: Any) -> dict[str, int]:
    return dict(SETTINGS.get(f"device_limit_{device_index(device)}", {"cube_core_num": 0, "vector_core_num": 0}))


def reset_stream_limit(stream: npu_streams.Stream) -> None:
    npu_streams.set_stream_limit(stream, npu_streams.UNLIMITED, npu_streams.UNLIMITED)


class _Hf32Switch:
    """``torch.npu.matmul.allow_hf32`` / ``torch.npu.conv.allow_hf32`` (torch_npu's defaults)."""

    def __init__(self, allow_hf32: bool) -> None:
        self.allow_hf32 = allow_hf32


class CubeMathType:
    """torch_npu's cube math types."""

    KEEP_DTYPE = 0
    ALLOW_FP32_DOWN_PRECISION = 1
    USE_FP16 = 2
    USE_HF32 = 3


class mstx:  # noqa: N801 - torch_npu's profiling markers: nothing to mark without its profiler
    @staticmethod
    def mark(message: str = "", stream: Any = None, domain: str = "default") -> None:
        return None

    @staticmethod
    def range_start(message: str = "", stream: Any = None, domain: str = "default") -> int:
        return 0

    @staticmethod
    def range_end(range_id: int = 0, domain: str = "default") -> None:
        return None


# -- automatic mixed precision: the CPU's autocast state ---------------------------------------------
def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16, torch.float32]


def is_autocast_enabled() -> bool:
    return torch.is_autocast_enabled("cpu")


def set_autocast_enabled(enabled: bool) -> None:
    torch.set_autocast_enabled("cpu", enabled)


def get_autocast_dtype() -> torch.dtype:
    return torch.get_autocast_dtype("cpu")


def set_autocast_dtype(dtype: torch.dtype) -> None:
    torch.set_autocast_dtype("cpu", dtype)


def autocast(enabled: bool = True, dtype: torch.dtype = torch.float16, cache_enabled: bool = True) -> torch.autocast:
    """``torch.npu.amp.autocast``: the same autocast on the CPU (fp16 by default, as on the NPU)."""
    return torch.autocast("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


# The legacy typed constructors name the CPU's (npu tensors are CPU tensors).
TENSOR_TYPES = "Bool Byte Char Double Float Half Int Long Short BFloat16".split()


class _Config:
    """``torch.npu.config``: the attributes a script sets (``allow_internal_format``) are kept."""

    def __init__(self) -> None:
        self.allow_internal_format = False


STREAM_NAMES = (
    "Stream Event StreamContext stream set_stream current_stream default_stream get_stream_limit set_stream_limit graph_pool_handle "
    "set_deterministic_level"
).split()


def npu_module() -> types.ModuleType:
    """A fresh ``torch.npu`` module with every name above (the settings kept start empty)."""
    module = types.ModuleType(MODULE_NAME, __doc__)
    namespace: dict[str, Any] = {name: getattr(npu_streams, name) for name in STREAM_NAMES}
    namespace["_get_deterministic_level"] = npu_streams.get_deterministic_level
    namespace.update(_emulated())
    namespace.update(dict.fromkeys(MEMORY_COUNTS, _zero) | dict.fromkeys(MEMORY_RESETS, _nothing) | dict.fromkeys(MEMORY_STATS, _no_stats))
    namespace.update(init_dump=_nothing, finalize_dump=_nothing)
    for (setter, getter), (key, default) in SETTING_PAIRS.items():
        namespace[setter], namespace[getter] = _setting(key, default)
    namespace.update({f"{t}Tensor": getattr(torch, f"{t}Tensor") for t in TENSOR_TYPES})
    namespace.update({f"{t}Storage": getattr(torch, f"{t}Storage") for t in TENSOR_TYPES})
    namespace.update(config=_Config(), matmul=_Hf32Switch(False), conv=_Hf32Switch(True), CubeMathType=CubeMathType, mstx=mstx)
    namespace["amp"] = types.SimpleNamespace(autocast=autocast)
    namespace.update({name: _needs_an_npu(name) for name in NEEDS_AN_NPU})
    module.__dict__.update(
        {name: value for name, value in namespace.items() if not name.startswith("_get_") or name == "_get_deterministic_level"}
    )
    return module


def _emulated() -> dict[str, Any]:
    functions = (
        is_available, is_initialized, init, device_count, set_device, current_device, device, device_of, can_device_access_peer,
        get_device_name, get_device_properties, mem_get_info, synchronize, is_bf16_supported, is_current_stream_capturing,
        manual_seed, seed, initial_seed, get_rng_state, set_rng_state, get_rng_state_all, set_rng_state_all,
        memory_snapshot, memory_summary, get_per_process_memory_fraction, set_per_process_memory_fraction, set_compile_mode,
        is_jit_compile_false, set_device_limit, get_device_limit, reset_stream_limit, get_amp_supported_dtype, is_autocast_enabled,
        set_autocast_enabled, get_autocast_dtype, set_autocast_dtype,
    )  # fmt: skip
    return {fn.__name__: fn for fn in functions} | {"manual_seed_all": manual_seed, "seed_all": seed}
