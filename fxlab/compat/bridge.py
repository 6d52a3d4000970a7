"""The bridge to TorchAir's own conversion: its FX passes and fx2ge converters on a
``functional`` graph, stopped before the Graph Engine compiles, read into fxlab's IR.

Usage::

    with open_torchair(path) as torchair:          # path: None -> discover
        graph, statuses = convert_with_torchair(gm, "graph_0", torchair)

What runs is TorchAir's max-autotune path from its ``_NpuFxCompiler``: a copy of the graph,
its FX passes (``_optimize_fx``: recover_view_inplace_pattern, optimize_sym_input,
view_to_reshape, and the user's custom passes when configured), its ``GeConcreteGraph``
walked by its ``_NpuGraphConverter``, then its Python-side GE graph passes
(``optimize_graph_without_runtime``: dead-data removal, Assign to graph output, explicit
ordering, transpose moves, normalisation). Skipped: the custom-op pre-scan (it compiles
C++ callbacks with CANN) and everything from ``GeConcreteGraph.compile`` on.

Per FX node the conversion is recorded as in fxlab's own pass (``NodeConversion``); a
TorchAir converter that raises becomes an ``FxlabUnsupported`` op carrying the message,
node and source line, and the walk goes on.
"""

from __future__ import annotations

import contextlib
import copy
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import torch
import torch.fx as fx

from fxlab.compat.native_standins.torch_npu_runtime import DEFAULT_SOC, torch_npu_present
from fxlab.compat.torchair_loader import LoadedTorchAir, locate_torchair, torchair_session
from fxlab.compat.torchair_versions import read_torchair_version, release_of
from fxlab.errors import FxlabError
from fxlab.ir.model import Attr, AttrKind, IrGraph
from fxlab.passes.convert_to_ascend_ir import FAILED_STATUSES, UNSUPPORTED_OP_TYPE, NodeConversion, Status, node_source

ENV_VAR = "FXLAB_TORCHAIR_PATH"
CACHE_DIR = Path(".cache") / "torchair"
STOP_NOTE = "GE compilation and fusion do not run: this is TorchAir's GE graph after its Python-side passes, before GE compiles it"
# Where graph inputs are placed for TorchAir: any non-CPU device will do, and without
# torch_npu there is no NPU device type.
DEVICE = torch.device("meta")
SKIPPED_NOTE = "skipped: TorchAir's custom-op pre-scan (it compiles C++ callbacks with CANN)"


class TorchAirConversionError(FxlabError):
    """TorchAir's conversion failed outside a single converter (an FX or GE graph pass)."""

    exit_code = 3


@dataclass
class TorchAirConversion:
    """TorchAir's answer for one graph."""

    graph: IrGraph
    nodes: list[NodeConversion]
    fx_graph: fx.GraphModule  # the graph after TorchAir's FX passes: what its converters walked
    options: dict[str, str] = field(default_factory=dict)  # GE compile options TorchAir would pass
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def partial(self) -> bool:
        return any(n.status in FAILED_STATUSES for n in self.nodes)


# -- finding TorchAir ----------------------------------------------------------------------
def find_torchair(explicit: str | Path | None = None) -> Path | None:
    """Where to load TorchAir from: ``explicit``, else ``$FXLAB_TORCHAIR_PATH``, else
    ``None`` when the installed TorchAir is importable, else the newest copy in
    ``.cache/torchair/`` suiting the installed torch. Raises when nothing is found."""
    if explicit:
        return locate_torchair(explicit)
    if os.environ.get(ENV_VAR):
        return locate_torchair(os.environ[ENV_VAR])
    if installed_torchair_importable():
        return None
    cached = cached_torchair()
    if cached is not None:
        return cached
    raise TorchAirNotFoundError(
        "no TorchAir found: it is not importable here and neither --torchair-path nor "
        f"{ENV_VAR} is set. Run `fxlab torchair fetch` to download the torch_npu wheel "
        "matching your torch and extract TorchAir's sources into your cache folder (torch_npu is "
        "not installed), or pass --torchair-path DIR."
    )


class TorchAirNotFoundError(FxlabError):
    """No TorchAir copy could be found."""


def installed_torchair_importable() -> bool:
    """True when a real TorchAir (not fxlab's stand-in) can be imported."""
    import importlib.util

    spec = importlib.util.find_spec("torchair")
    if spec is None or spec.origin is None or type(spec.loader).__module__.startswith("fxlab."):
        return False  # absent, or served by fxlab (a stand-in or a session's finder)
    return (Path(spec.origin).parent / "_ge_concrete_graph").is_dir()


def cached_torchair(roots: list[Path] | None = None) -> Path | None:
    """The copy in ``<cache>/torchair/<version>/`` (``fxlab torchair fetch``'s, or a
    checkout's ``.cache/torchair/``) closest to (not above) the installed torch."""
    from fxlab.compat.torchair_fetch import torchair_cache_dir

    folders = (
        [root / CACHE_DIR for root in roots]
        if roots
        else [torchair_cache_dir(), *(root / CACHE_DIR for root in (Path.cwd(), Path(__file__).resolve().parents[2]))]
    )
    found: list[tuple[tuple[int, ...], Path]] = []
    for folder in folders:
        for candidate in sorted(folder.glob("*/torch_npu/dynamo/torchair")):
            release = read_torchair_version(candidate).torch_release or release_of(candidate.parts[-4])
            found.append((release, candidate))
    wanted = release_of(torch.__version__)
    suitable = [f for f in found if f[0] <= wanted] or found
    return max(suitable, key=lambda f: f[0])[1].resolve() if suitable else None


@contextlib.contextmanager
def open_torchair(path: str | Path | None = None, *, discover: bool = True) -> Iterator[LoadedTorchAir]:
    """TorchAir for the block: from ``path``, or discovered (:func:`find_torchair`).
    fxlab's scope markers are defined first so both sides share ``air::scope_enter``."""
    with contextlib.suppress(ImportError):
        import fxlab.scope  # noqa: F401 - defines air::scope_enter/exit before TorchAir looks
    where = find_torchair(path) if (discover or path) else None
    with torchair_session(where) as torchair:
        yield torchair


# -- conversion ------------------------------------------------------------------------------
def convert_with_torchair(gm: fx.GraphModule, name: str, torchair: LoadedTorchAir) -> tuple[IrGraph, list[NodeConversion]]:
    """TorchAir's conversion of a ``functional`` graph: the IR graph and per-node statuses."""
    result = run_torchair_conversion(gm, name, torchair)
    return result.graph, result.nodes


def run_torchair_conversion(
    gm: fx.GraphModule, name: str, torchair: LoadedTorchAir, config: Any = None, soc: str = DEFAULT_SOC
) -> TorchAirConversion:
    """As :func:`convert_with_torchair`, with the FX graph TorchAir converted, its GE
    options and notes. ``config`` is a TorchAir ``CompilerConfig`` (default: its defaults);
    ``soc`` the SoC the stand-in NPU machine reports (converters branch on it)."""
    from torch._guards import TracingContext, tracing
    from torch.utils._mode_utils import no_dispatch

    from fxlab.compat.torchair_ir import ir_graph

    start = time.perf_counter()
    compiler = torchair.module("npu_fx_compiler")
    config = config if config is not None else torchair.package.CompilerConfig()
    with no_dispatch():
        mutable = copy.deepcopy(gm)
    inputs, fake_mode, placement_note = device_inputs([n.meta.get("val") for n in mutable.graph.nodes if n.op == "placeholder"])
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
        if on_device and fake_mode is not None:
            place_constants_on_device(walker, fake_mode, torchair.module("core._concrete_graph").ValuePack)
        _stage("its walk over the FX graph", lambda: walker.run(*inputs))
        _stage("its GE graph passes", lambda: graph.optimize_graph_without_runtime(*inputs, observer=observer, aot_gm=gm))
        options = dict(_stage("its GE options", lambda: graph._normalize_ge_option()[0]))
    ir = ir_graph(graph.graph._proto, graph.fxlab_provenance)
    _mark_placeholders(ir, graph.fxlab_records)
    _record_reuse_options(ir, options)
    _record_input_indices(ir, graph)
    _record_fx_outputs(ir, graph, optimized)
    machine = f"stand-in NPU machine: SoC {soc}" if not torchair.report.real else ""
    notes = [n for n in (torchair.report.native_note, STOP_NOTE, placement_note, machine) if n] + (
        [] if torchair.report.real else [SKIPPED_NOTE]
    )
    records = _complete_records(optimized, graph.fxlab_records)
    return TorchAirConversion(ir, records, optimized, {k: str(v) for k, v in options.items()}, notes, time.perf_counter() - start)


def device_inputs(values: list[Any]) -> tuple[list[Any], Any, str]:
    """The graph inputs as TorchAir sees them on an NPU machine: on the device, not the
    host. TorchAir places a ``Data`` op on the host when its input is a CPU tensor, which
    changes its graph (``_host_tensor`` attrs, no input-output memory reuse). Fake CPU
    inputs are re-made as fake tensors of the same shape and strides on a non-CPU device
    (``meta``: no NPU device type exists without torch_npu); symbolic shapes keep the
    originals (re-making them would lose their symbols)."""
    from torch._guards import detect_fake_mode
    from torch._subclasses.fake_tensor import FakeTensorMode

    original_mode = detect_fake_mode(values)
    tensors = [v for v in values if isinstance(v, torch.Tensor)]
    symbolic = any(not isinstance(d, int) for t in tensors for d in (*t.shape, *t.stride()))
    if symbolic or len(tensors) != len(values):
        if original_mode is None or any(isinstance(v, torch.Tensor) and v.device.type != "cpu" for v in values):
            return values, original_mode, "graph inputs kept as host (CPU) tensors: symbolic shapes or non-tensor inputs"
        return [_on_device(v, original_mode) for v in values], original_mode, "graph inputs placed on the device, as on an NPU machine"
    fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
    remade = [fake_mode.from_tensor(torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=DEVICE)) for t in tensors]
    return remade, fake_mode, "graph inputs placed on the device, as on an NPU machine"


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

    walker.get_attr = get_attr


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
            f"TorchAir's conversion failed in {what}: {type(exc).__name__}: {exc}. This is outside any "
            "single converter; the built-in conversion (without --converter torchair) still works."
        ) from exc


def _record_reuse_options(ir: IrGraph, options: dict[str, Any]) -> None:
    """GE options are not part of a GE graph; the memory-reuse ones decide what the
    graph computes into, so they go on the graph as string attrs, named as fxlab's
    own output-reuse pass names them."""
    from fxlab.passes.output_reuse import OPTION_ATTR_PREFIX, REUSE_INPUT_OPTION, REUSE_OUTPUT_OPTION

    for key in (REUSE_INPUT_OPTION, REUSE_OUTPUT_OPTION):
        if key in options:
            ir.attrs[OPTION_ATTR_PREFIX + key] = Attr(AttrKind.STR, str(options[key]))


def _record_input_indices(ir: IrGraph, graph: Any) -> None:
    """Which graph input each ``Data`` reads once TorchAir dropped the unread ones (its
    ``_input_info_list``, one entry per remaining ``Data``), recorded as fxlab's own
    dead-data pass records it (:mod:`fxlab.ir.graph_inputs`), so the IR check feeds
    TorchAir's graph the caller's inputs as it feeds fxlab's. Entries that are no graph
    input (the RNG state TorchAir feeds itself) leave the graph without a record."""
    from fxlab.ir.graph_inputs import SYM_PACK_ATTR, record_input_indices

    infos = list(getattr(graph, "_input_info_list", []))
    data_by_index = {op.attr_value("index"): op for op in ir.ops if op.type == "Data"}
    for position, info in enumerate(infos):
        packed = getattr(info.func, "fx_input_idx_list", None)  # its optimize_sym_pack's host input
        if packed is not None and position in data_by_index:
            data_by_index[position].set_attrs({SYM_PACK_ATTR: Attr(AttrKind.LIST_INT, tuple(packed))})
    indices = [getattr(info.func, "fx_input_idx", None) for info in infos]
    fed = [i for i, info in zip(indices, infos) if i is not None or getattr(info.func, "fx_input_idx_list", None) is None]
    if None not in fed and indices != list(range(len(indices))):
        # A Data the host fills from several inputs reads no one input: an index past them.
        beyond = max((i for i in indices if i is not None), default=-1) + 1
        record_input_indices(ir, [beyond + k if i is None else i for k, i in enumerate(indices)])


def _record_fx_outputs(ir: IrGraph, graph: Any, gm: fx.GraphModule) -> None:
    """Where TorchAir's own graph gets each FX output (its ``_fx_outputs``: a GE output,
    a view of an input or a size it makes on the host, a plain value), recorded as
    fxlab's conversion records it (:mod:`fxlab.ir.host_outputs`), so the IR check and
    the trace views read TorchAir's graph as they read fxlab's."""
    from fxlab.ir.host_outputs import AS_STRIDED, GE, SYM, VALUE, VIEW, VIEW_AS_COMPLEX, VIEW_AS_REAL, FxOutput, record_fx_outputs

    output = next(n for n in gm.graph.nodes if n.op == "output")
    names = [a.name if isinstance(a, fx.Node) else "" for a in _flat(output.args[0])]
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
                    size=tuple(map(_sym_text, value._meta_output_shape)),
                    stride=tuple(map(_sym_text, value._meta_output_stride)),
                    offset=_sym_text(value._meta_output_offset),
                    symbols={str(k): v for k, v in value._sym_value_mapping.items()},
                )
            )
        elif kind == "SymOutput":
            outputs.append(
                FxOutput(SYM, name, expr=str(value._fx_output_smy), symbols={str(k): v for k, v in value._sym_value_mapping.items()})
            )
        else:
            plain = value if value is None or isinstance(value, (bool, int, float, str)) else None
            outputs.append(FxOutput(VALUE, name, expr=repr(value), value=plain))
    record_fx_outputs(ir, outputs)


def _sym_text(value: Any) -> int | str:
    return value if isinstance(value, int) else str(value)


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return [value]


def _mark_placeholders(ir: IrGraph, records: list[NodeConversion]) -> None:
    """TorchAir's mock ops for nodes it could not convert get fxlab's placeholder type,
    so every view treats both conversions' gaps alike."""
    reasons = {op: r for r in records if r.status in FAILED_STATUSES for op in r.ge_ops}
    for op in ir.ops:
        record = reasons.get(op.name)
        if record is not None:
            op.set_attrs({"_fxlab_unsupported": Attr(AttrKind.STR, record.target), "_fxlab_reason": Attr(AttrKind.STR, record.message)})
            op.type = UNSUPPORTED_OP_TYPE


def _complete_records(gm: fx.GraphModule, records: list[NodeConversion]) -> list[NodeConversion]:
    """One record per call_function node in graph order; nodes TorchAir never hands to a
    converter (``getitem`` and other Python builtins) are markers."""
    by_node = {r.node: r for r in records}
    out = []
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        out.append(by_node.get(node.name) or NodeConversion(node.name, str(node.target), Status.MARKER, [], "", node_source(node)))
    return out


def _recording_graph_class(torchair: LoadedTorchAir) -> Any:
    """TorchAir's ``GeConcreteGraph`` extended to record which GE ops each FX node made,
    to turn a raising converter into a placeholder, and to apply scope markers with
    TorchAir's own scope-attr stack whoever defined the ``air`` ops."""
    fx2ge = torchair.module("_ge_concrete_graph.fx2ge_converter")
    from fxlab.compat.torchair_nodes import recording_graph_class

    return recording_graph_class(fx2ge, torchair.module("scope._scope_attr"))
