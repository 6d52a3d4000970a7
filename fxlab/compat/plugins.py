"""Loading plugin files (the seeds' "plugin-style adaptation": Meta functions and
converters in any .py file, loaded before the model runs).

Import errors name the file and line (fxlab's model loader does the import). What a
plugin adds is recorded: the ops it defines with ``torch.library`` (so ``fxlab ops list``
shows them) and the converters it registers.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from pathlib import Path

import torch.library

from fxlab.capture.loader import load_python_file as load
from fxlab.compat.layer import torch_npu_definitions_so_far
from fxlab.ops.define import record_plugin_ops


@dataclass
class LoadedPlugin:
    path: Path
    module: types.ModuleType
    defined_ops: list[str] = field(default_factory=list)  # "ns::name" qualnames


def load_python_file(path: str | Path, role: str = "plugin") -> types.ModuleType:
    """Import a user file; failures raise :class:`fxlab.errors.ModelLoadError` with file and line."""
    return load(path, role=role)


def load_plugin(path: str | Path) -> LoadedPlugin:
    """Import one plugin file and record the custom ops it defines."""
    before = set(torch.library._defs)
    module = load_python_file(path, role="plugin")
    defined = sorted(set(torch.library._defs) - before - _torch_npu_definitions())
    record_plugin_ops(defined)
    return LoadedPlugin(Path(path), module, defined)


def _torch_npu_definitions() -> set[str]:
    """torch_npu's operators, defined by fxlab when a plugin first imports torch_npu:
    fxlab's definitions, not the plugin's."""
    definitions = torch_npu_definitions_so_far()
    return {f"npu::{name}" for name in definitions.defined} if definitions is not None else set()
