"""The ``npu`` device on a machine without one: npu tensors are CPU tensors.

A script written for an NPU names the device (``torch.device("npu")``, ``"npu:0"``,
``x.to("npu")``, ``model.npu()``, ``device="npu"`` in a factory function) and calls
``torch.npu`` (:mod:`fxlab.compat.npu_device_api`). :func:`npu_on_cpu` makes all of that
run on the CPU, for one ``with`` block, and undoes it on exit.

How, and why this way (both leads were tried):

- Renaming torch's ``PrivateUse1`` backend to ``npu`` makes ``"npu"`` parse, but torch
  refuses a second name for the life of the process (the rename leaks out of any block),
  and a ``PrivateUse1`` tensor needs a device allocator and kernels of its own: the
  tensors would not be CPU tensors running CPU kernels.
- A ``TorchFunctionMode`` (:class:`NpuDeviceAsCpu`) sees every torch call made from
  Python before torch parses a device in it: the ``torch.device`` constructor,
  ``Tensor.to``, ``Module.to`` (through ``_parse_to``), every factory function's
  ``device=``. It hands them ``"cpu"`` for ``"npu"`` / ``"npu:N"``. The tensors are plain
  CPU tensors (``x.device.type`` is ``"cpu"``) and run CPU kernels, and popping the mode
  undoes everything. This is the mechanism used.

Consequences, said in the one note the block gives: a move to the npu copies nothing
(``x.npu()`` is ``x``, as ``x.to("cpu")`` is); Dynamo traces through the mode as it
traces torch's own default-device mode, so a compiled forward that makes
``torch.zeros(..., device="npu")`` or reads ``x.device`` compiles to CPU ops. Dynamo is
handed only the calls the mode can change (:mod:`fxlab.compat.npu_mode_dynamo`): the
others it traces as on an NPU machine, and pays nothing for the mode. Two calls parse
their device where no mode sees them: ``torch.autocast("npu")`` and
``torch.Generator(device="npu")``, and a
``torch.device("npu")`` written inside a compiled function (Dynamo folds it as a
constant); torch's own error then names the device string, and
:func:`unmapped_npu_device` turns it into fxlab's.

Besides the mode, the block installs what torch_npu adds to torch: ``torch.npu`` (also in
``sys.modules``), ``Tensor.npu()`` and ``Module.npu()``; torch's own
``generate_methods_for_privateuse1_backend`` adds those only for a renamed backend.

The compat layer (``fxlab trace``) opens the block lazily: ``torch.npu``, ``torch_npu.npu``,
``.npu()`` are there from the start, and the first use of one of them pushes the mode and
gives the note, so a model file that never names the NPU is traced exactly as on an NPU
machine. A program run as a whole (``fxlab run``) opens it at once.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
import traceback
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from fxlab import npu_streams
from fxlab.npu_kernels import npu_kernels_serve_cpu
from fxlab.compat import npu_device_api
from fxlab.compat.npu_mode_dynamo import plain_calls_skip
from fxlab.errors import NpuNotEmulated

NOTE = (
    "no NPU here: the npu device runs on the CPU (npu tensors are CPU tensors: x.device is cpu, x.is_npu False, and x.npu() / x.to('npu') copy nothing; "
    "torch.npu's streams and events have nothing to order and return at once; its memory statistics are 0, as the CPU "
    "has no device allocator; torch.npu.manual_seed seeds the CPU generator; NPU runtime settings are kept and change nothing)"
)
DEVICE_TYPE = "npu"
_UNPARSED = "device type at start of device string: npu"


def is_npu_device(value: Any) -> bool:
    return isinstance(value, str) and (value == DEVICE_TYPE or value.startswith(DEVICE_TYPE + ":"))


def _on_cpu(value: Any) -> Any:
    return "cpu" if is_npu_device(value) else value


_DEVICE, _TO, _PARSE_TO = torch.device, torch.Tensor.to, torch._C._nn._parse_to
_RECORD_STREAM, _PIN_MEMORY = torch.Tensor.record_stream, torch.Tensor.pin_memory


def _takes_device_positionally(func: Any) -> bool:
    """The calls that can name a device (or a stream, or pinning) without a keyword
    (compared by identity: Dynamo hashes no descriptor such as ``Tensor.device``)."""
    return func is _DEVICE or func is _TO or func is _PARSE_TO or func is _RECORD_STREAM or func is _PIN_MEMORY


class NpuDeviceAsCpu(TorchFunctionMode):
    """Every ``"npu"`` / ``"npu:N"`` a torch call is given becomes ``"cpu"``; a stream
    recorded on a tensor, and pinning host memory, have nothing to do on the CPU."""

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        # Most calls name no device: they pass straight through, in as few steps as can be,
        # since Dynamo steps through this method for every torch call it traces.
        if not kwargs and not _takes_device_positionally(func):
            return func(*args)
        kwargs = kwargs or {}
        if func is torch.device:
            return torch.device("cpu") if is_npu_device(args[0] if args else kwargs.get("type")) else func(*args, **kwargs)
        if func is torch.Tensor.record_stream and isinstance(args[1], npu_streams.Stream):
            return None
        if func is torch.Tensor.pin_memory:
            return args[0]
        if "device" in kwargs or "pin_memory" in kwargs:
            kwargs = {key: _on_cpu(value) for key, value in kwargs.items() if key != "pin_memory"}
        if func is torch.Tensor.to or func is torch._C._nn._parse_to:
            args = tuple(_on_cpu(a) for a in args)
        return func(*args, **kwargs)


def tensor_npu(
    self: torch.Tensor, device: Any = None, non_blocking: bool = False, memory_format: Any = torch.preserve_format
) -> torch.Tensor:
    """``Tensor.npu()``: the tensor itself (npu tensors are CPU tensors)."""
    return self if memory_format is torch.preserve_format else self.contiguous(memory_format=memory_format)


def tensor_is_npu(self: torch.Tensor) -> bool:
    """``Tensor.is_npu``, as torch_npu's device registration defines it: whether the
    tensor's device is the npu (never, here: npu tensors are CPU tensors, as ``x.device`` says)."""
    return self.device.type == DEVICE_TYPE


def module_npu(self: torch.nn.Module, device: Any = None) -> torch.nn.Module:
    """``Module.npu()``: the module itself, its parameters staying where they are (the CPU)."""
    return self


class NpuOnCpu:
    """One block's emulation: what it installed, and whether its mode is pushed yet."""

    def __init__(self, announce: Callable[[str], None] | None = None) -> None:
        self.announce = announce
        self.mode = NpuDeviceAsCpu()
        self.module = npu_device_api.npu_module()
        self.active = False
        self._saved: list[tuple[Any, str, Any]] = []
        self._dynamo = contextlib.ExitStack()  # Dynamo told which calls the mode can change (npu_mode_dynamo)
        self._kernels = contextlib.ExitStack()  # the program's npu kernels serving CPU tensors (fxlab.npu_kernels)
        # torch's function modes are per thread: which threads have the mode pushed.
        self._thread = threading.local()
        self._threads = contextlib.ExitStack()

    def activate(self) -> None:
        """Push the mode (on this thread) and give the note, once (never while Dynamo traces a call)."""
        if torch.compiler.is_compiling():
            return
        if not self.active:
            self.active = True
            self._dynamo.enter_context(plain_calls_skip(self.mode))
            self._set(torch, DEVICE_TYPE, self.module)
            sys.modules["torch.npu"] = self.module
            if self.announce is not None:
                self.announce(NOTE)
        self._push_here()

    def _push_here(self) -> None:
        if not getattr(self._thread, "pushed", False):
            self.mode.__enter__()
            self._thread.pushed = True

    @contextlib.contextmanager
    def _in_threads(self) -> Iterator[None]:
        """Threads the program starts run with the mode, once the emulation is active (a
        serving loop's workers name the npu device as its main thread does)."""
        real = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]
        emulation = self

        def bootstrap_inner(thread: threading.Thread) -> None:
            if emulation.active:
                emulation._push_here()
            real(thread)

        threading.Thread._bootstrap_inner = bootstrap_inner  # type: ignore[attr-defined]
        try:
            yield
        finally:
            if threading.Thread._bootstrap_inner is bootstrap_inner:  # type: ignore[attr-defined]
                threading.Thread._bootstrap_inner = real  # type: ignore[attr-defined]

    def install(self, lazy: bool) -> None:
        npu_device_api.reset()
        self._kernels.enter_context(npu_kernels_serve_cpu())  # at once: a file registers its kernels as it is imported
        self._threads.enter_context(self._in_threads())
        self._set(torch.Tensor, "npu", self._activating(tensor_npu))
        self._set(torch.nn.Module, "npu", self._activating(module_npu))
        self._set(torch.Tensor, "is_npu", property(tensor_is_npu))
        self._set(torch, DEVICE_TYPE, _LazyModule(self) if lazy else self.module)
        self._saved.append((sys.modules, "torch.npu", sys.modules.get("torch.npu")))
        sys.modules["torch.npu"] = torch.npu  # type: ignore[attr-defined]
        if not lazy:
            self.activate()

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        """The block without the mode: fxlab's own work on graphs already captured (their
        tensors are CPU tensors) pays nothing for it, as every torch call under a mode does."""
        if not getattr(self._thread, "pushed", False) or torch.compiler.is_compiling():
            yield
            return
        _pop_mode(self.mode)
        try:
            yield
        finally:
            torch._C._push_on_torch_function_stack(self.mode)

    def uninstall(self) -> None:
        self._threads.close()
        if self.active:
            self._dynamo.close()
            self.active = False
        if getattr(self._thread, "pushed", False):
            _pop_mode(self.mode)
            self._thread.pushed = False
        for owner, name, previous in reversed(self._saved):
            _restore(owner, name, previous)
        self._saved.clear()
        self._kernels.close()
        npu_device_api.reset()

    def _set(self, owner: Any, name: str, value: Any) -> None:
        if not any(o is owner and n == name for o, n, _ in self._saved):
            self._saved.append((owner, name, getattr(owner, name, _MISSING)))
        setattr(owner, name, value)

    def _activating(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def activating(*args: Any, **kwargs: Any) -> Any:
            self.activate()
            return method(*args, **kwargs)

        activating.__name__, activating.__doc__ = "npu", method.__doc__
        return activating


_MISSING = object()


def _restore(owner: Any, name: str, previous: Any) -> None:
    if isinstance(owner, dict):
        if previous is None or previous is _MISSING:
            owner.pop(name, None)
        else:
            owner[name] = previous
    elif previous is _MISSING:
        with contextlib.suppress(AttributeError):
            delattr(owner, name)
    else:
        setattr(owner, name, previous)


def _pop_mode(mode: TorchFunctionMode) -> None:
    """Take ``mode`` off torch's function-mode stack, keeping any pushed above it."""
    above = []
    while torch._C._len_torch_function_stack() > 0:
        top = torch._C._pop_torch_function_stack()
        if top is mode:
            break
        above.append(top)
    for other in reversed(above):
        torch._C._push_on_torch_function_stack(other)


class _LazyModule(types.ModuleType):
    """``torch.npu`` before the block's first use of the NPU: any name looked up in it
    activates the emulation, then comes from the real module."""

    def __init__(self, emulation: NpuOnCpu) -> None:
        super().__init__("torch.npu", npu_device_api.__doc__)
        self._emulation = emulation

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # what tools ask any module (inspect: __file__), not a use of the NPU
            raise AttributeError(name)
        emulation = self.__dict__["_emulation"]
        emulation.activate()
        return getattr(emulation.module, name)


@contextlib.contextmanager
def npu_on_cpu(announce: Callable[[str], None] | None = None, lazy: bool = False) -> Iterator[NpuOnCpu]:
    """The npu device on the CPU for the block (see the module docstring); ``lazy``: wait
    for the block's first use of ``torch.npu`` / ``.npu()`` to push the mode. Does
    nothing where torch already has an ``npu`` device (a real torch_npu)."""
    emulation = NpuOnCpu(announce)
    if hasattr(torch, DEVICE_TYPE):
        yield emulation
        return
    emulation.install(lazy)
    try:
        yield emulation
    finally:
        emulation.uninstall()


# torch's error for an operator run on CPU tensors with no CPU kernel.
_NO_CPU_KERNEL = re.compile(r"Could not run 'npu::(\w+)' with arguments from the 'CPU' backend")


def npu_op_without_cpu_kernel(exc: BaseException | None) -> NpuNotEmulated | None:
    """fxlab's error for a torch_npu operator run eagerly on the CPU tensors that stand for
    npu tensors when it has no CPU kernel (torch's own lists every dispatch key), or None."""
    chain = _chain(exc)
    found = next((m for e in chain if isinstance(e, NotImplementedError) and (m := _NO_CPU_KERNEL.search(str(e)))), None)
    if found is None:
        return None
    where = npu_device_api.script_line(traceback.extract_tb(chain[-1].__traceback__))
    return NpuNotEmulated(
        f"the call at {where} runs torch_npu's npu.{found.group(1)} eagerly, and it has no CPU kernel here: without an NPU, "
        "fxlab defines torch_npu's operators from their schemas with their Meta functions (enough to compile and trace a call "
        "inside a compiled function), and CPU kernels for some of them only. Run the script on an NPU machine, or leave the "
        "call out of runs without one."
    )


def _chain(exc: BaseException | None) -> list[BaseException]:
    """``exc`` and what caused it, outermost first."""
    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


def unmapped_npu_device(exc: BaseException | None, emulation: NpuOnCpu | None = None) -> NpuNotEmulated | None:
    """fxlab's error for torch's "device string: npu" (found in ``exc`` or what caused it),
    raised where the emulation cannot see the device: before the block's first use of the
    NPU API (``emulation`` lazy and not active yet), or in ``torch.autocast("npu")``,
    ``torch.Generator(device="npu")``, a ``torch.device("npu")`` inside a compiled
    function. None for any other error."""
    raised = [e for e in _chain(exc) if _UNPARSED in str(e)]
    if not raised:
        return None
    cause = raised[-1]  # torch's own, where the device string was parsed
    where = npu_device_api.script_line(traceback.extract_tb(cause.__traceback__))
    if emulation is not None and not emulation.active:
        return NpuNotEmulated(
            f"the code at {where} names the npu device before anything else it ran used torch.npu, torch_npu.npu or .npu(): "
            "fxlab runs the npu device on the CPU from that first use on, so that a model file that never uses it is traced "
            "exactly as on an NPU machine. Call torch.npu.set_device(0) first, as a script for an NPU does, and run again."
        )
    return NpuNotEmulated(
        f"the call at {where} names the npu device where fxlab's CPU emulation of it cannot reach: torch.autocast('npu'), "
        "torch.Generator(device='npu') and a torch.device('npu') written inside a compiled function parse the device before "
        "any torch function sees it. Write those as torch.autocast('cpu'), torch.Generator() or a device made outside the "
        "compiled function (x.device) for runs without an NPU, or run the script on an NPU machine."
    )
