"""Undo what importing TorchAir does to the process.

Importing TorchAir is not free of side effects: its converter registrations set a
``_ge_converter`` attribute on torch's ``OpOverload`` objects, its ``torch.library``
fragments define ops, ``torchair.core._backend`` installs SIGINT/SIGTERM handlers and an
``atexit`` hook, its collective remapping edits ``torch.distributed`` tables, and its
``auto_functionalized_v2`` converter adds methods to torch's view-info classes.
:class:`ProcessStateGuard` records that state before TorchAir is imported and puts it
back afterwards, so a TorchAir session leaves the process as it found it.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import signal
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

import torch
import torch._decomp
import torch._subclasses.fake_tensor as fake_tensor

CONVERTER_ATTR = "_ge_converter"
_SIGNALS = ("SIGINT", "SIGTERM")
# torch classes TorchAir adds methods to while converting (auto_functionalized_v2 gives
# the view-info classes ``regenerate_ge_view`` / ``view_copy``).
_PATCHED_CLASSES = (("torch._higher_order_ops.auto_functionalize", ("AsStridedViewInfo", "SliceViewInfo", "AliasViewInfo", "NotView")),)


def _op_namespaces() -> list[Any]:
    namespaces = [v for v in vars(torch.ops).values() if isinstance(v, torch._ops._OpNamespace)]
    higher_order = getattr(torch.ops, "higher_order", None)
    if higher_order is not None and higher_order not in namespaces:
        namespaces.append(higher_order)
    return namespaces


def _ops_in(namespace: Any) -> list[Any]:
    """Every operator object already materialised in ``namespace``: packets, their
    cached overloads, and higher-order operators."""
    found: list[Any] = []
    for value in list(vars(namespace).values()):
        if isinstance(value, torch._ops.OpOverloadPacket):
            found.append(value)
            found.extend(v for v in list(vars(value).values()) if isinstance(v, torch._ops.OpOverload))
        elif isinstance(value, (torch._ops.OpOverload, torch._ops.HigherOrderOperator)):
            found.append(value)
    return found


def destroy_library(library: torch.library.Library) -> None:
    """Destroy ``library`` now, and for good: ``Library._destroy`` leaves the operator
    names in the sets its garbage-collection finalizer holds, so when the object is
    collected later the finalizer drops ``torch.ops``' cached packets of those names
    again, including those of a later library that defined the same operators. The
    objects others hold (TorchAir's converter registrations, fxlab's converters) then
    no longer are ``torch.ops.ns.op``. Emptying the sets leaves the finalizer nothing to do."""
    written = set(library._op_defs)
    # TorchAir writes some schemas on an indented line of their own ("""\n    wait_tensor(...)"""):
    # torch keeps such a name with its whitespace and would miss the packet it cached under
    # the bare name, leaving ``torch.ops.air.wait_tensor`` pointing at a removed operator.
    library._op_defs.clear()
    library._op_defs.update(_bare(qualname) for qualname in written)
    library._destroy()
    torch.library._defs.difference_update(written | library._op_defs)
    library._op_defs.clear()
    library._op_impls.clear()


def _bare(qualname: str) -> str:
    namespace, _, name = qualname.partition("::")
    return f"{namespace.strip()}::{name.strip()}"


def attached_converters() -> list[Any]:
    """Operator objects carrying a TorchAir converter attribute right now."""
    return [op for ns in _op_namespaces() for op in _ops_in(ns) if CONVERTER_ATTR in vars(op)]


class ProcessStateGuard:
    """Context manager: snapshot on enter, restore on exit (see the module docstring)."""

    def __enter__(self) -> ProcessStateGuard:
        self._kernels = KernelTables()
        self._converters_before = {id(op) for op in attached_converters()}
        self._handlers = self._signal_handlers()
        self._modules_before = set(sys.modules)
        self._collectives = self._collectives_state()
        self._class_attrs = {cls: set(vars(cls)) for cls in _patched_classes()}
        return self

    def __exit__(self, *exc_info: object) -> None:
        new_modules = [sys.modules[n] for n in set(sys.modules) - self._modules_before if n in sys.modules]
        torchair_modules = [m for m in new_modules if _is_torchair_module(m)]
        self._detach_converters()
        self._destroy_libraries(torchair_modules)
        self._unregister_atexit(torchair_modules)
        self._restore_signal_handlers()
        self._restore_collectives()
        self._restore_classes()
        self._kernels.restore()

    def _restore_classes(self) -> None:
        for cls, names in self._class_attrs.items():
            for name in [n for n in vars(cls) if n not in names]:
                delattr(cls, name)

    # -- converters and op libraries --------------------------------------------------
    def _detach_converters(self) -> None:
        for op in attached_converters():
            if id(op) not in self._converters_before:
                delattr(op, CONVERTER_ATTR)

    @staticmethod
    def _destroy_libraries(modules: list[types.ModuleType]) -> None:
        for module in modules:
            for value in list(vars(module).values()):
                # A Library's registrations live until it is destroyed; TorchAir's must not
                # outlive the session. ``_destroy`` is idempotent.
                if isinstance(value, torch.library.Library) and hasattr(value, "_destroy"):
                    destroy_library(value)

    @staticmethod
    def _unregister_atexit(modules: list[types.ModuleType]) -> None:
        for module in modules:
            for value in list(vars(module).values()):
                if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
                    atexit.unregister(value)

    # -- signals ------------------------------------------------------------------------
    @staticmethod
    def _signal_handlers() -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        return {getattr(signal, name): signal.getsignal(getattr(signal, name)) for name in _SIGNALS}

    def _restore_signal_handlers(self) -> None:
        for signum, handler in self._handlers.items():
            if handler is not None and signal.getsignal(signum) is not handler:
                signal.signal(signum, handler)

    # -- torch.distributed tables TorchAir extends ----------------------------------------
    @staticmethod
    def _collectives_state() -> tuple[Any, dict[str, Any], dict[Any, Any]] | None:
        if not torch.distributed.is_available():
            return None
        # Imported here so the snapshot exists before TorchAir edits it.
        module = importlib.import_module("torch.distributed._functional_collectives")
        remaps = getattr(module, "traceable_collective_remaps", None)
        return module, dict(vars(module)), dict(remaps) if isinstance(remaps, dict) else {}

    def _restore_collectives(self) -> None:
        if self._collectives is None:
            return
        module, names, remaps = self._collectives
        for name in [n for n in vars(module) if n not in names]:
            delattr(module, name)
        table = getattr(module, "traceable_collective_remaps", None)
        if isinstance(table, dict):
            table.clear()
            table.update(remaps)


class KernelTables:
    """What ``torchair.get_npu_backend()`` patches in torch for the whole process (its
    ``add_npu_patch``): Python kernels of ATen ops (Meta functions, decompositions for
    NPU autograd keys), torch's decomposition table, and fake-tensor helpers. Snapshot on
    creation; :meth:`restore` puts them back, and drops Python kernels TorchAir's modules
    added to ops first materialised meanwhile."""

    def __init__(self) -> None:
        self.table = torch._decomp.decomposition_table
        self.table_before = dict(self.table)
        self.fake_tensor = fake_tensor
        self.fake_tensor_before = dict(vars(fake_tensor))
        self.kernels_before = {op: dict(op.py_kernels) for op in self._overloads()}

    def _overloads(self) -> set[Any]:
        ops = {op for op in self.table if isinstance(op, torch._ops.OpOverload)}
        ops.update(op for ns in _op_namespaces() for op in _ops_in(ns) if isinstance(op, torch._ops.OpOverload))
        return ops

    def restore(self) -> None:
        self.table.clear()
        self.table.update(self.table_before)
        for name, value in list(vars(self.fake_tensor).items()):
            if name not in self.fake_tensor_before:
                delattr(self.fake_tensor, name)
            elif self.fake_tensor_before[name] is not value:
                setattr(self.fake_tensor, name, self.fake_tensor_before[name])
        for op in self._overloads():
            before = self.kernels_before.get(op)
            kernels = before if before is not None else {k: f for k, f in op.py_kernels.items() if not _from_torchair(f)}
            if kernels != op.py_kernels:
                op.py_kernels.clear()
                op.py_kernels.update(kernels)
                op._dispatch_cache.clear()


# The packages a session imports from sources: TorchAir, and torch_npu's standalone
# npugraph_ex backend (fxlab/compat/npugraph_ex_loader.py).
SOURCE_PACKAGES = ("torchair", "npugraph_ex")


def _from_torchair(fn: Any) -> bool:
    module = getattr(fn, "__module__", "") or ""
    return any(module == p or module.startswith(p + ".") for p in SOURCE_PACKAGES)


def _patched_classes() -> list[type]:
    classes: list[type] = []
    for module_name, names in _PATCHED_CLASSES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        classes.extend(getattr(module, n) for n in names if isinstance(getattr(module, n, None), type))
    return classes


def _is_torchair_module(module: types.ModuleType) -> bool:
    name = getattr(module, "__name__", "") or ""
    return any(name == p or name.startswith(p + ".") for p in SOURCE_PACKAGES) or name.startswith("torch_npu")


# -- one compile's process state --------------------------------------------------------
def package_module(package: types.ModuleType, name: str) -> Any:
    """``package``'s submodule ``name`` (TorchAir's or npugraph_ex's), imported on demand."""
    return importlib.import_module(f"{package.__name__}.{name}")


# TorchAir's process-wide state that names or numbers what a compile makes: the graph
# counter ("graph_<n>"), the tagged events its passes register, the size expressions
# its capture reads. A user's process starts with none of it.
_GRAPH_COUNTER = ("npu_fx_compiler", "_GLOBAL_GRAPH_ID")
_REGISTRIES = (
    ("_acl_concrete_graph.graph_pass", "_GLOBAL_SCOPE_TAG_TO_EVENT"),
    ("_acl_concrete_graph.acl_graph", "_GLOBAL_SYM_EXPR_2_NODE_MAP"),
)


@contextlib.contextmanager
def fresh_compile_state(package: Any) -> Iterator[None]:
    """The block starts from that state; what was there before is put back after it."""
    counter = package_module(package, _GRAPH_COUNTER[0])
    count = getattr(counter, _GRAPH_COUNTER[1])
    registries = [getattr(package_module(package, module), name) for module, name in _REGISTRIES]
    saved = [dict(registry) for registry in registries]
    setattr(counter, _GRAPH_COUNTER[1], 0)
    for registry in registries:
        registry.clear()
    try:
        yield
    finally:
        setattr(counter, _GRAPH_COUNTER[1], count)
        for registry, before in zip(registries, saved):
            registry.clear()
            registry.update(before)


@contextlib.contextmanager
def patched_once(package: Any) -> Iterator[None]:
    """``get_npu_backend`` patches torch for the process (``add_npu_patch``: Meta functions,
    decompositions, NPU autograd kernels), once. npugraph_ex carries a copy of the same
    function: when that copy has patched the process, TorchAir's would fail registering
    the same kernels again, so it counts as done, as the process already carries them.
    Whatever the run patched is undone after it."""
    patch = package_module(package, "_utils").add_npu_patch
    has_run = patch.has_run
    if not has_run and torch._C.DispatchKey.AutogradPrivateUse1 in torch.ops.aten.to.other.py_kernels:
        patch.has_run = True
    tables = KernelTables()
    try:
        yield
    finally:
        tables.restore()
        patch.has_run = has_run
