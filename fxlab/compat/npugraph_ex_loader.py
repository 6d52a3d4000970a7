"""Load torch_npu's standalone ``npugraph_ex`` backend from its sources, inside a TorchAir
session (:func:`fxlab.compat.torchair_loader.torchair_session`).

npugraph_ex ships beside TorchAir in the torch_npu wheel (``torch_npu/dynamo/npugraph_ex``)
and imports itself as the top-level package ``npugraph_ex``, as vLLM Ascend imports it. It
has no native modules; it needs torch_npu's operators (the TorchAir session defines them)
and, while its passes run, ``torch_npu`` in ``sys.modules``
(:func:`fxlab.compat.native_standins.torch_npu_runtime.torch_npu_present`). Importing it
installs signal handlers, an ``atexit`` hook and operator libraries: the session undoes
them and forgets its modules on exit.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from fxlab.compat.torchair_loader import _is_fxlab_standin
from fxlab.compat.torchair_state import ProcessStateGuard
from fxlab.errors import FxlabError

PACKAGE = "npugraph_ex"


class NpugraphExNotFoundError(FxlabError):
    """No npugraph_ex sources beside the TorchAir copy."""


def locate_npugraph_ex(torchair_root: Path) -> Path:
    """npugraph_ex's folder beside a TorchAir copy (``.../dynamo/torchair`` ->
    ``.../dynamo/npugraph_ex``)."""
    candidate = Path(torchair_root).parent / PACKAGE
    if (candidate / "__init__.py").is_file() and (candidate / "npu_fx_compiler.py").is_file():
        return candidate
    raise NpugraphExNotFoundError(
        f"no npugraph_ex sources beside {torchair_root} (looked for {candidate}). Run `fxlab torchair fetch` again: "
        "it extracts torch_npu's standalone npugraph_ex backend beside TorchAir."
    )


def _drop_standin() -> None:
    """A model file traced with the stand-in npugraph_ex keeps the objects it made; the
    names go, so this session imports the real package (the compat layer, which owns the
    stand-in, has nothing left to forget). A real npugraph_ex already imported stays."""
    if PACKAGE in sys.modules and not _is_fxlab_standin(sys.modules[PACKAGE]):
        raise NpugraphExNotFoundError("npugraph_ex is already imported in this process; its sources cannot be loaded beside it.")
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, root: Path) -> None:
        self.root = root

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != PACKAGE and not fullname.startswith(PACKAGE + "."):
            return None
        relative = Path(*fullname.split(".")[1:])
        folder = self.root / relative
        if (folder / "__init__.py").is_file():
            return importlib.util.spec_from_file_location(fullname, folder / "__init__.py", submodule_search_locations=[str(folder)])
        if folder.with_suffix(".py").is_file():
            return importlib.util.spec_from_file_location(fullname, folder.with_suffix(".py"))
        return None


@contextlib.contextmanager
def npugraph_ex_session(root: Path) -> Iterator[types.ModuleType]:
    """``npugraph_ex`` imported from ``root`` for the block; undone on exit."""
    _drop_standin()
    finder = _Finder(Path(root))
    sys.meta_path.insert(0, finder)
    try:
        with ProcessStateGuard():
            yield importlib.import_module(PACKAGE)
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            sys.modules.pop(name, None)
