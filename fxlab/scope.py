"""Scope markers compatible with ``torchair.scope``: SuperKernel, core limits, and friends.

A scope is two side-effect ops in the FX graph, the same ones TorchAir uses::

    air::scope_enter(str[] keys, str[] values, bool need_execute=False) -> ()
    air::scope_exit(bool need_execute=False) -> ()

``scope_enter`` pushes ``dict(zip(keys, values))``; conversion to Ascend IR gives every
GE op created inside the scope those attrs (see :func:`fxlab.ir.builder.scoped_attrs`).
The markers return nothing and take no tensors, so Dynamo records them as graph nodes and
aot_autograd / functionalization / reinplacing keep them because they are registered with
``torch.fx.node.has_side_effect``.

When TorchAir has already defined ``torch.ops.air.scope_enter`` (real torchair imported
first), fxlab reuses those ops instead of defining its own, so a model written against
either API gives the same graph.

The context managers are small classes whose ``__enter__``/``__exit__`` only call the
ops: Dynamo inlines such user-defined context managers, so ``with super_kernel(...)``
works inside ``torch.compile``'d code exactly like TorchAir's own ``_Scope``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.fx.node import has_side_effect

__all__ = [
    "SCOPE_ENTER_SCHEMA",
    "SCOPE_EXIT_SCHEMA",
    "Scope",
    "NpugraphExScope",
    "super_kernel",
    "limit_core_num",
    "op_never_timeout",
    "npu_stream_switch",
    "deterministic",
    "data_dump",
    "active_scope_stack",
]

SCOPE_ENTER_SCHEMA = "scope_enter(str[] keys, str[] values, bool need_execute=False) -> ()"
SCOPE_EXIT_SCHEMA = "scope_exit(bool need_execute=False) -> ()"

# Attr keys the markers push (TorchAir's names).
SUPER_KERNEL_SCOPE = "_super_kernel_scope"
SUPER_KERNEL_OPTIONS = "_super_kernel_options"
OP_AICORE_NUM = "_op_aicore_num"
OP_VECTORCORE_NUM = "_op_vectorcore_num"
OP_NEVER_TIMEOUT = "_op_exec_never_timeout"
USER_STREAM_LABEL = "_user_stream_label"
USER_STREAM_PRIORITY = "_user_stream_priority"
ENABLE_INNER_PARALLEL = "_enable_inner_parallel"
DETERMINISTIC = "_deterministic"
DETERMINISTIC_LEVEL = "_deterministic_level"
DATA_DUMP = "torchair_enable_data_dump"

# Eager execution with need_execute=True pushes onto this per-thread stack (TorchAir keeps
# an equivalent one); graph conversion never reads it, it walks the marker nodes instead.
_EAGER = threading.local()
# Kept alive for the process: dropping a Library object would undo its registrations.
_LIBRARIES: dict[str, torch.library.Library] = {}


def active_scope_stack() -> list[dict[str, str]]:
    """The scopes entered eagerly with ``need_execute=True`` on this thread, outer first."""
    return list(getattr(_EAGER, "stack", []))


# Who else is told of a scope executed (``need_execute=True``): TorchAir's own scope-attr
# stack while its GE conversion walks a graph whose markers fxlab defined first (its own
# kernels would have pushed there): (enter(keys, values), exit()) pairs.
EXECUTED_SCOPE_LISTENERS: list[tuple[Callable[[list[str], list[str]], Any], Callable[[], Any]]] = []


@contextlib.contextmanager
def scope_stack_kept() -> Iterator[None]:
    """A block that leaves the eager scope stack as it found it: a graph that stops inside
    a scope (an operator that raises between its enter and exit) pushes no stale scope
    onto the next run's."""
    before = list(getattr(_EAGER, "stack", []))
    try:
        yield
    finally:
        _EAGER.stack = before


def _eager_enter(keys: Sequence[str], values: Sequence[str], need_execute: bool = False) -> None:
    if need_execute:
        if not hasattr(_EAGER, "stack"):
            _EAGER.stack = []
        _EAGER.stack.append(dict(zip(keys, values)))
        for enter, _ in EXECUTED_SCOPE_LISTENERS:
            enter(list(keys), list(values))


def _eager_exit(need_execute: bool = False) -> None:
    if need_execute and getattr(_EAGER, "stack", None):
        _EAGER.stack.pop()
        for _, leave in EXECUTED_SCOPE_LISTENERS:
            leave()


def _library(namespace: str) -> torch.library.Library:
    if namespace not in _LIBRARIES:
        _LIBRARIES[namespace] = torch.library.Library(namespace, "FRAGMENT")
    return _LIBRARIES[namespace]


# Ops without tensor arguments dispatch through BackendSelect; Meta and CPU cover fake and
# plain tensors, PrivateUse1 the NPU (TorchAir registers the same four keys).
_DISPATCH_KEYS = ("CPU", "Meta", "BackendSelect", "PrivateUse1")


def _define_marker(name: str, schema: str, kernel: Any, namespace: str = "air") -> None:
    if hasattr(getattr(torch.ops, namespace), name):
        return  # TorchAir (or an earlier import) owns it: reuse, never redefine
    lib = _library(namespace)
    lib.define(schema)
    for key in _DISPATCH_KEYS:
        lib.impl(name, kernel, key)
    has_side_effect(getattr(getattr(torch.ops, namespace), name).default)


def _ensure_ops() -> None:
    # air:: is TorchAir's; npugraph_ex:: the standalone npugraph_ex backend's (the same
    # markers under its own namespace, which its passes look for).
    for namespace in ("air", "npugraph_ex"):
        _define_marker("scope_enter", SCOPE_ENTER_SCHEMA, _eager_enter, namespace)
        _define_marker("scope_exit", SCOPE_EXIT_SCHEMA, _eager_exit, namespace)
    # Real TorchAir marks its ops itself; marking again is harmless and makes sure
    # a half-initialised torchair still keeps its markers through dead-code elimination.
    has_side_effect(torch.ops.air.scope_enter.default)
    has_side_effect(torch.ops.air.scope_exit.default)


_ensure_ops()


class Scope:
    """``with Scope([(key, value), ...]):`` puts one scope_enter/scope_exit pair around
    the ops traced inside. The class stays trivial on purpose so Dynamo can inline it."""

    def __init__(self, attrs: Sequence[tuple[str, str]]) -> None:
        self.attrs = list(attrs)

    def __enter__(self) -> None:
        keys = [key for key, _ in self.attrs]
        values = [value for _, value in self.attrs]
        torch.ops.air.scope_enter(keys, values)

    def __exit__(self, *exc_info: object) -> None:
        torch.ops.air.scope_exit()


class NpugraphExScope:
    """A scope of torch_npu's standalone npugraph_ex backend (``npugraph_ex.scope``): the
    same markers under its own namespace, which its passes look for."""

    def __init__(self, attrs: Sequence[tuple[str, str]]) -> None:
        self.attrs = list(attrs)

    def __enter__(self) -> None:
        keys = [key for key, _ in self.attrs]
        values = [value for _, value in self.attrs]
        torch.ops.npugraph_ex.scope_enter(keys, values)

    def __exit__(self, *exc_info: object) -> None:
        torch.ops.npugraph_ex.scope_exit()


def super_kernel(scope: str | None, options: str = "") -> Scope:
    """Fuse the ops inside into the SuperKernel named ``scope``. ``None`` or ``''`` marks a
    region whose ops are taken out of any enclosing SuperKernel scope. ``options`` is
    ``key=value`` pairs joined by ``:`` (see :mod:`fxlab.reports.scope_report`)."""
    return Scope([(SUPER_KERNEL_SCOPE, "" if scope is None else scope), (SUPER_KERNEL_OPTIONS, options)])


def limit_core_num(op_aicore_num: int, op_vectorcore_num: int) -> Scope:
    """Limit the AI Cores / Vector Cores each op inside may use (op-level, wins over the
    global ``ge_config.aicore_num``). Values are pushed as strings, as TorchAir does;
    they are validated by the scope report, not here, so a bad value still shows up."""
    return Scope([(OP_AICORE_NUM, str(op_aicore_num)), (OP_VECTORCORE_NUM, str(op_vectorcore_num))])


def op_never_timeout(enable: bool = True) -> Scope:
    """Mark the ops inside with ``_op_exec_never_timeout`` (a bool attr on the GE op)."""
    if not isinstance(enable, bool):
        raise TypeError(f"op_never_timeout(enable=...) takes a bool, got {type(enable).__name__}")
    return Scope([(OP_NEVER_TIMEOUT, str(enable))])


def npu_stream_switch(stream_tag: str, stream_priority: int = 0, enable_inner_parallel: bool = True) -> Scope:
    """Run the ops inside on the user stream labelled ``stream_tag``."""
    return Scope(
        [
            (USER_STREAM_LABEL, stream_tag),
            (USER_STREAM_PRIORITY, str(stream_priority)),
            (ENABLE_INNER_PARALLEL, str(enable_inner_parallel)),
        ]
    )


def deterministic(level: int) -> Scope:
    """Run the ops inside at deterministic ``level`` (0 to 3; 0 turns it off)."""
    if level not in (0, 1, 2, 3):
        raise ValueError(f"deterministic level must be 0, 1, 2, or 3, got {level}")
    return Scope([(DETERMINISTIC, "1" if level > 0 else "0"), (DETERMINISTIC_LEVEL, str(level))])


def data_dump() -> Scope:
    """Dump the data of the ops inside (``torchair_enable_data_dump``, read on the NPU)."""
    return Scope([(DATA_DUMP, "True")])


# The event operators TorchAir's aclgraph passes add beside these markers, defined with
# them (before TorchAir defines its own, whose kernels need an NPU).
import fxlab.npu_streams  # noqa: E402, F401
