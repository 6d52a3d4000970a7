"""The bridge to TorchAir's own conversion: its FX passes and fx2ge converters on a
``functional`` graph, stopped before the Graph Engine compiles, read into fxlab's IR.

Usage::

    with open_torchair(path) as torchair:          # path: None -> discover
        result = run_torchair_conversion(gm, "graph_0", torchair)  # a ConversionResult

What runs is TorchAir's max-autotune path from its ``_NpuFxCompiler``: a copy of the graph,
its FX passes (``_optimize_fx``: recover_view_inplace_pattern, optimize_sym_input,
view_to_reshape, and the user's custom passes when configured), its ``GeConcreteGraph``
walked by its ``_NpuGraphConverter``, then its Python-side GE graph passes
(``optimize_graph_without_runtime``: dead-data removal, Assign to graph output, explicit
ordering, transpose moves, normalisation). Skipped: the custom-op pre-scan (it compiles
C++ callbacks with CANN) and everything from ``GeConcreteGraph.compile`` on.

The result is the one fxlab's own conversion gives (:class:`ConversionResult`, one
:class:`NodeConversion` per FX node); a
TorchAir converter that raises becomes an ``FxlabUnsupported`` op carrying the message,
node and source line, and the walk goes on.
"""

from __future__ import annotations

import contextlib
import copy
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx
from torch._guards import TracingContext, detect_fake_mode, tracing
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
from torch.utils._mode_utils import no_dispatch

import fxlab.scope  # noqa: F401 - defines air::scope_enter/exit before TorchAir looks
from fxlab.compat.native_standins.torch_npu_runtime import torch_npu_present
from fxlab.socs import DEFAULT_SOC
from fxlab.compat.torchair_copies import find_torchair
from fxlab.compat.torchair_loader import LoadedTorchAir, LoadIssue, torchair_session
from fxlab.compat.torchair_nodes import guard_walk, recording_graph_class
from fxlab.errors import FxlabError
from fxlab.ir.ge_proto import graph_from_graph_def
from fxlab.ir.graph_inputs import SYM_PACK_ATTR, record_input_indices
from fxlab.ir.host_outputs import AS_STRIDED, GE, SYM, VIEW, VIEW_AS_COMPLEX, VIEW_AS_REAL, FxOutput, dim_text, record_fx_outputs
from fxlab.ir.model import Attr, AttrKind, IrGraph
from fxlab.passes.conversion_result import (
    FAILED_STATUSES,
    ConversionResult,
    NodeConversion,
    Status,
    mark_placeholder,
    output_names,
    target_text,
)
from fxlab.passes.output_reuse import OPTION_ATTR_PREFIX, REUSE_INPUT_OPTION, REUSE_OUTPUT_OPTION
from fxlab.source_lines import node_source

STOP_NOTE = "GE compilation and fusion do not run: this is TorchAir's GE graph after its Python-side passes, before GE compiles it"
# Where graph inputs are placed for TorchAir: any non-CPU device will do, and without
# torch_npu there is no NPU device type.
DEVICE = torch.device("meta")
SKIPPED_NOTE = "skipped: TorchAir's custom-op pre-scan (it compiles C++ callbacks with CANN)"


class TorchAirConversionError(FxlabError):
    """TorchAir's conversion failed outside a single converter (an FX or GE graph pass)."""

    exit_code = 3


@contextlib.contextmanager
def open_torchair(path: str | Path | None = None, *, discover: bool = True) -> Iterator[LoadedTorchAir]:
    """TorchAir for the block: from ``path``, or discovered (:func:`find_torchair`).
    fxlab's scope markers are defined first so both sides share ``air::scope_enter``."""
    where = find_torchair(path) if (discover or path) else None
    with torchair_session(where) as torchair:
        _load_collective_converters(torchair)
        yield torchair


# TorchAir's converters of its npu_define collectives that an NPU machine's TorchAir has
# loaded before it compiles a graph: its backend's decomposition table imports the
# all-gather ones, torch_npu.distributed's uneven collectives the reduce-scatter one.
COLLECTIVE_CONVERTER_MODULES = (
    "_ge_concrete_graph.ge_converter.experimental.hcom_allgather",
    "_ge_concrete_graph.ge_converter.experimental.hcom_reducescatter",
)


# TorchAir's hcom_broadcast names the operator it defines (``op_broadcast``, the name
# ``Library.define`` returns) only when it defines it, and hcom_allgather imports that
# name. When fxlab's compat layer defined TorchAir's npu_define operators first (a model
# ran before TorchAir was loaded: the aclgraph check's own run of TorchAir's backend), the
# name is given as TorchAir's define would have returned it.
PREDEFINED_NAMES = (("_ge_concrete_graph.ge_converter.experimental.hcom_broadcast", "op_broadcast", "broadcast"),)


def _name_predefined_operators(torchair: LoadedTorchAir) -> None:
    for module_name, attr, operator in PREDEFINED_NAMES:
        with contextlib.suppress(Exception):  # a module that does not load is reported where it is imported
            module = torchair.module(module_name)
            if not hasattr(module, attr) and hasattr(torch.ops.npu_define, operator):
                setattr(module, attr, operator)


def _load_collective_converters(torchair: LoadedTorchAir) -> None:
    _name_predefined_operators(torchair)
    for name in COLLECTIVE_CONVERTER_MODULES:
        try:
            torchair.module(name)
        except Exception as exc:  # noqa: BLE001 - reported with the session's other import failures
            torchair.report.module_failures.append(LoadIssue(f"torchair.{name}", f"{type(exc).__name__}: {exc}", None))


# -- conversion ------------------------------------------------------------------------------
def run_torchair_conversion(
    gm: fx.GraphModule, name: str, torchair: LoadedTorchAir, config: Any = None, soc: str = DEFAULT_SOC
) -> ConversionResult:
    """TorchAir's conversion of a ``functional`` graph: the GE graph, one record per FX
    node, the FX graph TorchAir converted (after its FX passes), its GE options and
    notes. ``config`` is a TorchAir ``CompilerConfig`` (default: its defaults); ``soc``
    the SoC the stand-in NPU machine reports (converters branch on it)."""
    start = time.perf_counter()
    compiler = torchair.module("npu_fx_compiler")
    config = config if config is not None else torchair.package.CompilerConfig()
    with no_dispatch():
        mutable = copy.deepcopy(gm)
    placeholders = [n.meta.get("val") for n in mutable.graph.nodes if n.op == "placeholder"]
    inputs, fake_mode, placement_note = device_inputs(placeholders, data_dependent=_has_data_dependent_sizes(mutable))
    on_device = all(v.device == DEVICE for v in inputs if isinstance(v, torch.Tensor))
    if on_device:
        place_created_tensors_on_device(mutable)
    tracing_context = tracing(TracingContext(fake_mode)) if fake_mode is not None else contextlib.nullcontext()
    with torch_npu_present(soc), tracing_context, warnings.catch_warnings():
        # TorchAir warns when a converter module it imports lazily fails; the session
        # records the same failure (LoadReport.module_failures) for the caller to report.
        warnings.filterwarnings("ignore", message="Failed to import torchair")
        graph = _recording_graph_class(torchair)(config, name)
        observer = torchair.module("_utils.graph_transform_observer").GraphTransformObserver(mutable, inputs, config)
        optimized = _stage("its FX passes", lambda: _optimize(compiler, observer, mutable, config))
        graph.save_fx_graph(optimized)
        walker = compiler._NpuGraphConverter(optimized, graph=graph, garbage_collect_values=False)
        value_pack = torchair.module("core._concrete_graph").ValuePack
        if on_device and fake_mode is not None:
            place_constants_on_device(walker, fake_mode, value_pack)
        guard_walk(walker, graph, value_pack)
        _stage("its walk over the FX graph", lambda: walker.run(*inputs))
        _stage("its GE graph passes", lambda: graph.optimize_graph_without_runtime(*inputs, observer=observer, aot_gm=gm))
        options = dict(_stage("its GE options", lambda: graph._normalize_ge_option()[0]))
    ir = graph_from_graph_def(graph.graph._proto, graph.fxlab_provenance, strict=False)
    _mark_placeholders(ir, graph.fxlab_records)
    _record_reuse_options(ir, options)
    _record_input_indices(ir, graph)
    _record_fx_outputs(ir, graph, optimized)
    machine = f"stand-in NPU machine: SoC {soc}" if not torchair.report.real else ""
    notes = [n for n in (torchair.report.native_note, STOP_NOTE, placement_note, machine) if n] + (
        [] if torchair.report.real else [SKIPPED_NOTE]
    )
    records = _complete_records(optimized, graph.fxlab_records)
    ge_options = {k: str(v) for k, v in options.items()}
    return ConversionResult(ir, records, optimized, ge_options, notes, seconds=time.perf_counter() - start)


def device_inputs(values: list[Any], *, data_dependent: bool = False) -> tuple[list[Any], Any, str]:
    """The graph inputs as TorchAir sees them on an NPU machine: on the device, not the
    host. TorchAir places a ``Data`` op on the host when its input is a CPU tensor, which
    changes its graph (``_host_tensor`` attrs, no input-output memory reuse). Fake CPU
    inputs are re-made as fake tensors of the same shape and strides on a non-CPU device
    (``meta``: no NPU device type exists without torch_npu); symbolic shapes keep the
    originals (re-making them would lose their symbols), and so does a graph with sizes
    that depend on the data (``data_dependent``): on an NPU machine TorchAir's walk runs
    in the compile's fake mode, whose shape environment gives such an op's output its
    size symbol, where a fresh fake mode refuses the op."""
    original_mode = detect_fake_mode(values)
    tensors = [v for v in values if isinstance(v, torch.Tensor)]
    symbolic = data_dependent or any(not isinstance(d, int) for t in tensors for d in (*t.shape, *t.stride()))
    if symbolic or len(tensors) != len(values):
        if original_mode is None or any(isinstance(v, torch.Tensor) and v.device.type != "cpu" for v in values):
            return values, original_mode, "graph inputs kept as host (CPU) tensors: symbolic shapes or non-tensor inputs"
        return [_on_device(v, original_mode) for v in values], original_mode, "graph inputs placed on the device, as on an NPU machine"
    fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
    remade = [fake_mode.from_tensor(torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=DEVICE)) for t in tensors]
    return remade, fake_mode, "graph inputs placed on the device, as on an NPU machine"


def _has_data_dependent_sizes(gm: fx.GraphModule) -> bool:
    """Whether a value of ``gm`` has a size only its data decides (an unbacked symbol)."""
    return any(free_unbacked_symbols(node.meta.get("val")) for node in gm.graph.nodes)


def _on_device(value: Any, fake_mode: Any) -> Any:
    """A fake CPU tensor re-made on the stand-in device in its own fake mode, so its
    symbolic sizes and strides stay the graph's symbols; anything else as it is."""
    if not isinstance(value, torch.Tensor):
        return value
    with fake_mode:
        return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device=DEVICE)


def place_created_tensors_on_device(gm: fx.GraphModule) -> int:
    """Tensors the graph creates (``full``, ``arange``, ``_to_copy(device=cpu)`` ...) are on
    the device too, as on an NPU machine where the model runs there: ``device=cpu``
    arguments become the stand-in device, so TorchAir's fake run does not mix devices.
    TorchAir's converters build the same ops whatever the device argument says.
    Returns how many nodes changed."""
    changed = 0
    for node in gm.graph.nodes:
        device = node.kwargs.get("device")
        if node.op == "call_function" and device is not None and torch.device(device).type == "cpu":
            node.kwargs = {**node.kwargs, "device": DEVICE}
            changed += 1
    if changed:
        gm.recompile()
    return changed


def place_constants_on_device(walker: fx.Interpreter, fake_mode: Any, value_pack: type) -> None:
    """Tensor constants of the graph (``_tensor_constant<k>``: a tensor the model made in
    its forward, such as transformers' empty KV cache ``torch.tensor([], device=...)``)
    are on the device too, as on an NPU machine: TorchAir's fake run of each node sees a
    fake tensor on the stand-in device, its converter the constant's value (its ``Const``).
    CPU scalars stay on the host: they mix with device tensors there as well."""
    read_attr = walker.get_attr

    def get_attr(target: Any, args: Any, kwargs: Any) -> Any:
        value = read_attr(target, args, kwargs)
        if not isinstance(value, torch.Tensor) or value.device.type != "cpu" or value.dim() == 0:
            return value
        on_device = fake_mode.from_tensor(torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device=DEVICE))
        return value_pack(on_device, value)

    vars(walker)["get_attr"] = get_attr  # this walker's own, in place of Interpreter.get_attr


def _optimize(compiler: Any, observer: Any, gm: fx.GraphModule, config: Any) -> fx.GraphModule:
    optimized = compiler._optimize_fx(gm, config, observer)
    compiler._valid_graph(optimized)
    return optimized


def _stage(what: str, run: Any) -> Any:
    try:
        return run()
    except FxlabError:
        raise
    except Exception as exc:  # noqa: BLE001 - explained with the stage that failed
        raise TorchAirConversionError(
            f"TorchAir's conversion failed in {what}: {type(exc).__name__}: {exc}. This happened outside the "
            "conversion of any one node, so the graph has no GE graph from TorchAir; fxlab's built-in conversion "
            "(without --converter torchair) does not run TorchAir's code and may get past it."
        ) from exc


def _record_reuse_options(ir: IrGraph, options: dict[str, Any]) -> None:
    """GE options are not part of a GE graph; the memory-reuse ones decide what the
    graph computes into, so they go on the graph as string attrs, named as fxlab's
    own output-reuse pass names them."""
    for key in (REUSE_INPUT_OPTION, REUSE_OUTPUT_OPTION):
        if key in options:
            ir.attrs[OPTION_ATTR_PREFIX + key] = Attr(AttrKind.STR, str(options[key]))


def _record_input_indices(ir: IrGraph, graph: Any) -> None:
    """Which graph input each ``Data`` reads once TorchAir dropped the unread ones (its
    ``_input_info_list``, one entry per remaining ``Data``), recorded as fxlab's own
    dead-data pass records it (:mod:`fxlab.ir.graph_inputs`), so the IR check feeds
    TorchAir's graph the caller's inputs as it feeds fxlab's. Entries that are no graph
    input (the RNG state TorchAir feeds itself) leave the graph without a record."""
    infos = list(getattr(graph, "_input_info_list", []))
    data_by_index = {op.attr_value("index"): op for op in ir.ops if op.type == "Data"}
    packs = [getattr(info.func, "fx_input_idx_list", None) for info in infos]  # its optimize_sym_pack's host inputs
    for position, packed in enumerate(packs):
        if packed is not None and position in data_by_index:
            data_by_index[position].set_attrs({SYM_PACK_ATTR: Attr(AttrKind.LIST_INT, tuple(packed))})
    indices = [index if isinstance(index := getattr(info.func, "fx_input_idx", None), int) else None for info in infos]
    unfed = any(index is None and packed is None for index, packed in zip(indices, packs))
    if not unfed and indices != list(range(len(indices))):
        # A Data the host fills from several inputs reads no one input: an index past them.
        beyond = max((i for i in indices if i is not None), default=-1) + 1
        record_input_indices(ir, [beyond + k if i is None else i for k, i in enumerate(indices)])


def _record_fx_outputs(ir: IrGraph, graph: Any, gm: fx.GraphModule) -> None:
    """Where TorchAir's own graph gets each FX output (its ``_fx_outputs``: a GE output,
    a view of an input or a size it makes on the host, a plain value), recorded as
    fxlab's conversion records it (:mod:`fxlab.ir.host_outputs`), so the IR check and
    the trace views read TorchAir's graph as they read fxlab's."""
    names = output_names(gm)
    mapping = getattr(graph, "_fx_outputs_mapping", {})
    outputs = []
    for index, value in enumerate(getattr(graph, "_fx_outputs", [])):
        name = names[index] if index < len(names) else ""
        kind = type(value).__name__
        if index in mapping:
            outputs.append(FxOutput(GE, name, ge_index=mapping[index]))
        elif kind == "ViewOfInput":
            view_fn = VIEW_AS_REAL if value.is_view_as_real else VIEW_AS_COMPLEX if value.is_view_as_complex else AS_STRIDED
            outputs.append(
                FxOutput(
                    VIEW,
                    name,
                    input_index=value._fx_input_index,
                    view_fn=view_fn,
                    size=tuple(map(dim_text, value._meta_output_shape)),
                    stride=tuple(map(dim_text, value._meta_output_stride)),
                    offset=dim_text(value._meta_output_offset),
                    symbols={str(k): v for k, v in value._sym_value_mapping.items()},
                )
            )
        elif kind == "SymOutput":
            outputs.append(
                FxOutput(SYM, name, expr=str(value._fx_output_smy), symbols={str(k): v for k, v in value._sym_value_mapping.items()})
            )
        else:
            outputs.append(FxOutput.plain(name, value))
    record_fx_outputs(ir, outputs)


def _mark_placeholders(ir: IrGraph, records: list[NodeConversion]) -> None:
    """TorchAir's mock ops for nodes it could not convert get fxlab's placeholder type,
    so every view treats both conversions' gaps alike."""
    reasons = {op: r for r in records if r.status in FAILED_STATUSES for op in r.ge_ops}
    for op in ir.ops:
        record = reasons.get(op.name)
        if record is not None:
            mark_placeholder(op, record.target, record.message)


def _complete_records(gm: fx.GraphModule, records: list[NodeConversion]) -> list[NodeConversion]:
    """One record per call_function node in graph order; nodes TorchAir never hands to a
    converter (``getitem`` and other Python builtins) are markers."""
    by_node = {r.node: r for r in records}
    out = []
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        out.append(by_node.get(node.name) or NodeConversion(node.name, target_text(node.target), Status.MARKER, [], "", node_source(node)))
    return out


def _recording_graph_class(torchair: LoadedTorchAir) -> Any:
    """TorchAir's ``GeConcreteGraph`` extended to record which GE ops each FX node made,
    to turn a raising converter into a placeholder, and to apply scope markers with
    TorchAir's own scope-attr stack whoever defined the ``air`` ops."""
    fx2ge = torchair.module("_ge_concrete_graph.fx2ge_converter")
    return recording_graph_class(fx2ge, torchair.module("scope._scope_attr"))
