"""Every torch_npu operator (schema + Meta function) on a machine without torch_npu.

torch_npu declares its own operators (``torch.ops.npu.*``: ``npu_rms_norm``,
``npu_fusion_attention`` ... about four hundred) in
``torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml`` and gives them Meta
functions in ``torch_npu/op_plugin/meta/_meta_registrations.py``. Both are plain text in
the torch_npu wheel, and importing torch_npu itself fails without CANN. fxlab ships what it
needs of the two files (``torch_npu_files/``: the yaml's own-operator sections and the Meta
file, made from the torch_npu wheel by ``scripts/extract_torch_npu_operators.py``, with
torch_npu's licence); a copy beside a TorchAir the user points at, or one that
``fxlab torchair fetch`` extracted for the installed torch, is preferred.
:func:`torch_npu_definitions` defines each missing operator from its schema and runs the
Meta file with its torch_npu imports answered by small shims, so models written for
Ascend capture (fake tensors need only Meta functions) and TorchAir's converters for
these operators load. Operators already defined (a real torch_npu, or fxlab's own) are
left alone, and Meta registrations the file makes for ATen operators are dropped: they
would change what torch computes for everyone.

Everything is undone when the block closes.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib.machinery
import json
import os
import re
import traceback
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import torch
from torch.fx.node import has_side_effect

import fxlab.ir.kernels  # noqa: F401 - each operator family registers its CPU kernels
from fxlab.compat.torchair_copies import cached_torchair
from fxlab.compat.torchair_state import destroy_library
from fxlab.compat.torchair_versions import read_torchair_version
from fxlab.ir.kernels.npu_reference import CPU_KERNELS, META_KERNELS
from fxlab.ir.kernels.registry import KernelFault, KernelGap
from fxlab.ir.npu_dtypes import TORCH_NPU_DTYPES
from fxlab.passes.converters.npu import npu_converters
from fxlab.passes.torchair_refusals import TORCH_NPU_OPERATORS

NAMESPACE = "npu"
META_MODULE = "torch_npu.op_plugin.meta._meta_registrations"  # the Meta file's name when torch_npu imports it
SCHEMA_FILE = Path("csrc") / "aten" / "npu_native_functions_by_codegen.yaml"
META_FILE = Path("op_plugin") / "meta" / "_meta_registrations.py"
TORCHAIR_PATH_ENV_VAR = "FXLAB_TORCHAIR_PATH"
# The copy fxlab ships: the Meta file is kept as text (``.txt``) so that it is package data,
# never a module of fxlab that tools would import, lint or type-check.
SHIPPED_DIR = Path(__file__).resolve().with_name("torch_npu_files")
SHIPPED_SCHEMA_FILE = SHIPPED_DIR / SCHEMA_FILE.name
SHIPPED_META_FILE = SHIPPED_DIR / f"{META_FILE.name}.txt"
SHIPPED_SOURCE_FILE = SHIPPED_DIR / "source.json"  # the wheel the files were made from
# The yaml sections that declare torch_npu's own operators; the others name ATen
# operators torch_npu implements for its device.
OWN_SECTIONS = ("custom", "symint")
_FUNC_LINE = re.compile(r"^\s*(?:-\s+)?func:\s*(.+?)\s*$")
_SECTION_LINE = re.compile(r"^([a-z_]+):\s*$")


@dataclass(frozen=True)
class TorchNpuCopy:
    """The two torch_npu files this module reads, and which copy they are (for the note)."""

    schema_file: Path
    meta_file: Path
    origin: str  # ``the torch_npu copy in DIR`` / ``the files fxlab ships (torch_npu X)``

    @classmethod
    def in_package(cls, root: Path) -> TorchNpuCopy:
        """The files inside a ``torch_npu`` package folder, laid out as in the wheel."""
        return cls(root / SCHEMA_FILE, root / META_FILE, f"the torch_npu copy in {root}")

    @property
    def missing(self) -> list[str]:
        """The files of the two this copy lacks."""
        return [str(path) for path in (self.schema_file, self.meta_file) if not path.is_file()]

    @property
    def complete(self) -> bool:
        return not self.missing


@dataclass
class NpuDefinitions:
    """What one :func:`torch_npu_definitions` block defined."""

    copy: TorchNpuCopy | None = None
    defined: list[str] = field(default_factory=list)  # ``name[.overload]`` defined from schemas
    already_defined: int = 0  # schemas whose operator existed before this block (an earlier one's)
    with_meta: set[str] = field(default_factory=set)  # operator names given a Meta function
    failures: dict[str, str] = field(default_factory=dict)  # name -> why it was not defined

    @property
    def note(self) -> str:
        if self.copy is None:
            return (
                "torch_npu operators: none defined, only fxlab's own npu operators exist: no complete torch_npu copy "
                "(the files fxlab ships are missing: reinstall fxlab, or run `fxlab torchair fetch`)"
            )
        if not self.copy.complete:
            return (
                f"torch_npu operators: none defined: {self.copy.origin} lacks {' and '.join(self.copy.missing)}; "
                "point --torchair-path / FXLAB_TORCHAIR_PATH at a complete copy or run `fxlab torchair fetch` again"
            )
        if not self.defined and self.already_defined:
            return f"torch_npu operators from {self.copy.origin}: all {self.already_defined} defined before, kept"
        return (
            f"torch_npu operators from {self.copy.origin}: {len(self.defined)} defined from the schemas, "
            f"{len(self.with_meta)} with the Meta functions (no NPU kernels; a few have fxlab's CPU reference kernels)"
        )


# -- finding a copy --------------------------------------------------------------------------
def find_torch_npu_copy(torchair_dir: Path | None = None) -> TorchNpuCopy | None:
    """The torch_npu files to define the operators from: beside ``torchair_dir`` (a
    TorchAir at ``<torch_npu>/dynamo/torchair``), else beside ``$FXLAB_TORCHAIR_PATH``,
    else beside the fetched TorchAir when it is built for the installed torch, else the
    files fxlab ships. None only when the shipped files are missing too."""
    for chosen in (torchair_dir, os.environ.get(TORCHAIR_PATH_ENV_VAR)):
        found = _copy_around(Path(chosen), keep_incomplete=True) if chosen else None
        if found is not None:  # an incomplete copy the user named is named back, with what it lacks
            return found
    fetched = _fetched_copy()
    return fetched if fetched is not None else shipped_copy()


def _copy_around(folder: Path, keep_incomplete: bool = False) -> TorchNpuCopy | None:
    """The torch_npu package folder at or up to three levels above ``folder``: a complete
    one, else (with ``keep_incomplete``) the first incomplete one."""
    incomplete = None
    for root in (folder, *folder.parents[:3]):
        copy = TorchNpuCopy.in_package(root)
        if root.name == "torch_npu" and root.is_dir():
            if copy.complete:
                return copy
            incomplete = incomplete or copy
    return incomplete if keep_incomplete else None


def _fetched_copy() -> TorchNpuCopy | None:
    """The copy ``fxlab torchair fetch`` extracted, when built for the installed torch."""
    cached = None
    with contextlib.suppress(Exception):
        cached = cached_torchair()
    if cached is None or not read_torchair_version(cached).matches(torch.__version__):
        return None
    return _copy_around(cached)


def shipped_copy() -> TorchNpuCopy | None:
    """The files fxlab ships (``torch_npu_files/``); None when an install lost them."""
    if not SHIPPED_SOURCE_FILE.is_file():
        return None
    version = json.loads(SHIPPED_SOURCE_FILE.read_text(encoding="utf-8"))["torch_npu"]
    copy = TorchNpuCopy(SHIPPED_SCHEMA_FILE, SHIPPED_META_FILE, f"the files fxlab ships (torch_npu {version})")
    return copy if copy.complete else None


# -- schemas ---------------------------------------------------------------------------------
def read_schemas(schema_file: Path) -> dict[str, str]:
    """``name[.overload]`` -> schema for torch_npu's own operators, in file order; a
    ``symint`` entry replaces the ``custom`` one of the same name."""
    schemas: dict[str, str] = {}
    section = ""
    for line in schema_file.read_text(encoding="utf-8").splitlines():
        heading = _SECTION_LINE.match(line)
        if heading:
            section = heading.group(1)
            continue
        found = _FUNC_LINE.match(line)
        if found and section in OWN_SECTIONS:
            schema = found.group(1)
            schemas[schema.split("(", 1)[0]] = schema
    return schemas


def _is_defined(qualified: str) -> bool:
    """Whether ``name[.overload]`` exists; a name without overload asks for the default
    one (another overload of the same name defined first does not count)."""
    name, _, overload = qualified.partition(".")
    try:
        packet = getattr(getattr(torch.ops, NAMESPACE), name)
        return (overload or "default") in packet.overloads()
    except (AttributeError, RuntimeError):
        return False


def _define_schemas(library: torch.library.Library, schemas: dict[str, str], result: NpuDefinitions) -> None:
    for qualified, schema in schemas.items():
        if _is_defined(qualified):
            result.already_defined += 1
            continue
        try:
            library.define(schema)
        except RuntimeError as exc:  # a schema this torch cannot parse: named, not fatal
            result.failures[qualified] = str(exc).splitlines()[0]
            continue
        result.defined.append(qualified)


# -- Meta functions --------------------------------------------------------------------------
class _DiscardedLibrary:
    """Stands for the Meta file's ``Library("aten", ...)``: its registrations are dropped."""


def _module(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    vars(module).update(attrs)
    return module


def _shim_modules() -> dict[str, types.ModuleType]:
    """The torch_npu modules the Meta file imports, reduced to what it uses."""

    class ErrCode:
        PARAM = VALUE = TYPE = NOT_SUPPORT = INTERNAL = UNAVAIL = ""

        def __getattr__(self, name: str) -> str:
            return ""

    error_code = _module("torch_npu.utils._error_code", ErrCode=ErrCode(), ops_error=lambda *args, **kwargs: "")
    npu_utils = _module(
        "torch_npu.npu.utils",
        get_cann_version=lambda *args, **kwargs: "",
        _is_gte_cann_version=lambda *args, **kwargs: True,  # the newest CANN's shapes
    )
    backends = _module("torch_npu.npu._backends", get_soc_version=lambda: -1)
    npu = _module("torch_npu.npu", utils=npu_utils, _backends=backends)
    utils = _module("torch_npu.utils", _error_code=error_code)
    root = _module("torch_npu", **TORCH_NPU_DTYPES, uint8=torch.uint8, npu=npu, utils=utils)
    return {m.__name__: m for m in (root, error_code, npu_utils, backends, npu, utils)}


def _meta_globals(library: torch.library.Library, defined_names: set[str], result: NpuDefinitions) -> dict[str, Any]:
    """Globals for running the Meta file: its ``torch_npu`` imports served by shims, its
    ``Library``/``impl``/``has_side_effect`` narrowed to operators defined here."""
    shims = _shim_modules()
    real_import = builtins.__import__

    def shim_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if name == "torch_npu" or name.startswith("torch_npu."):
            return shims[name] if fromlist else shims["torch_npu"]
        if fromlist and name in narrowed:  # its ``from torch.library import Library, impl``
            return narrowed[name]
        return real_import(name, globals, locals, fromlist, level)

    def shim_library(namespace: str, kind: str, dispatch_key: str = "") -> Any:
        return library if namespace == NAMESPACE else _DiscardedLibrary()

    def shim_impl(lib: Any, name: str, dispatch_key: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            base = name.split(".", 1)[0]
            if lib is library and base in defined_names:
                library.impl(name, fn, "Meta")
                result.with_meta.add(base)
            return fn

        return register

    def shim_has_side_effect(op: Any) -> None:
        has_side_effect(op)

    narrowed = {
        "torch.library": _module("torch.library", **{**vars(torch.library), "Library": shim_library, "impl": shim_impl}),
        "torch.fx.node": _module("torch.fx.node", **{**vars(torch.fx.node), "has_side_effect": shim_has_side_effect}),
    }
    namespace_builtins = dict(vars(builtins), __import__=shim_import)
    return {"__builtins__": namespace_builtins, "__name__": META_MODULE}


def _run_meta_file(meta_file: Path, library: torch.library.Library, defined_names: set[str], result: NpuDefinitions) -> None:
    # Compiled as Python compiles a module it imports, its bytecode cached beside it
    # (``__pycache__``, where the folder is writable): compiling seven thousand lines
    # again costs each trace about 0.05 s.
    loader = importlib.machinery.SourceFileLoader(META_MODULE, str(meta_file))
    try:
        code = cast(types.CodeType, loader.get_code(META_MODULE))  # a source file's loader always gives code
        exec(code, _meta_globals(library, defined_names, result))  # noqa: S102 - torch_npu's own Meta file
    except Exception as exc:  # noqa: BLE001 - the operators defined so far stay usable
        result.failures["<meta file>"] = f"{type(exc).__name__}: {exc}"


# -- the block -------------------------------------------------------------------------------
@contextlib.contextmanager
def torch_npu_definitions(copy: TorchNpuCopy | None = None) -> Iterator[NpuDefinitions]:
    """Define torch_npu's missing operators for the block (found copy by default)."""
    copy = copy if copy is not None else find_torch_npu_copy()
    if copy is None or not copy.complete:
        yield NpuDefinitions(copy=copy)
        return
    result = NpuDefinitions(copy=copy)
    schemas = read_schemas(copy.schema_file)
    # They are torch_npu's operators, not custom ops: no GE op is assumed for them.
    TORCH_NPU_OPERATORS.update(name.split(".", 1)[0] for name in schemas)
    library = torch.library.Library(NAMESPACE, "FRAGMENT")
    try:
        _define_schemas(library, schemas, result)
        names = {q.split(".", 1)[0] for q in result.defined}
        if names:
            _run_meta_file(copy.meta_file, library, names, result)
        _functionalize_inplace(library, names)
        _functionalize_to_functional_forms(library, names)
        with _reference_kernels(library, names):
            yield result
    finally:
        destroy_library(library)
        namespace = getattr(torch.ops, NAMESPACE)
        for name in {q.split(".", 1)[0] for q in result.defined}:
            namespace.__dict__.pop(name, None)  # torch.ops caches packets on the namespace


def _functionalize_inplace(library: torch.library.Library, names: set[str]) -> list[str]:
    """``X_(Tensor(a!) self, ...) -> Tensor(a!)`` as ``self.copy_(X(self, ...))`` when the
    functional ``X`` exists: torch_npu's generated functionalization does the same on an
    NPU machine, and torch cannot functionalize a custom op that returns its mutated
    input. Registered as the composite kernel, which tracing under functionalization
    always uses for mutating ops; eager keeps a CPU kernel where one is registered."""
    done = []
    for name in sorted(n for n in names if n.endswith("_") and n[:-1] in names):
        packet, functional = getattr(torch.ops.npu, name), getattr(torch.ops.npu, name[:-1])
        if "default" not in packet.overloads() or "default" not in functional.overloads():
            continue
        op = packet.default
        mutated = [a for a in op._schema.arguments if a.alias_info is not None and a.alias_info.is_write]
        if len(mutated) != 1 or op._schema.arguments[0] is not mutated[0] or len(op._schema.returns) != 1:
            continue
        library.impl(name, _copy_back(functional.default), "CompositeImplicitAutograd")
        done.append(name)
    return done


def _copy_back(functional: Any) -> Callable[..., torch.Tensor]:
    def inplace(self: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        return self.copy_(functional(self, *args, **kwargs))

    return inplace


def _functionalize_to_functional_forms(library: torch.library.Library, names: set[str]) -> list[str]:
    """An operator that writes some of its tensor arguments (``npu_scatter_pa_kv_cache``,
    ``npu_mla_prolog_v3``...) as its ``X_functional`` form, which returns the operator's
    own outputs followed by the written tensors' new values, copied back: torch_npu's
    generated functionalization does the same on an NPU machine (TorchAir converts the
    functional forms). Registered as the composite kernel, as :func:`_functionalize_inplace`."""
    done = []
    for name in sorted(n for n in names if f"{n}_functional" in names):
        packet, functional = getattr(torch.ops.npu, name), getattr(torch.ops.npu, f"{name}_functional")
        if "default" not in packet.overloads() or "default" not in functional.overloads():
            continue
        schema = packet.default._schema
        written = [a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
        if not written or len(functional.default._schema.returns) != len(schema.returns) + len(written):
            continue
        library.impl(name, _through_functional(schema, functional.default, written), "CompositeImplicitAutograd")
        done.append(name)
    return done


def _through_functional(schema: Any, functional: Any, written: list[str]) -> Callable[..., Any]:
    names = [a.name for a in schema.arguments]
    own = len(schema.returns)

    def mutating(*args: Any, **kwargs: Any) -> Any:
        bound = {**dict(zip(names, args)), **kwargs}
        results = functional(*args, **kwargs)
        for arg, value in zip(written, results[own:]):
            bound[arg].copy_(value)
        return None if own == 0 else results[0] if own == 1 else tuple(results[:own])

    return mutating


@contextlib.contextmanager
def _reference_kernels(library: torch.library.Library, names: set[str]) -> Iterator[None]:
    """fxlab's CPU kernels and built-in converters for the common operators defined here."""
    # Keys name an overload (``npu_grouped_matmul.List``) or the default one (``npu_x``).
    for name, kernel in CPU_KERNELS.items():
        if name.split(".", 1)[0] in names:
            library.impl(name, _naming_gaps(f"{NAMESPACE}.{name}", kernel), "CPU")
    for name, kernel in META_KERNELS.items():
        if name.split(".", 1)[0] in names and not torch._C._dispatch_has_kernel_for_dispatch_key(f"{NAMESPACE}::{name}", "Meta"):
            library.impl(name, kernel, "Meta")
    with npu_converters():
        yield


def _naming_gaps(op: str, kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel``, its ``NotImplementedError`` (an option it does not implement) raised as
    a :class:`KernelGap` naming ``op``, and any other error it raises as a
    :class:`KernelFault` naming ``op`` and where the kernel raised it: the checks then say
    which operator they could not run and why, and the trace goes on. A model is never
    blamed for a fault of fxlab's CPU reference of a torch_npu operator."""
    prefix = f"{op.split('.')[1]}: "  # the operator's name, as a kernel's message may start

    @functools.wraps(kernel)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return kernel(*args, **kwargs)
        except KernelGap:
            raise
        except NotImplementedError as exc:
            detail = str(exc)
            raise KernelGap(op, detail[len(prefix) :] if detail.startswith(prefix) else detail) from exc
        except Exception as exc:  # noqa: BLE001 - any other error inside fxlab's kernel is fxlab's fault
            raise KernelFault(op, f"{type(exc).__name__}: {exc}{_kernel_frame(exc)}") from exc

    return run


def _kernel_frame(exc: BaseException) -> str:
    """`` (at fxlab/ir/kernels/<module>.py:<line>)``: the innermost frame of fxlab's
    kernels the error passed through, or nothing."""
    kernels = Path(__file__).resolve().parents[1] / "ir" / "kernels"
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename).resolve()
        if path.is_relative_to(kernels):
            found = f" (at fxlab/ir/kernels/{path.relative_to(kernels).as_posix()}:{frame.lineno})"
    return found
