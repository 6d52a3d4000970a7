"""TorchAir's backend run end to end, entered as a user enters it, stopped where it would
capture the ACL graph.

``torch.compile(model, backend=torchair.get_npu_backend(compiler_config=config))`` with
``config.mode = "reduce-overhead"`` (or npugraph_ex's ``get_npu_backend`` with its own
config, which is what torch_npu registers as ``backend="npugraph_ex"`` and vLLM Ascend
runs): TorchAir's own decomposition table, its ``aot_module_simplified`` call and
settings, its inference compiler, ``_optimize_fx``, its converter walk and
``optimize_graph_without_runtime``, then the capture code its first call generates. On a
CPU machine its native parts are stood in (:mod:`fxlab.compat.torchair_loader`).

Where TorchAir's first call of a compiled graph would capture the ACL graph
(``_CompiledFxGraph.__call__``: generate the capture module, import it, capture and
replay), the run records the graph TorchAir would capture, its capture code and its graph
after each of its passes, keeps the call's inputs, and runs aot_autograd's functional
graph on them, so the model goes on as compiled code would and later Dynamo graphs are
reached; what that graph computed is kept beside the inputs, to run TorchAir's graph
against (:mod:`fxlab.capture.checks.aclgraph_blame`).
"""

from __future__ import annotations

import contextlib
import copy
import re
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx
from torch._guards import detect_fake_mode

import fxlab.scope
from fxlab.capture.checks.torchair_reference import ReferenceGraph, ReferenceRun
from fxlab.capture.as_npu import decomposed_as_on_npu, resolve_sdpa_as_on_npu
from fxlab.capture.checks.values import clone_tree
from fxlab.compat.aclgraph_bridge import register_patterns
from fxlab.compat.bridge import DEVICE, open_torchair, place_created_tensors_on_device
from fxlab.compat.native_standins.torch_npu_runtime import DEFAULT_SOC, torch_npu_present
from fxlab.compat.npugraph_ex_loader import locate_npugraph_ex, npugraph_ex_session
from fxlab.compat.torchair_state import fresh_compile_state, package_module, patched_once
from fxlab.errors import FxlabError
from fxlab.passes.graph_copy import copy_graph_module
from fxlab.passes.torchair_options import NPUGRAPH_EX, TorchAirOptions, configs_not_observed, to_torchair_config
from fxlab.source_lines import TORCH, kind


def _first_words(exc: BaseException) -> str:
    """The exception's type and first line; Dynamo's wrapper says only which backend
    raised, so the backend's own exception is said instead."""
    cause = getattr(exc, "inner_exception", None) or exc
    lines = [line for line in str(cause).strip().splitlines() if line.strip()]
    return f"{type(cause).__name__}: {lines[0] if lines else ''}".rstrip(": ")


# TorchAir's packages: the one `get_npu_backend` comes from, and npugraph_ex's.
_TORCHAIR_PACKAGES = ("torchair", "npugraph_ex")
# What torch.fx's interpreter adds to an exception raised at a node.
_AT_NODE = re.compile(r"While executing %(\w+)")


def _where_it_began(exc: BaseException) -> tuple[str | None, str | None]:
    """``(package/file.py:line, node)``: where the failure began, when that is TorchAir's
    own code — the innermost frame outside torch of the first exception in its chain
    (TorchAir re-raises its compiler's errors with its error code) — and the FX node its
    compiler was at; ``(None, None)`` when it began in fxlab's stand-ins or elsewhere."""
    first = getattr(exc, "inner_exception", None) or exc
    while (first.__cause__ or first.__context__) is not None:
        first = first.__cause__ or first.__context__
    frames = [f for f in traceback.extract_tb(first.__traceback__) if kind(f.filename) != TORCH]
    if not frames:
        return None, None
    parts = Path(frames[-1].filename).parts
    package = next((name for name in reversed(parts) if name in _TORCHAIR_PACKAGES), None)
    if package is None:
        return None, None
    inside = parts[len(parts) - parts[::-1].index(package) - 1 :]
    node = _AT_NODE.search(str(exc))
    return f"{'/'.join(inside)}:{frames[-1].lineno}", node.group(1) if node else None


def as_on_npu(backend: Callable[..., Any]) -> Callable[..., Any]:
    """``backend`` given each Dynamo graph with the device-dependent choices an NPU machine
    makes before any backend sees the graph (torch_npu's SDPA kernel: fxlab.capture.as_npu),
    and aot_autograd's decompositions choosing as for NPU tensors, which a CPU run would
    make otherwise; fxlab's capture makes the same ones."""

    def on_npu(gm: fx.GraphModule, example_inputs: list[Any]) -> Any:
        resolve_sdpa_as_on_npu(gm)
        with decomposed_as_on_npu(gm):
            return backend(gm, example_inputs)

    return on_npu


def backend_name(options: TorchAirOptions) -> str:
    if options.mode == NPUGRAPH_EX:
        return 'npugraph_ex\'s own backend (npugraph_ex.get_npu_backend, what backend="npugraph_ex" runs)'
    return f"TorchAir's own backend (torchair.get_npu_backend, mode {options.mode})"


def package_for(options: TorchAirOptions, torchair: Any, npugraph_ex: Any) -> tuple[Any, bool]:
    """The package whose backend the mode names, and whether it is npugraph_ex's."""
    standalone = options.mode == NPUGRAPH_EX
    if standalone and npugraph_ex is None:
        raise ValueError("npugraph_ex mode needs npugraph_ex's sources; none were loaded")
    return (npugraph_ex if standalone else torchair), standalone


def backend_config(package: Any, options: TorchAirOptions, standalone: bool) -> Any:
    """The package's own ``CompilerConfig`` set as the trace's options say (for
    npugraph_ex, its mode set as torch_npu's ``backend="npugraph_ex"`` sets it)."""
    config = to_torchair_config(package, options, flat=standalone)
    if standalone:
        config.mode = NPUGRAPH_EX
    return config


InputSet = tuple[tuple[Any, ...], dict[str, Any]]


def run_torchair_backend(
    fn: Callable[..., Any],
    calls: Sequence[InputSet],
    options: TorchAirOptions,
    torchair: Any,
    npugraph_ex: Any = None,
    *,
    dynamic: bool | None = None,
    soc: str = DEFAULT_SOC,
) -> ReferenceRun:
    """Call ``fn`` on each input set of ``calls`` in order (copies of them), compiled by
    TorchAir's (or npugraph_ex's) backend as the mode in ``options`` says, under
    ``torch.no_grad()`` (the inference path fxlab traces), in a process state as fresh as a
    user's (graph ids counted from 1); every Dynamo graph's record, in compile order."""
    package, standalone = package_for(options, torchair, npugraph_ex)
    register_patterns(package, options)
    config = backend_config(package, options, standalone)
    run = ReferenceRun(backend_name(options))
    torch._dynamo.reset()
    try:
        with (
            torch_npu_present(soc),
            patched_once(package),
            fresh_compile_state(package),
            _scopes_told(package),
            _stopped_before_capture(package, run),
            configs_not_observed(),  # its config is fxlab's choice, not the model file's
            warnings.catch_warnings(
                record=True
            ),  # TorchAir warns here of fxlab's run, not the user's: kept from stderr (its config resets the filters, so they are recorded, not ignored)
        ):
            warnings.simplefilter("ignore")
            backend = as_on_npu(package.get_npu_backend(compiler_config=config))
            compiled = torch.compile(fn, backend=backend, dynamic=dynamic)
            with torch.no_grad():
                for args, kwargs in calls:
                    compiled(*clone_tree(args), **clone_tree(kwargs))
    except Exception as exc:  # noqa: BLE001 - the graphs compiled before the failure are still TorchAir's
        run.error = _first_words(exc)
        run.raised_in, run.failed_node = _where_it_began(exc)
    finally:
        torch._dynamo.reset()
    return run


@contextlib.contextmanager
def _stopped_before_capture(package: Any, run: ReferenceRun) -> Iterator[None]:
    """TorchAir's compiler, for the block, hands aot_autograd a callable that records the
    graph its first call would capture instead of capturing it; its pass observer keeps
    the graph after each pass."""
    compiler = package_module(package, "npu_fx_compiler")
    original = compiler._NpuFxCompiler.__call__
    snapshots: list[tuple[str, fx.GraphModule]] = []

    def compile_graph(self: Any, gm: fx.GraphModule, example_inputs: list[Any]) -> Any:
        with torch.utils._mode_utils.no_dispatch():
            functional = copy.deepcopy(gm)
        snapshots.clear()
        if self.config.mode.value == "max-autotune":  # the GE graph takes its inputs as on an NPU machine
            gm, example_inputs = _on_device(gm, example_inputs)
        compiled = original(self, gm, example_inputs)
        concrete = compiled.runner
        record = ReferenceGraph(len(run.graphs), functional, concrete.fx_graph, _capture_code(compiled), list(snapshots), concrete=concrete)
        run.graphs.append(record)
        return _FirstCall(record)

    compiler._NpuFxCompiler.__call__ = compile_graph
    try:
        with _observed_passes(package, snapshots):
            yield
    finally:
        compiler._NpuFxCompiler.__call__ = original


@contextlib.contextmanager
def _scopes_told(package: Any) -> Iterator[None]:
    """TorchAir's GE conversion executes each scope marker (``need_execute=True``) for its
    kernel to push the scope's attrs onto TorchAir's scope-attr stack. Where fxlab defined
    the ``air`` markers first, fxlab's kernels run: for the block they tell TorchAir's
    stack too, as its own kernels would."""
    try:
        attrs = package_module(package, "scope._scope_attr")
    except ImportError:  # npugraph_ex has no GE conversion
        yield
        return
    listener = (attrs.scope_enter, attrs.scope_exit)
    fxlab.scope.EXECUTED_SCOPE_LISTENERS.append(listener)
    try:
        yield
    finally:
        fxlab.scope.EXECUTED_SCOPE_LISTENERS.remove(listener)


def _on_device(gm: fx.GraphModule, example_inputs: list[Any]) -> tuple[fx.GraphModule, list[Any]]:
    """The graph and its inputs as TorchAir's compiler gets them on an NPU machine: the
    inputs on the device (TorchAir makes a host input of a CPU tensor, with another GE
    graph), and the tensors the graph creates there too, as the bridge places them
    (:func:`fxlab.compat.bridge.device_inputs`); fake tensors of the graph's own fake mode."""
    mode = detect_fake_mode(example_inputs)
    if mode is None:
        return gm, example_inputs
    with torch.utils._mode_utils.no_dispatch():
        placed = copy.deepcopy(gm)
    place_created_tensors_on_device(placed)
    with mode:
        inputs = [
            torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device=DEVICE) if isinstance(v, torch.Tensor) else v
            for v in example_inputs
        ]
    return placed, inputs


@contextlib.contextmanager
def _observed_passes(package: Any, snapshots: list[tuple[str, fx.GraphModule]]) -> Iterator[None]:
    """TorchAir's ``GraphTransformObserver`` dumps the graph after each pass when its debug
    dumps are on (``TORCH_COMPILE_DEBUG``); for the block it keeps a copy of it instead."""
    observer = package_module(package, "_utils.graph_transform_observer").GraphTransformObserver
    dump_gm, apply_gm_pass = observer.dump_gm, observer.apply_gm_pass

    def keep(self: Any, gm: fx.GraphModule, file_name: str) -> None:
        snapshots.append((file_name.removeprefix("graph_after_"), copy_graph_module(gm)))

    def apply_and_keep(self: Any, pass_fn: Any, pass_name: str, enable_log: bool = False) -> Any:
        result = apply_gm_pass(self, pass_fn, pass_name, enable_log)
        keep(self, self.gm, pass_name)
        return result

    observer.dump_gm, observer.apply_gm_pass = keep, apply_and_keep
    try:
        yield
    finally:
        observer.dump_gm, observer.apply_gm_pass = dump_gm, apply_gm_pass


def _capture_code(compiled: Any) -> str | None:
    """The module TorchAir's first call generates (``get_code``), before it would import it
    and capture."""
    try:
        code = compiled.get_code()
    except Exception:  # noqa: BLE001 - the graph is the answer; the code is a bonus
        return None
    return code if isinstance(code, str) else None


class _FirstCall:
    """What aot_autograd calls in place of TorchAir's ``_CompiledFxGraph``: every call runs
    aot's functional graph, which is what the compiled model computes; the first call's
    inputs and results are kept, to run TorchAir's graph on (on CPU, its ops' kernels in
    the order the ACL graph replays them)."""

    def __init__(self, record: ReferenceGraph) -> None:
        self.record = record

    def __call__(self, *args: Any) -> Any:
        record = self.record
        first = record.inputs is None
        if first:
            record.inputs = clone_tree(list(args))
        outputs = record.functional(*args)
        if first:
            record.expected_outputs = clone_tree(list(outputs))
            record.expected_inputs_after = clone_tree(list(args))
        return outputs


class TorchAirBackend:
    """TorchAir's own backend for the aclgraph check (:data:`fxlab.capture.pipeline.
    AclGraphReference`): run in a TorchAir session already open (``--converter torchair``;
    ``npugraph_ex`` gives npugraph_ex's package when asked), or in one opened for each run
    from the sources at ``path`` (None: found as ``fxlab torchair fetch`` put them)."""

    def __init__(
        self, torchair: Any = None, npugraph_ex: Callable[[], Any] | None = None, path: Path | None = None, soc: str = DEFAULT_SOC
    ) -> None:
        self.torchair, self.npugraph_ex, self.path, self.soc = torchair, npugraph_ex, path, soc

    def __call__(self, loaded: Any, options: TorchAirOptions, dynamic: bool | None) -> ReferenceRun:
        calls = [(loaded.args, loaded.kwargs), *loaded.more_inputs]
        if self.torchair is not None:
            npugraph_ex = self.npugraph_ex() if options.mode == NPUGRAPH_EX and self.npugraph_ex is not None else None
            return run_torchair_backend(loaded.fn, calls, options, self.torchair.package, npugraph_ex, dynamic=dynamic, soc=self.soc)

        try:
            with open_torchair(self.path) as torchair, contextlib.ExitStack() as stack:
                npugraph_ex = None
                if options.mode == NPUGRAPH_EX:
                    npugraph_ex = stack.enter_context(npugraph_ex_session(locate_npugraph_ex(torchair.report.path)))
                return run_torchair_backend(loaded.fn, calls, options, torchair.package, npugraph_ex, dynamic=dynamic, soc=self.soc)
        except FxlabError as exc:  # its sources did not load: the check says so
            return ReferenceRun(backend_name(options), error=str(exc))
