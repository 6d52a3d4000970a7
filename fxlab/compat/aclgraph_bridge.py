"""The aclgraph path from TorchAir's own sources: its ``_optimize_fx`` and
``AclConcreteGraph.optimize_graph_without_runtime`` (or the standalone npugraph_ex
backend's) on a ``functional`` graph, on CPU, with its native parts stood in.

What runs is TorchAir's compiler from the copy of the graph on: ``_find_mutated_user_inputs``,
``_optimize_fx`` with the mode's config, ``_valid_graph``, its converter walk
(``_NpuGraphConverter`` with an ``AclConcreteGraph``, which records the inputs),
``optimize_graph_without_runtime`` (every pass, then the ``AclGraph`` it loads, stood in)
and its code generation. Nothing is captured: there is no NPU. The graph after the passes
is what the ``aclgraph`` stage shows; tests require fxlab's own passes to give the same.

Users' ``register_replacement`` patterns are registered with TorchAir's (or npugraph_ex's)
own ``register_replacement``, once per session; their custom passes go into the config.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import time
import warnings
from typing import Any

import torch
import torch.fx as fx
from torch._guards import TracingContext, detect_fake_mode, tracing
from torch.utils._mode_utils import no_dispatch

from fxlab.capture.checks.torchair_reference import TorchAirAclGraph
from fxlab.compat.native_standins.torch_npu_runtime import torch_npu_present
from fxlab.passes.pattern_fusion import RegisteredPattern, caller_location, register_pattern
from fxlab.socs import DEFAULT_SOC
from fxlab.compat.torchair_loader import LoadedTorchAir
from fxlab.errors import FxlabError
from fxlab.passes.aclgraph.capture_info import STATIC_INPUT
from fxlab.passes.aclgraph.pipeline import graph_name
from fxlab.passes.compiler_mode import compiler_dispatch_state
from fxlab.passes.torchair_options import NPUGRAPH_EX, TorchAirOptions, observe_backend_config, to_torchair_config


class TorchAirAclGraphError(FxlabError):
    """TorchAir's aclgraph passes failed on a graph."""

    exit_code = 3


_REGISTERED: dict[int, set[int]] = {}
_PATTERN_ARGS = ("trace_fn", "extra_check", "search_fn_pattern", "scalar_workaround", "skip_duplicates")


def observe_user_registrations(package: Any) -> None:
    """While a session holds TorchAir (or npugraph_ex) for a run, the user's files import
    it for real: their ``register_replacement`` patterns and the config they hand
    ``get_npu_backend`` also reach fxlab's own passes. The package's two functions are
    wrapped for the session (its modules are dropped when it ends)."""
    name = package.__name__
    register, backend = package.register_replacement, package.get_npu_backend

    def register_replacement(search_fn: Any, replace_fn: Any, example_inputs: Any, **kwargs: Any) -> Any:
        known = {k: kwargs.get(k) for k in _PATTERN_ARGS}
        pattern = RegisteredPattern(
            search_fn,
            replace_fn,
            tuple(example_inputs),
            known["trace_fn"],
            known["extra_check"],
            known["search_fn_pattern"],
            known["scalar_workaround"],
            bool(known["skip_duplicates"]),
            f"{name}.register_replacement",
            caller_location(2),
        )
        register_pattern(pattern)
        _REGISTERED.setdefault(id(package), set()).add(id(pattern))
        return register(search_fn, replace_fn, example_inputs, **kwargs)

    def get_npu_backend(*, compiler_config: Any = None, **kwargs: Any) -> Any:
        observe_backend_config(compiler_config)
        return backend(compiler_config=compiler_config, **kwargs)

    package.register_replacement = register_replacement
    package.get_npu_backend = get_npu_backend


def register_patterns(package: Any, options: TorchAirOptions) -> None:
    """Register the user's patterns with the package's own ``register_replacement`` (once
    per package object: its pattern pass is global to the process)."""
    done = _REGISTERED.setdefault(id(package), set())
    for pattern in options.patterns:
        if id(pattern) in done:
            continue
        kwargs: dict[str, Any] = {"extra_check": pattern.extra_check} if pattern.extra_check is not None else {}
        if pattern.trace_fn is not None:
            kwargs["trace_fn"] = pattern.trace_fn
        package.register_replacement(
            search_fn=pattern.search_fn,
            replace_fn=pattern.replace_fn,
            example_inputs=list(pattern.example_inputs),
            search_fn_pattern=pattern.search_fn_pattern,
            scalar_workaround=pattern.scalar_workaround,
            skip_duplicates=pattern.skip_duplicates,
            **kwargs,
        )
        done.add(id(pattern))


def run_torchair_aclgraph(
    gm: fx.GraphModule, index: int, torchair: LoadedTorchAir, options: TorchAirOptions, npugraph_ex: Any = None, soc: str = DEFAULT_SOC
) -> TorchAirAclGraph:
    """TorchAir's aclgraph passes (npugraph_ex's, for that mode) on a copy of ``gm``."""
    start = time.perf_counter()
    standalone = options.mode == NPUGRAPH_EX
    if standalone and npugraph_ex is None:
        raise TorchAirAclGraphError("--mode npugraph_ex with --converter torchair needs npugraph_ex's sources; none were loaded.")
    with no_dispatch():
        mutable = copy.deepcopy(gm)
    inputs = _marked_inputs(mutable)
    fake_mode = detect_fake_mode(inputs)
    context = tracing(TracingContext(fake_mode)) if fake_mode is not None else contextlib.nullcontext()
    package = npugraph_ex if standalone else torchair.package
    with torch_npu_present(soc), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = _modules(package.__name__)
        register_patterns(package, options)  # as the user registers them: before any compile
        config = to_torchair_config(package, options, flat=standalone)
        # TorchAir's compiler runs inside aot_autograd, with the inputs' fake mode entered.
        with context, compiler_dispatch_state(inputs):
            graph, code = _run(module, mutable, inputs, config, gm, graph_name(index))
    notes = [torchair.report.native_note, "stopped before capture: no NPU runs the ACL graph"]
    return TorchAirAclGraph(graph.fx_graph, code, [n for n in notes if n], time.perf_counter() - start)


def _marked_inputs(gm: fx.GraphModule) -> list[Any]:
    """The graph's inputs as TorchAir's compiler receives them: the parameters and buffers
    carry ``_torchair_is_parameter``, as its backend marks aot's inputs before the call."""
    inputs = []
    for node in (n for n in gm.graph.nodes if n.op == "placeholder"):
        value = node.meta.get("val")
        if node.meta.get(STATIC_INPUT) and isinstance(value, torch.Tensor):
            value._torchair_is_parameter = True  # type: ignore[attr-defined]
        inputs.append(value)
    return inputs


def _modules(package: str) -> dict[str, Any]:
    names = {
        "compiler": "npu_fx_compiler",
        "fx2acl": "_acl_concrete_graph.fx2acl_converter",
        "observer": "_utils.graph_transform_observer",
        "graph_utils": "_utils.graph_utils",
    }
    return {key: importlib.import_module(f"{package}.{name}") for key, name in names.items()}


def _run(
    module: dict[str, Any], mutable: fx.GraphModule, inputs: list[Any], config: Any, aot_gm: fx.GraphModule, name: str
) -> tuple[Any, str | None]:
    compiler = module["compiler"]
    mutated = module["graph_utils"]._find_mutated_user_inputs(mutable)
    graph = module["fx2acl"].AclConcreteGraph(config, name=name, mutated_user_inputs=mutated)
    observer = module["observer"].GraphTransformObserver(mutable, inputs, config)
    optimized = _stage("its FX passes (_optimize_fx)", lambda: compiler._optimize_fx(mutable, config, observer))
    _stage("its scope check (_valid_graph)", lambda: compiler._valid_graph(optimized))
    graph.save_fx_graph(optimized)
    _stage("its converter walk", lambda: compiler._NpuGraphConverter(optimized, graph=graph, garbage_collect_values=False).run(*inputs))
    _stage("optimize_graph_without_runtime", lambda: graph.optimize_graph_without_runtime(*inputs, observer=observer, aot_gm=aot_gm))
    try:
        code = graph.codegen({})
    except Exception:  # noqa: BLE001 - the graph is the answer; the code is a bonus
        code = None
    return graph, code


def _stage(what: str, run: Any) -> Any:
    try:
        return run()
    except FxlabError:
        raise
    except Exception as exc:  # noqa: BLE001 - explained with the stage that failed
        raise TorchAirAclGraphError(
            f"TorchAir's aclgraph path failed in {what}: {type(exc).__name__}: {exc}. fxlab's own passes "
            "(without --converter torchair) still build the aclgraph stage."
        ) from exc
