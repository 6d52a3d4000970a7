"""Every torch_npu operator (schema + Meta function) on a machine without torch_npu.

torch_npu declares its own operators (``torch.ops.npu.*``: ``npu_rms_norm``,
``npu_fusion_attention`` ... about four hundred) in
``torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml`` and gives them Meta
functions in ``torch_npu/op_plugin/meta/_meta_registrations.py``. Both are plain text in
the torch_npu wheel, and importing torch_npu itself fails without CANN. With a copy of
those two files (``fxlab torchair fetch`` extracts them beside TorchAir's sources),
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
import os
import re
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from fxlab.compat.torchair_state import destroy_library

NAMESPACE = "npu"
SCHEMA_FILE = Path("csrc") / "aten" / "npu_native_functions_by_codegen.yaml"
META_FILE = Path("op_plugin") / "meta" / "_meta_registrations.py"
# The yaml sections that declare torch_npu's own operators; the others name ATen
# operators torch_npu implements for its device.
OWN_SECTIONS = ("custom", "symint")
_FUNC_LINE = re.compile(r"^\s*(?:-\s+)?func:\s*(.+?)\s*$")
_SECTION_LINE = re.compile(r"^([a-z_]+):\s*$")

# torch_npu's extra dtypes are integer codes in its operators' schemas (``int? dst_type``);
# the Meta file compares against them (its own TORCH_NPU_DTYPE_TO_STRING_MAP gives them).
NPU_DTYPE_CODES = {
    "int4": 285,
    "hifloat8": 290,
    "float8_e5m2": 291,
    "float8_e4m3fn": 292,
    "float8_e8m0fnu": 293,
    "float4_e2m1fn_x2": 296,
    "float4_e1m2fn_x2": 297,
    "float4_e2m1": 296,
    "float4_e1m2": 297,
}


@dataclass(frozen=True)
class TorchNpuCopy:
    """The two files of a torch_npu wheel this module reads."""

    root: Path  # the ``torch_npu`` package folder

    @property
    def schema_file(self) -> Path:
        return self.root / SCHEMA_FILE

    @property
    def meta_file(self) -> Path:
        return self.root / META_FILE

    @property
    def complete(self) -> bool:
        return self.schema_file.is_file() and self.meta_file.is_file()


@dataclass
class NpuDefinitions:
    """What one :func:`torch_npu_definitions` block defined."""

    copy: TorchNpuCopy | None = None
    defined: list[str] = field(default_factory=list)  # ``name[.overload]`` defined from schemas
    with_meta: set[str] = field(default_factory=set)  # operator names given a Meta function
    failures: dict[str, str] = field(default_factory=dict)  # name -> why it was not defined

    @property
    def note(self) -> str:
        if self.copy is None:
            return "torch_npu operators: no torch_npu copy found (run `fxlab torchair fetch`); only fxlab's own npu operators exist"
        return (
            f"torch_npu operators: {len(self.defined)} defined from torch_npu's schemas, "
            f"{len(self.with_meta)} with its Meta functions (no NPU kernels; a few have fxlab's CPU reference kernels)"
        )


# -- finding a copy --------------------------------------------------------------------------
def find_torch_npu_copy(torchair_dir: Path | None = None) -> TorchNpuCopy | None:
    """The torch_npu files beside a TorchAir copy (``<torch_npu>/dynamo/torchair``):
    ``torchair_dir``, else ``$FXLAB_TORCHAIR_PATH``, else the newest ``.cache/torchair``
    copy. None when no complete copy is found."""
    candidates: list[Path] = []
    if torchair_dir is not None:
        candidates.append(Path(torchair_dir))
    if os.environ.get("FXLAB_TORCHAIR_PATH"):
        candidates.append(Path(os.environ["FXLAB_TORCHAIR_PATH"]))
    with contextlib.suppress(Exception):
        from fxlab.compat.bridge import cached_torchair

        cached = cached_torchair()
        if cached is not None:
            candidates.append(cached)
    for candidate in candidates:
        for root in (candidate, *candidate.parents[:3]):
            copy = TorchNpuCopy(root)
            if root.name == "torch_npu" and copy.complete:
                return copy
    return None


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
    name, _, overload = qualified.partition(".")
    try:
        packet = getattr(getattr(torch.ops, NAMESPACE), name)
        if overload:
            getattr(packet, overload)
    except (AttributeError, RuntimeError):
        return False
    return True


def _define_schemas(library: torch.library.Library, schemas: dict[str, str], result: NpuDefinitions) -> None:
    for qualified, schema in schemas.items():
        if _is_defined(qualified):
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


def _shim_modules() -> dict[str, types.ModuleType]:
    """The torch_npu modules the Meta file imports, reduced to what it uses."""
    root = types.ModuleType("torch_npu")
    for name, code in NPU_DTYPE_CODES.items():
        setattr(root, name, code)
    root.uint8 = torch.uint8
    error_code = types.ModuleType("torch_npu.utils._error_code")

    class ErrCode:
        PARAM = VALUE = TYPE = NOT_SUPPORT = INTERNAL = UNAVAIL = ""

        def __getattr__(self, name: str) -> str:
            return ""

    error_code.ErrCode = ErrCode()
    error_code.ops_error = lambda *args, **kwargs: ""
    npu_utils = types.ModuleType("torch_npu.npu.utils")
    npu_utils.get_cann_version = lambda *args, **kwargs: ""
    npu_utils._is_gte_cann_version = lambda *args, **kwargs: True  # the newest CANN's shapes
    backends = types.ModuleType("torch_npu.npu._backends")
    backends.get_soc_version = lambda: -1
    npu = types.ModuleType("torch_npu.npu")
    npu.utils, npu._backends = npu_utils, backends
    utils = types.ModuleType("torch_npu.utils")
    utils._error_code = error_code
    root.npu, root.utils = npu, utils
    return {m.__name__: m for m in (root, error_code, npu_utils, backends, npu, utils)}


def _meta_globals(library: torch.library.Library, defined_names: set[str], result: NpuDefinitions) -> dict[str, Any]:
    """Globals for running the Meta file: its ``torch_npu`` imports served by shims, its
    ``Library``/``impl``/``has_side_effect`` narrowed to operators defined here."""
    shims = _shim_modules()
    real_import = builtins.__import__

    def shim_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if name == "torch_npu" or name.startswith("torch_npu."):
            return shims[name] if fromlist else shims["torch_npu"]
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
        from torch.fx.node import has_side_effect

        has_side_effect(op)

    namespace_builtins = dict(vars(builtins), __import__=shim_import)
    return {
        "__builtins__": namespace_builtins,
        "__name__": "torch_npu.op_plugin.meta._meta_registrations",
        "Library": shim_library,
        "impl": shim_impl,
        "has_side_effect": shim_has_side_effect,
    }


def _run_meta_file(meta_file: Path, library: torch.library.Library, defined_names: set[str], result: NpuDefinitions) -> None:
    source = meta_file.read_text(encoding="utf-8")
    # The file's own ``from torch.library import Library, impl`` would rebind the shims;
    # keep them by importing under other names.
    source = source.replace("from torch.library import Library, impl", "from torch.library import Library as _Library, impl as _impl")
    source = source.replace("from torch.fx.node import has_side_effect", "from torch.fx.node import has_side_effect as _has_side_effect")
    code = compile(source, str(meta_file), "exec")
    try:
        exec(code, _meta_globals(library, defined_names, result))  # noqa: S102 - torch_npu's own Meta file
    except Exception as exc:  # noqa: BLE001 - the operators defined so far stay usable
        result.failures["<meta file>"] = f"{type(exc).__name__}: {exc}"


# -- the block -------------------------------------------------------------------------------
@contextlib.contextmanager
def torch_npu_definitions(copy: TorchNpuCopy | None = None) -> Iterator[NpuDefinitions]:
    """Define torch_npu's missing operators for the block (found copy by default)."""
    copy = copy if copy is not None else find_torch_npu_copy()
    result = NpuDefinitions(copy=copy)
    if copy is None or not copy.complete:
        yield result
        return
    library = torch.library.Library(NAMESPACE, "FRAGMENT")
    try:
        _define_schemas(library, read_schemas(copy.schema_file), result)
        names = {q.split(".", 1)[0] for q in result.defined}
        if names:
            _run_meta_file(copy.meta_file, library, names, result)
        _functionalize_inplace(library, names)
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


@contextlib.contextmanager
def _reference_kernels(library: torch.library.Library, names: set[str]) -> Iterator[None]:
    """fxlab's CPU kernels and built-in converters for the common operators defined here."""
    from fxlab.ir.kernels.npu_reference import CPU_KERNELS
    from fxlab.passes.converters.npu import npu_converters

    for name, kernel in CPU_KERNELS.items():
        if name.split(".", 1)[0] in names:  # an operator, or one overload ("op.out")
            library.impl(name, kernel, "CPU")
    with npu_converters():
        yield
