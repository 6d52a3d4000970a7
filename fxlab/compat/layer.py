"""The import hook that lets files written for TorchAir run inside fxlab without it.

:func:`compat_layer` is a context manager. While it is open, and only for the packages
this Python cannot import for real, ``import torchair`` and ``import torch_npu`` load
fxlab's stand-ins (``fxlab/compat/standins/``) through a ``sys.meta_path`` finder. When
it closes, the finder is removed, the stand-in modules leave ``sys.modules`` and the
converters registered through ``torchair.register_fx_node_ge_converter`` are
unregistered, so nothing leaks into the rest of the process. The first import of each
stand-in is announced through the ``announce`` callback (the CLI prints it).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fxlab.compat.converter_registration import close_session, open_session
from fxlab.compat.graph_only_ops import GraphOnlyOps, eager_graph_only_ops
from fxlab.compat.npu_device import NpuOnCpu, npu_op_without_cpu_kernel, npu_on_cpu, unmapped_npu_device
from fxlab.compat.public_names import is_known_module, standin_gap
from fxlab.compat.torch_npu_ops import torch_npu_definitions
from fxlab.compat.torchair_calls import TAGGED_EVENTS
from fxlab.errors import FxlabError
from fxlab.passes.pattern_fusion import forget_patterns
from fxlab.passes.torchair_options import forget_observed_configs

STANDIN_DIR = Path(__file__).parent / "standins"

ANNOUNCEMENTS = {
    "torchair": (
        "torchair is not installed: `import torchair` gets fxlab's TorchAir-compatible layer (register_fx_node_ge_converter, "
        "ge.custom_op, ge.attr, scope, CompilerConfig, get_npu_backend; converters build fxlab's Ascend IR, "
        "no Graph Engine runs; a TorchAir copy `fxlab torchair fetch` fetched is run by --converter torchair and the checks, "
        "never imported by the model)"
    ),
    "npugraph_ex": (
        "npugraph_ex is not installed: using fxlab's stand-in (CompilerConfig, get_npu_backend, register_replacement, "
        "scope.limit_core_num / deterministic; the config drives the aclgraph stage)"
    ),
    "torch_npu": (
        "torch_npu is not installed: using fxlab's minimal torch_npu stand-in (the npu custom ops run on CPU; "
        "torch_npu.meta._meta_registrations.m registers Meta functions)"
    ),
}


@dataclass
class CompatSession:
    """What one :func:`compat_layer` block stood in, and what it announced."""

    standing_in: tuple[str, ...] = ()
    used: list[str] = field(default_factory=list)
    announce: Callable[[str], None] | None = None
    exits: contextlib.ExitStack | None = None  # what the block undoes on close
    npu_definitions: Any = None  # torch_npu's operators, once the stand-in torch_npu is imported
    graph_only_ops: GraphOnlyOps | None = None  # TorchAir's graph-only operators, run eagerly
    npu_device: NpuOnCpu | None = None  # the npu device on the CPU, where torch_npu is stood in for

    @property
    def notes(self) -> list[str]:
        return [ANNOUNCEMENTS[name] for name in self.used]

    def explain(self, exc: BaseException) -> FxlabError | None:
        """fxlab's own error for one the block's code raised, when fxlab's layer is why
        (the npu device named where the CPU emulation cannot see it, a torch_npu operator
        with no CPU kernel here); else None."""
        return unmapped_npu_device(exc, self.npu_device) or npu_op_without_cpu_kernel(exc)

    def mark_used(self, top_level: str) -> None:
        if top_level not in self.used:
            self.used.append(top_level)
            if self.announce is not None:
                self.announce(ANNOUNCEMENTS[top_level])


class StandinFinder(importlib.abc.MetaPathFinder):
    """Finds ``torchair[.x]`` / ``torch_npu[.x]`` / ``npugraph_ex[.x]`` in the stand-in
    folder. ``torch_npu.dynamo.torchair[.x]`` (and ``npugraph_ex``), where the wheel ships
    them, are the same modules under their own names. A module the real package has and
    the stand-in lacks is fxlab's gap (:class:`~fxlab.compat.public_names.StandinGap`)."""

    def __init__(self, session: CompatSession) -> None:
        self.session = session

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        top = fullname.split(".", 1)[0]
        if top not in self.session.standing_in:
            return None
        nested = _nested_package(fullname)
        if nested is not None:
            self.session.mark_used(top)
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(nested), origin=str(STANDIN_DIR / "torch_npu" / "dynamo"))
        base = STANDIN_DIR.joinpath(*fullname.split("."))
        package_init = base / "__init__.py"
        if package_init.is_file():
            spec = importlib.util.spec_from_file_location(fullname, package_init, submodule_search_locations=[str(base)])
        elif base.with_suffix(".py").is_file():
            spec = importlib.util.spec_from_file_location(fullname, base.with_suffix(".py"))
        elif is_known_module(fullname):
            raise standin_gap(fullname)
        else:
            return None
        self.session.mark_used(top)
        return spec


# torch_npu ships TorchAir and npugraph_ex under its ``dynamo`` folder too.
NESTED_PACKAGES = ("torchair", "npugraph_ex")


def _nested_package(fullname: str) -> str | None:
    """``torchair.scope`` for ``torch_npu.dynamo.torchair.scope``; None for other names."""
    parts = fullname.split(".")
    if len(parts) >= 3 and parts[:2] == ["torch_npu", "dynamo"] and parts[2] in NESTED_PACKAGES:
        return ".".join(parts[2:])
    return None


class _AliasLoader(importlib.abc.Loader):
    """Loads a module that hands every name to another module (``torchair.scope`` for
    ``torch_npu.dynamo.torchair.scope``), so both names reach one module's state."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _Alias(spec.name, importlib.import_module(self.target))

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _Alias(types.ModuleType):
    def __init__(self, name: str, target: types.ModuleType) -> None:
        super().__init__(name, target.__doc__)
        self._target = target

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_target"], name)

    def __dir__(self) -> list[str]:
        return dir(self.__dict__["_target"])


def really_importable(name: str) -> bool:
    """Whether ``name`` imports without fxlab (already imported, or findable)."""
    module = sys.modules.get(name)
    if module is not None:
        return not is_standin(module)
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def is_standin(module: object) -> bool:
    origin = getattr(getattr(module, "__spec__", None), "origin", None) or ""
    return str(STANDIN_DIR) in str(origin)


@contextlib.contextmanager
def compat_layer(announce: Callable[[str], None] | None = None, lazy_npu: bool = True) -> Iterator[CompatSession]:
    """Stand in for ``torchair`` / ``torch_npu`` inside the block when they are missing.
    ``lazy_npu``: the npu device runs on the CPU from the block's first use of it (a model
    file); else from the start (a program run as a whole)."""
    # registers: the npu seed ops are defined when a layer opens (before any plugin names
    # them), not when this module is imported
    import fxlab.ops  # noqa: F401

    missing = tuple(name for name in ("torchair", "torch_npu", "npugraph_ex") if not really_importable(name))
    session = CompatSession(standing_in=missing, announce=announce)
    finder = StandinFinder(session)
    if missing:
        sys.meta_path.append(finder)
    registrations = open_session()
    try:
        with contextlib.ExitStack() as exits:
            session.exits = exits
            session.graph_only_ops = exits.enter_context(
                eager_graph_only_ops(torchair_is_real=_torchair_loaded(), torchair_stood_in="torchair" in missing)
            )
            if "torch_npu" in missing:
                session.npu_device = exits.enter_context(npu_on_cpu(announce, lazy=lazy_npu))
            _ACTIVE.append(session)
            try:
                yield session
            finally:
                _ACTIVE.remove(session)
    finally:
        close_session(registrations)
        _forget_registrations()
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        _forget_standin_modules(missing)


# The open compat-layer blocks, innermost last.
_ACTIVE: list[CompatSession] = []


def define_torch_npu_operators() -> Any:
    """Define every torch_npu operator (schema + Meta, from a torch_npu copy) for the
    innermost open block; called when the stand-in ``torch_npu`` is imported, so a model
    that never imports torch_npu pays nothing. Returns the definitions (None outside a block)."""
    session = _ACTIVE[-1] if _ACTIVE else None
    if session is None or session.exits is None:
        return None
    if session.npu_definitions is None:
        session.npu_definitions = session.exits.enter_context(torch_npu_definitions())
        if session.announce is not None:
            session.announce(session.npu_definitions.note)
    return session.npu_definitions


def npu_device_module() -> Any:
    """``torch.npu`` as the innermost open block emulates it on the CPU, the emulation
    activated (the stand-in ``torch_npu.npu`` hands every name it is asked for to it)."""
    session = _ACTIVE[-1] if _ACTIVE else None
    if session is None or session.npu_device is None:
        raise standin_gap("torch_npu.npu")
    session.npu_device.activate()
    return session.npu_device.module


def _torchair_loaded() -> bool:
    """TorchAir's own package is imported (a real install, or its sources loaded by
    fxlab's bridge before the block opened)."""
    module = sys.modules.get("torchair")
    return module is not None and not is_standin(module)


def torch_npu_definitions_so_far() -> Any:
    """The innermost open block's torch_npu definitions if made already (None otherwise):
    unlike :func:`define_torch_npu_operators`, never defines them."""
    return _ACTIVE[-1].npu_definitions if _ACTIVE else None


def _forget_registrations() -> None:
    """Patterns and configs the block's files gave TorchAir's API belong to the block."""
    forget_patterns()
    forget_observed_configs()
    TAGGED_EVENTS.clear()


def _forget_standin_modules(names: tuple[str, ...]) -> None:
    for key in list(sys.modules):
        if key.split(".", 1)[0] in names and is_standin(sys.modules[key]):
            del sys.modules[key]
