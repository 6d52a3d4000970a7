"""Load TorchAir's Python sources from a directory, with its native parts stood in.

TorchAir lives inside the torch_npu wheel (``torch_npu/dynamo/torchair``) and imports
itself as the top-level package ``torchair``. On a CPU machine its native modules
(``core/_torchair.so`` ...) cannot load, and torch_npu itself must never be imported.
:func:`torchair_session` installs a ``sys.meta_path`` finder that serves

* ``torchair`` and ``torchair.*`` from the given directory, with each decorated
  top-level definition (a converter registration) guarded on its own, so a converter
  naming an overload this torch lacks is reported and skipped instead of dropping its
  whole module;
* TorchAir's native modules from :mod:`fxlab.compat.native_standins`;
* an empty ``torch_npu`` (:mod:`fxlab.compat.native_standins.torch_npu`) while the
  package itself is imported, unless a real torch_npu is importable; fxlab's own
  stand-in ``torchair``/``torch_npu`` (the compat layer's) are set aside meanwhile.

Leaving the session removes the finder and every module it served, and undoes what
importing TorchAir did to the process (see :mod:`fxlab.compat.torchair_state`).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import re
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from fxlab.compat.native_standins import STANDINS
from fxlab.compat.native_standins.npu_ops import torch_npu_operators
from fxlab.compat.torch_npu_ops import find_torch_npu_copy, torch_npu_definitions
from fxlab.compat.torchair_copies import locate_torchair
from fxlab.compat.torchair_state import ProcessStateGuard, attached_converters
from fxlab.compat.torchair_versions import TorchAirVersion, read_torchair_version
from fxlab.errors import FxlabError

PACKAGE = "torchair"
TORCH_NPU_STANDIN = "fxlab.compat.native_standins.torch_npu"
GUARDED_PACKAGES = ("torchair._ge_concrete_graph.ge_converter.", "torchair.ops.", "torchair._contrib.")
_FAILED_HOOK = "__fxlab_registration_failed__"
_FXLAB_DIR = Path(__file__).resolve().parents[1]
# Guarded modules compiled in this process, by (path, mtime, size): a second session
# skips re-parsing some 700 converter files.
_GUARDED_CODE: dict[tuple[str, int, int], types.CodeType] = {}


class TorchAirImportError(FxlabError):
    """TorchAir's package could not be imported with the installed torch."""


@dataclass
class LoadIssue:
    """A TorchAir module, or one registration in it, that did not load."""

    module: str
    error: str
    line: int | None = None
    definition: str | None = None  # the guarded definition's name (registrations only)
    target: str | None = None  # the decorator text naming the op, when there is one

    def describe(self) -> str:
        where = f"{self.module}:{self.line}" if self.line else self.module
        what = f"{self.definition} ({self.target})" if self.definition else "module"
        return f"{where}: {what}: {self.error}"


@dataclass
class LoadReport:
    """What loading TorchAir gave: where from, what was stood in, what failed."""

    path: Path
    version: TorchAirVersion
    torch_version: str
    standins: list[str] = field(default_factory=list)
    module_failures: list[LoadIssue] = field(default_factory=list)
    registration_failures: list[LoadIssue] = field(default_factory=list)
    converters: int = 0
    seconds: float = 0.0
    real: bool = False  # True when the importable TorchAir (with its native parts) was used

    @property
    def native_note(self) -> str:
        if self.real:
            return "TorchAir and its native parts are the installed ones; fxlab stops before GE compiles the graph"
        return (
            f"TorchAir's Python sources from {self.path} with its native parts stood in "
            f"({', '.join(self.standins) or 'none loaded'}); GE compilation and fusion do not run"
        )


_OP_NAMED = re.compile(r"torch\.ops\.([\w.]+)")
_NPU_OP_MISSING = re.compile(r"'npu' object has no attribute '(\w+)'")


def condensed_failures(issues: Sequence[LoadIssue]) -> list[str]:
    """One line for all registrations naming overloads this torch lacks, one per module
    that failed as a whole, one for the remaining registrations."""
    lacking = [i for i in issues if i.definition and i.target and "has no attribute" in i.error]
    npu_modules = [i for i in issues if not i.definition and _NPU_OP_MISSING.search(i.error)]
    modules = [i for i in issues if not i.definition and i not in npu_modules]
    other = [i for i in issues if i.definition and i not in lacking]
    lines = []
    if lacking:
        ops = ", ".join(sorted({_op_of(i) for i in lacking}))
        lines.append(f"{len(lacking)} TorchAir converter(s) not loaded: they name ops this torch does not have ({ops})")
    if npu_modules:
        names = ", ".join(f"{i.module.rsplit('.', 1)[-1]} (npu.{_NPU_OP_MISSING.search(i.error).group(1)})" for i in npu_modules)  # type: ignore[union-attr]
        lines.append(
            f"{len(npu_modules)} TorchAir converter module(s) not loaded: they name torch_npu ops, which only torch_npu defines ({names})"
        )
    lines.extend(f"TorchAir module not loaded: {i.describe()}" for i in modules)
    if other:
        lines.append(f"{len(other)} TorchAir converter(s) not loaded: " + "; ".join(i.describe() for i in other))
    return lines


def _op_of(issue: LoadIssue) -> str:
    found = _OP_NAMED.search(issue.target or "")
    return found.group(1) if found else (issue.definition or issue.module)


# -- per-registration guarding ------------------------------------------------------------
class _GuardRegistrations(ast.NodeTransformer):
    """Wrap each top-level definition whose decorators name a torch op in ``try/except``
    so one registration naming a missing overload fails alone; the failure is reported
    through a hook the loader puts in the module's globals."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()

    def visit_Module(self, node: ast.Module) -> ast.Module:
        body: list[ast.stmt] = []
        for stmt in node.body:
            target = self._op_decorator(stmt) if _is_decorated(stmt) else None
            body.append(self._guard(stmt, target) if target is not None else stmt)
        node.body = body
        return node

    def _op_decorator(self, stmt: ast.stmt) -> str | None:
        for decorator in stmt.decorator_list:  # type: ignore[attr-defined]
            text = " ".join(line.strip() for line in self.lines[decorator.lineno - 1 : decorator.end_lineno])
            if "torch.ops" in text or "register_" in text:
                return text
        return None

    def _guard(self, stmt: ast.stmt, target: str) -> ast.stmt:
        report = ast.parse(f"{_FAILED_HOOK}({stmt.name!r}, {stmt.lineno}, {target!r}, _fxlab_exc)").body[0]  # type: ignore[attr-defined]
        handler = ast.ExceptHandler(type=ast.Name("Exception", ast.Load()), name="_fxlab_exc", body=[report])
        guarded = ast.Try(body=[stmt], handlers=[handler], orelse=[], finalbody=[])
        return ast.copy_location(guarded, stmt)


def _is_decorated(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and bool(stmt.decorator_list)


def _guards_registrations(fullname: str) -> bool:
    """Converter and op-definition modules get per-registration guarding; the rest load
    as plain sources (the generated ``ge.*`` API alone is 3 MB)."""
    return fullname.startswith(GUARDED_PACKAGES)


class _TorchAirSourceLoader(importlib.machinery.SourceFileLoader):
    """Loads a TorchAir source file, recording a failure before re-raising it. Modules
    that get guarded never use bytecode caches: their compiled code differs from the file."""

    def __init__(self, fullname: str, path: str, session: _Session) -> None:
        super().__init__(fullname, path)
        self.session = session
        self.guarded = _guards_registrations(fullname)

    def get_code(self, fullname: str) -> types.CodeType | None:
        if not self.guarded:
            return super().get_code(fullname)
        path = self.get_filename(fullname)
        stat = Path(path).stat()
        key = (path, stat.st_mtime_ns, stat.st_size)
        if key not in _GUARDED_CODE:
            _GUARDED_CODE[key] = self.source_to_code(self.get_data(path), path)
        return _GUARDED_CODE[key]

    def source_to_code(self, data: Any, path: Any, *, _optimize: int = -1) -> types.CodeType:  # type: ignore[override]
        if not self.guarded:
            return super().source_to_code(data, path)
        text = data.decode("utf-8") if isinstance(data, bytes) else str(data)
        tree = _GuardRegistrations(text).visit(ast.parse(text, filename=str(path)))
        return compile(ast.fix_missing_locations(tree), str(path), "exec", dont_inherit=True)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__dict__[_FAILED_HOOK] = self.session.hook_for(module.__name__)
        try:
            super().exec_module(module)
        except BaseException as exc:
            self.session.record_module_failure(module.__name__, self.path, exc)
            raise


class _StandinLoader(importlib.abc.Loader):
    """Creates a fresh module from a stand-in's source, under TorchAir's module name."""

    def __init__(self, standin: str) -> None:
        self.standin = standin

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        spec = importlib.util.find_spec(self.standin)
        if spec is None or spec.origin is None:
            raise ImportError(f"fxlab stand-in {self.standin} is missing")
        module.__dict__["__fxlab_standin__"] = self.standin
        code = compile(Path(spec.origin).read_text(encoding="utf-8"), spec.origin, "exec")
        exec(code, module.__dict__)  # noqa: S102 - fxlab's own stand-in source


class _Session(importlib.abc.MetaPathFinder):
    """The finder, plus what it served and what failed."""

    def __init__(self, root: Path, stand_in_torch_npu: bool) -> None:
        self.root = root
        self.stand_in_torch_npu = stand_in_torch_npu
        self.served: list[str] = []
        self.standins: list[str] = []
        self.module_failures: list[LoadIssue] = []
        self.registration_failures: list[LoadIssue] = []

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname in STANDINS:
            self._served(fullname, standin=True)
            return importlib.machinery.ModuleSpec(fullname, _StandinLoader(STANDINS[fullname]))
        if fullname == PACKAGE or fullname.startswith(PACKAGE + "."):
            return self._source_spec(fullname)
        if self.stand_in_torch_npu and fullname == "torch_npu":
            self._served(fullname, standin=True)
            return importlib.machinery.ModuleSpec(fullname, _StandinLoader(TORCH_NPU_STANDIN))
        return None

    def _source_spec(self, fullname: str) -> importlib.machinery.ModuleSpec | None:
        relative = Path(*fullname.split(".")[1:])
        package_dir = self.root / relative
        if (package_dir / "__init__.py").is_file():
            init = package_dir / "__init__.py"
            loader = _TorchAirSourceLoader(fullname, str(init), self)
            spec = importlib.util.spec_from_file_location(fullname, init, loader=loader, submodule_search_locations=[str(package_dir)])
        elif (self.root / relative).with_suffix(".py").is_file():
            file = (self.root / relative).with_suffix(".py")
            spec = importlib.util.spec_from_file_location(fullname, file, loader=_TorchAirSourceLoader(fullname, str(file), self))
        else:
            return None
        self._served(fullname)
        return spec

    def _served(self, fullname: str, standin: bool = False) -> None:
        self.served.append(fullname)
        if standin:
            self.standins.append(fullname)

    def hook_for(self, module: str) -> Callable[[str, int, str, BaseException], None]:
        def registration_failed(definition: str, line: int, target: str, exc: BaseException) -> None:
            self.registration_failures.append(LoadIssue(module, _one_line(exc), line, definition, target))

        return registration_failed

    def record_module_failure(self, module: str, path: str, exc: BaseException) -> None:
        if any(issue.module == module for issue in self.module_failures):
            return
        self.module_failures.append(LoadIssue(module, _one_line(exc), _line_in(exc, path)))


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _line_in(exc: BaseException, path: str) -> int | None:
    """The last line of ``path`` in the traceback: where the module itself failed."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path:
            line = frame.lineno
    return line


@dataclass
class LoadedTorchAir:
    """A TorchAir package usable inside :func:`torchair_session`."""

    package: types.ModuleType
    report: LoadReport

    def module(self, name: str) -> types.ModuleType:
        """A TorchAir submodule by its name under ``torchair`` (imported on demand)."""
        return importlib.import_module(f"{PACKAGE}.{name}")


@contextlib.contextmanager
def torchair_session(path: str | Path | None = None) -> Iterator[LoadedTorchAir]:
    """Import TorchAir from ``path`` (or the real importable one when ``path`` is None)
    for the duration of the block; everything is undone on exit."""
    if path is None:
        yield _real_torchair()
        return
    root = locate_torchair(path)
    stashed = _stash_standins()
    session = _Session(root, stand_in_torch_npu=not _real_module_importable("torch_npu"))
    sys.meta_path.insert(0, session)
    try:
        # torch_npu's operators that TorchAir's passes name exist on an NPU machine before
        # TorchAir is imported; defined first, so its converters for them load too. The
        # guard exits while TorchAir's modules are still imported: it finds the op
        # libraries and atexit hooks to undo in them.
        with torch_npu_definitions(find_torch_npu_copy(root)), torch_npu_operators(), ProcessStateGuard():
            yield _import_package(session)
    finally:
        sys.meta_path.remove(session)
        _forget_modules(session.served)
        sys.modules.update(stashed)


def _is_ours(name: str) -> bool:
    return name in (PACKAGE, "torch_npu") or name.startswith((PACKAGE + ".", "torch_npu."))


def _is_fxlab_standin(module: types.ModuleType | None) -> bool:
    spec = getattr(module, "__spec__", None)
    loader = getattr(spec, "loader", None)
    origin = getattr(spec, "origin", None) or ""
    return type(loader).__module__.startswith("fxlab.") or origin.startswith(str(_FXLAB_DIR))


def _real_module_importable(name: str) -> bool:
    if name in sys.modules:
        return not _is_fxlab_standin(sys.modules[name])
    spec = importlib.util.find_spec(name)
    return (
        spec is not None and not type(spec.loader).__module__.startswith("fxlab.") and not (spec.origin or "").startswith(str(_FXLAB_DIR))
    )


def _stash_standins() -> dict[str, types.ModuleType]:
    """Take fxlab's own stand-in ``torchair``/``torch_npu`` (the compat layer's, active
    while a model runs) out of ``sys.modules`` for the session; a real one cannot be."""
    if PACKAGE in sys.modules and not _is_fxlab_standin(sys.modules[PACKAGE]):
        raise TorchAirImportError(
            "the installed TorchAir is already imported in this process, so TorchAir from a "
            "directory cannot be loaded beside it; drop --torchair-path (and FXLAB_TORCHAIR_PATH) "
            "to use the installed one."
        )
    names = [n for n in sys.modules if _is_ours(n) and _is_fxlab_standin(sys.modules[n])]
    return {n: sys.modules.pop(n) for n in names}


def _import_package(session: _Session) -> LoadedTorchAir:
    start = time.perf_counter()
    version = read_torchair_version(session.root)
    try:
        package = importlib.import_module(PACKAGE)
    except Exception as exc:  # noqa: BLE001 - any import failure is explained to the user
        raise TorchAirImportError(_import_failure_message(session, version, torch.__version__, exc)) from exc
    finally:
        _retire_torch_npu_standin(session)
    converter_count = _count_converters(package)
    report = LoadReport(
        path=session.root,
        version=version,
        torch_version=torch.__version__,
        standins=sorted(set(session.standins)),
        converters=converter_count,
        seconds=time.perf_counter() - start,
    )
    # Shared with the session: modules TorchAir imports lazily later are reported too.
    report.module_failures = session.module_failures
    report.registration_failures = session.registration_failures
    return LoadedTorchAir(package, report)


def _retire_torch_npu_standin(session: _Session) -> None:
    """TorchAir asks ``'torch_npu' in sys.modules`` to decide whether an NPU is there;
    after the package import the stand-in must not answer yes."""
    if session.stand_in_torch_npu:
        session.stand_in_torch_npu = False
        if getattr(sys.modules.get("torch_npu"), "__fxlab_standin__", None):
            del sys.modules["torch_npu"]


def _import_failure_message(session: _Session, version: TorchAirVersion, torch_version: str, exc: BaseException) -> str:
    failing = session.module_failures[0].describe() if session.module_failures else _one_line(exc)
    return f"TorchAir at {session.root} could not be imported with torch {torch_version}: {failing}. {version.compatibility(torch_version)}"


def _count_converters(package: types.ModuleType) -> int:
    fx2ge = sys.modules.get(f"{PACKAGE}._ge_concrete_graph.fx2ge_converter")
    if fx2ge is None:
        return 0

    return len(attached_converters()) + sum(1 for v in getattr(fx2ge, "_CONVERTERS", {}).values() if v is not None)


def _forget_modules(names: Sequence[str]) -> None:
    for name in set(names):
        sys.modules.pop(name, None)
    # Submodules imported through a parent's __path__ without passing the finder's
    # top-level check are still TorchAir's: drop them too.
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        sys.modules.pop(name, None)


def _real_torchair() -> LoadedTorchAir:
    try:
        package = importlib.import_module(PACKAGE)
    except Exception as exc:  # noqa: BLE001
        raise TorchAirImportError(
            f"TorchAir is not importable here ({_one_line(exc)}); pass --torchair-path DIR (or set "
            "FXLAB_TORCHAIR_PATH) to load TorchAir's sources with fxlab's stand-ins for its native parts."
        ) from exc
    file = getattr(package, "__file__", None)
    root = Path(file).resolve().parent if file else Path(".")
    report = LoadReport(path=root, version=read_torchair_version(root), torch_version=torch.__version__, real=True)
    report.converters = _count_converters(package)
    return LoadedTorchAir(package, report)
