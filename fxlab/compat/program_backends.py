"""Which of a program's ``torch.compile`` backends are TorchAir's, and the config each
compiles with (``fxlab run``).

TorchAir's backends, as a program names them:

- ``torchair.get_npu_backend(compiler_config=config)`` (also ``torch_npu.dynamo.torchair``),
  and ``npugraph_ex.get_npu_backend(compiler_config=config)``: fxlab's stand-ins
  (:class:`~fxlab.compat.config.NpuBackend`) on a machine without torch_npu, or TorchAir's
  own ``functools.partial(_npu_backend, compiler_config=..., decompositions=...)``;
- the names torch_npu registers with Dynamo: ``"npu"`` (TorchAir's backend with a default
  config) and ``"npugraph_ex"`` (npugraph_ex's, its config's mode ``npugraph_ex``), as
  torch_npu's ``torch_npu/dynamo/__init__.py`` makes them;
- npugraph_ex's own entry, ``npugraph_ex.compile_fx``.

``torch.compile``'s ``options={...}`` are set on the config as TorchAir sets them
(:func:`~fxlab.compat.config.apply_compile_options`). On an NPU machine (torch_npu really
importable) the backend is TorchAir's own and compiles what the program runs; with
``torchair_dumps`` it also dumps its graphs there (``config.debug.graph_dump``), unless the
program set its own dump.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

from fxlab.capture.program import ProgramBackend
from fxlab.compat.config import CompilerConfig, NpuBackend, NpugraphExConfig, apply_compile_options
from fxlab.compat.layer import really_importable
from fxlab.passes.torchair_options import is_npugraph_ex_config

# The names torch_npu registers with Dynamo: name -> the package whose backend it is.
REGISTERED_NAMES = {"npu": "torchair", "npugraph_ex": "npugraph_ex"}
OWN_MODULES = {"torchair.npu_fx_compiler": "torchair", "npugraph_ex.npu_fx_compiler": "npugraph_ex"}
DUMP_TYPE = "pbtxt"  # TorchAir's graph dump fxlab dumps reads with the names of the FX nodes


def classifier(torchair_dumps: str | None = None) -> Callable[[Any, dict[str, Any] | None], ProgramBackend | None]:
    """The ``classify`` of :class:`~fxlab.capture.program.ProgramCapture` for this machine."""
    on_npu = really_importable("torch_npu")
    return functools.partial(torchair_backend, on_npu=on_npu, torchair_dumps=torchair_dumps if on_npu else None)


def torchair_backend(
    backend: Any, options: dict[str, Any] | None, on_npu: bool = False, torchair_dumps: str | None = None
) -> ProgramBackend | None:
    """``backend`` as one of TorchAir's, or None when it is another (inductor, eager, a
    user's own): those are not traced."""
    found = _recognise(backend, on_npu)
    if found is None:
        return None
    label, config, decompositions, real = found
    try:
        if _is_torchair_class(config):
            _apply_own_options(config, options)
        else:
            apply_compile_options(config, options)
    except ValueError as refused:  # raised at the first compile, as TorchAir's backend raises it
        return ProgramBackend(label, config, decompositions, real, refused_options=refused)
    chosen = None
    if real is not None and torchair_dumps is not None and not dump_graphs(config, torchair_dumps):
        chosen = _dump_folder(config)
    return ProgramBackend(label, config, decompositions, real, chosen)


def _recognise(backend: Any, on_npu: bool) -> tuple[str, Any, Any, Any] | None:
    """(label, config, decompositions, TorchAir's own backend or None) of a TorchAir backend."""
    if isinstance(backend, str):
        return _registered(backend, on_npu) if backend in REGISTERED_NAMES else None
    if isinstance(backend, NpuBackend):
        package = "npugraph_ex" if isinstance(backend.compiler_config, NpugraphExConfig) else "torchair"
        return f"{package}.get_npu_backend(...)", backend.compiler_config, backend.decompositions(), None
    func = backend.func if isinstance(backend, functools.partial) else None
    if func is not None and getattr(func, "__name__", "") == "_npu_backend" and func.__module__ in OWN_MODULES:
        config = backend.keywords.get("compiler_config")
        return (
            f"{OWN_MODULES[func.__module__]}.get_npu_backend(...)",
            config,
            backend.keywords.get("decompositions"),
            backend if on_npu else None,
        )
    if getattr(backend, "__name__", "") == "compile_fx" and str(getattr(backend, "__module__", "")).startswith("npugraph_ex"):
        config = _package("npugraph_ex").CompilerConfig()
        return "npugraph_ex.compile_fx", config, None, backend if on_npu else None
    return None


def _registered(name: str, on_npu: bool) -> tuple[str, Any, Any, Any]:
    """``"npu"`` / ``"npugraph_ex"``: the backend torch_npu registers under the name, with
    the config it makes (a default one; npugraph_ex's with mode ``npugraph_ex``)."""
    package = REGISTERED_NAMES[name]
    if not on_npu:
        config: Any = NpugraphExConfig() if package == "npugraph_ex" else CompilerConfig()
        return repr(name), config, None, None
    module = _package(package)
    config = module.CompilerConfig()
    if package == "npugraph_ex":
        config.mode = "npugraph_ex"
    return repr(name), config, None, module.get_npu_backend(compiler_config=config)


def _package(name: str) -> Any:
    return importlib.import_module(name)


def _is_torchair_class(config: Any) -> bool:
    """A config of TorchAir's or npugraph_ex's own classes (not fxlab's stand-ins)."""
    return not isinstance(config, (CompilerConfig, NpugraphExConfig)) and config is not None


def _apply_own_options(config: Any, options: dict[str, Any] | None) -> None:
    """``options`` on a config of TorchAir's own class, by its own function (the one its
    backend calls with them), so fxlab's stages follow what TorchAir compiles."""
    if not options:
        return
    flat = is_npugraph_ex_config(config)
    module = _package("npugraph_ex.configs.compiler_config" if flat else "torchair.configs.npugraphex_config")
    module._process_kwargs_options(config, {"options": dict(options)})


def dump_graphs(config: Any, folder: str) -> bool:
    """Turn on TorchAir's graph dump into ``folder`` on a config of TorchAir's own class
    (``config.debug.graph_dump``); False, changing nothing, when the program set its own
    dump or the config has none (npugraph_ex's flat one)."""
    debug = getattr(config, "debug", None)
    dump = getattr(debug, "graph_dump", None)
    if dump is None or getattr(getattr(dump, "type", None), "value", None) is not None:
        return False
    dump.type = DUMP_TYPE
    dump.path = folder
    return True


def _dump_folder(config: Any) -> str | None:
    """The folder the program's own config has TorchAir dump its graphs into (its working
    folder when it names none), when it dumps them."""
    dump = getattr(getattr(config, "debug", None), "graph_dump", None)
    if dump is None or getattr(getattr(dump, "type", None), "value", None) is None:
        return None
    return str(getattr(dump, "path", None) or ".")
