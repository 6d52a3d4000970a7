"""Load a user's model file (and plugin files) with errors that name the file and line.

A model file defines ``model`` and ``example_inputs`` at module level, or a function
``get_model_and_inputs()`` returning ``(callable, inputs)``; ``entry`` names another such
function. Inputs are a tuple/list of arguments, a dict of keyword arguments, or
``(args, kwargs)``; an argument is a tensor, a number, a bool, a string, None, or a list,
tuple or dict of these (nested), as serving code passes them. Several input sets (a
warm-up) are ``example_inputs_list``, or an entry's list of two or more tuples (see
:mod:`fxlab.capture.input_sets`).
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils._pytree import tree_leaves

from fxlab.capture.input_sets import INPUTS_LIST_NAME, is_input_sets
from fxlab.python_files import python_file_error
from fxlab.errors import FxlabError, ModelLoadError

DEFAULT_ENTRY = "get_model_and_inputs"


@dataclass
class LoadedModel:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    entry: str = ""
    module: types.ModuleType | None = None
    # The input sets after the first (args, kwargs), run in order: a warm-up (see
    # fxlab.capture.input_sets).
    more_inputs: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.name if self.path else getattr(self.fn, "__name__", "model")


def load_python_file(path: str | Path, role: str = "model") -> types.ModuleType:
    """Import ``path`` as a module; its folder becomes importable. Import failures become
    a :class:`ModelLoadError` naming the file and line."""
    path = Path(path).expanduser()
    refused = python_file_error(path, role)
    if refused is not None:
        raise refused
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_name = f"_fxlab_{role}_{path.stem}".replace("-", "_")
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ModelLoadError(
            f"cannot import the {role} file {path}: it is not a Python source file. Pass the .py file that defines the {role}."
        )
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        where = f"{exc.filename or path}, line {exc.lineno}" if exc.lineno else str(path)
        raise ModelLoadError(f"the {role} file {where}, has a syntax error: {exc.msg}. Fix it and run again.") from exc
    except BaseException as exc:
        sys.modules.pop(module_name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise _import_failure(exc, path, role) from exc
    return module


# Packages the examples need that fxlab installs as an extra: the extra to ask for.
EXTRAS = {"transformers": "models"}


def _import_failure(exc: BaseException, path: Path, role: str) -> ModelLoadError:
    """Why importing ``path`` failed, with the fix: a package to install when one is
    missing, else the file and line to fix."""
    where = _where_in(exc, path)
    if isinstance(exc, FxlabError):  # fxlab's own word on it (a stand-in's gap, an NPU-only call): not the file's fault
        return ModelLoadError(f"importing the {role} file {path} stopped ({where}): {exc}")
    missing = exc.name if isinstance(exc, ModuleNotFoundError) and exc.name else None
    if missing is not None:
        top = missing.split(".")[0]
        extra = EXTRAS.get(top)
        how = f"pip install 'fxlab[{extra}]' (or pip install {top})" if extra else f"pip install {top}"
        return ModelLoadError(
            f"the {role} file {path} imports {missing}, which is not installed in this Python ({where}). Install it ({how}) and run again."
        )
    return ModelLoadError(
        f"importing the {role} file {path} raised {type(exc).__name__}: {exc} ({where}). "
        + (_cause_outside_the_file(exc) or f"Fix the {role} file so that `python {path.name}` imports cleanly, then run again.")
    )


def _cause_outside_the_file(exc: BaseException) -> str | None:
    """The fix when the file is right and its run lacks something fxlab makes only when
    asked: a process group (a multi-rank model)."""
    if "Default process group has not been initialized" in str(exc):
        return (
            "The model needs a torch.distributed process group, which fxlab makes for each rank of a multi-rank "
            "trace: run `fxlab trace --nproc N MODEL.py` (or each rank under torchrun)."
        )
    return None


def _where_in(exc: BaseException, path: Path) -> str:
    """The deepest traceback frame inside ``path``, else the deepest frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    resolved = str(path.resolve())
    inside = [f for f in frames if str(Path(f.filename).resolve()) == resolved]
    found = inside or frames
    if not found:
        return "at import"
    return f"{found[-1].filename}, line {found[-1].lineno}"


def load_model(path: str | Path, entry: str | None = None, plugins: list[str | Path] | tuple = ()) -> LoadedModel:
    """Import plugins, then the model file, and find the model and its example inputs."""
    for plugin in plugins:
        load_python_file(plugin, role="plugin")
    module = load_python_file(path, role="model")
    fn, sets, entry_name = _find_model(module, Path(path), entry)
    where = f"{Path(path).name}:{entry_name}"
    args, kwargs = normalize_inputs(sets[0], where)
    more = [normalize_inputs(s, f"{where} input set {number}") for number, s in enumerate(sets[1:], start=1)]
    return LoadedModel(fn=fn, args=args, kwargs=kwargs, path=Path(path), entry=entry_name, module=module, more_inputs=more)


def load_object(fn: Any, inputs: Any, plugins: list[str | Path] | tuple = ()) -> LoadedModel:
    """Import plugins, then take ``fn`` (an ``nn.Module`` or a function) and its inputs as
    a model file's ``model`` and ``example_inputs`` (a list of input sets: a warm-up)."""
    for plugin in plugins:
        load_python_file(plugin, role="plugin")
    name = getattr(fn, "__name__", type(fn).__name__)
    if not callable(fn):
        raise ModelLoadError(f"the model is {_describe(fn)}, not something fxlab can call. Pass an nn.Module or a function.")
    if inputs is None:
        raise ModelLoadError(f"{name}: no inputs were given. Pass the example inputs the model is called with.")
    sets = list(inputs) if is_input_sets(inputs) else [inputs]
    args, kwargs = normalize_inputs(sets[0], name)
    more = [normalize_inputs(s, f"{name} input set {number}") for number, s in enumerate(sets[1:], start=1)]
    return LoadedModel(fn=fn, args=args, kwargs=kwargs, entry="model", more_inputs=more)


def _find_model(module: types.ModuleType, path: Path, entry: str | None) -> tuple[Any, list[Any], str]:
    """The model, its input sets (one, or a warm-up's several) and the name it was found by."""
    if entry is not None:
        return (*_entry_input_sets(module, path, entry), entry)
    if hasattr(module, "model") and (hasattr(module, "example_inputs") or hasattr(module, INPUTS_LIST_NAME)):
        if not callable(module.model):
            raise ModelLoadError(
                f"{path}: `model` is {_describe(module.model)}, not something fxlab can call. "
                "Set `model` to an nn.Module or a function taking the example inputs."
            )
        return module.model, _module_input_sets(module, path), "model"
    if hasattr(module, DEFAULT_ENTRY):
        return (*_entry_input_sets(module, path, DEFAULT_ENTRY), DEFAULT_ENTRY)
    if hasattr(module, "model"):
        raise ModelLoadError(
            f"{path} defines `model` but no inputs to call it with: fxlab looked for module-level `example_inputs` "
            f"(or `{INPUTS_LIST_NAME}`). Define `example_inputs = (...)` beside `model`, or a function "
            f"`{DEFAULT_ENTRY}()` returning (model, inputs)."
        )
    raise ModelLoadError(
        f"{path} defines no model to trace: fxlab looked for module-level `model` and "
        f"`example_inputs`, then for a function `{DEFAULT_ENTRY}()` returning (model, inputs). "
        "Define one of them, or name your function with --entry NAME."
    )


def _module_input_sets(module: types.ModuleType, path: Path) -> list[Any]:
    """``[example_inputs]``, or the input sets of ``example_inputs_list`` (a warm-up)."""
    if not hasattr(module, INPUTS_LIST_NAME):
        return [module.example_inputs]
    sets = getattr(module, INPUTS_LIST_NAME)
    if not isinstance(sets, list) or not sets:
        raise ModelLoadError(
            f"{path}: `{INPUTS_LIST_NAME}` is {_describe(sets)}; give a non-empty list of input sets, each as example_inputs would be."
        )
    return sets


def _entry_input_sets(module: types.ModuleType, path: Path, entry: str) -> tuple[Any, list[Any]]:
    fn, inputs = _call_entry(module, path, entry)
    return fn, list(inputs) if is_input_sets(inputs) else [inputs]


def _call_entry(module: types.ModuleType, path: Path, entry: str) -> tuple[Any, Any]:
    fn = getattr(module, entry, None)
    if not callable(fn):
        found = "is not callable" if hasattr(module, entry) else "is not defined"
        raise ModelLoadError(f"--entry {entry}: `{entry}` {found} in {path}. Give the name of a function returning (model, inputs).")
    try:
        result = fn()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit too: a model file's exit() must not end fxlab silently
        raise ModelLoadError(
            f"{path}: {entry}() raised {type(exc).__name__}: {exc} ({_where_in(exc, path)}). "
            + (_cause_outside_the_file(exc) or f"Fix {entry}() so that it returns (model, inputs).")
        ) from exc
    if not (isinstance(result, (tuple, list)) and len(result) == 2 and callable(result[0])):
        raise ModelLoadError(
            f"{path}: {entry}() returned {_describe(result)}; it must return a pair (model, inputs) "
            "where model is an nn.Module or function and inputs a tuple of arguments or (args, kwargs)."
        )
    return result[0], result[1]


# What an example input may hold, as serving code passes it: tensors, Python numbers and
# flags, strings, dtypes, None, and lists, tuples and dicts of these, nested.
_PLAIN_LEAVES = (torch.Tensor, bool, int, float, complex, str, type(None), torch.dtype, torch.device)


def normalize_inputs(inputs: Any, where: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``(args, kwargs)`` from a tensor, a tuple/list of arguments, a dict of keyword
    arguments, or ``(args, kwargs)``. An argument is any pytree (lists, tuples, dicts,
    nested) of tensors, numbers, bools, strings, dtypes and None: ``([t1, t2], 3, None)``.
    A pair of a list/tuple and a dict is read as ``(args, kwargs)``."""
    args: tuple[Any, ...]
    if isinstance(inputs, torch.Tensor):
        args, kwargs = (inputs,), {}
    elif isinstance(inputs, (tuple, list)) and len(inputs) == 2 and isinstance(inputs[1], dict) and isinstance(inputs[0], (tuple, list)):
        args, kwargs = tuple(inputs[0]), dict(inputs[1])
    elif isinstance(inputs, (tuple, list)):
        args, kwargs = tuple(inputs), {}
    elif isinstance(inputs, dict):
        args, kwargs = (), dict(inputs)
    else:
        raise ModelLoadError(f"{where}: example inputs are {_describe(inputs)}; give a tuple of arguments, or (args, kwargs).")
    bad = [f"argument {i} {_odd_leaf(a)}" for i, a in enumerate(args) if _odd_leaf(a)]
    bad += [f"keyword {k!r} {_odd_leaf(v)}" for k, v in kwargs.items() if _odd_leaf(v)]
    if bad:
        raise ModelLoadError(
            f"{where}: example inputs hold tensors, numbers, bools, strings, None and lists, tuples or dicts of them, "
            f"but {', '.join(bad)}. Pass the object's tensors instead, or build it inside the model."
        )
    return args, kwargs


def _odd_leaf(value: Any) -> str:
    """What in ``value`` is not an example input fxlab can pass and compare ("" if all is)."""
    odd = [leaf for leaf in tree_leaves(value) if not isinstance(leaf, _PLAIN_LEAVES)]
    if not odd:
        return ""
    return f"holds {_describe(odd[0])}" if odd[0] is not value else f"is {_describe(value)}"


def _describe(value: Any) -> str:
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    if isinstance(value, (tuple, list)):
        return f"a {name} of {len(value)}"
    return f"{article} {name}"
