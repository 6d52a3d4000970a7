"""``fxlab diff``: two stages of one model's trace, the built-in Ascend IR against
TorchAir's, or two saved traces, node by node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from fxlab.cli import console
from fxlab.cli.common import EntryOpt, ModeOpt, PluginOpt, open_session, request_of
from fxlab.cli.app import app
from fxlab.cli.dumps_command import npu_phase_diff
from fxlab.cli.saved_trace import is_saved_trace, load_saved_trace
from fxlab.errors import UsageError
from fxlab.ir.json_values import dumps_strict
from fxlab.passes.torchair_options import check_mode
from fxlab.stage_names import ACLGRAPH, ASCEND_IR, ATEN, FUNCTIONAL, FX_STAGES, PRE_GE

IR_STAGES = (ASCEND_IR, f"{ASCEND_IR}:torchair")
TORCHAIR_STAGE = "ascend_ir:torchair"


@app.command(
    "diff",
    help=(
        "Diff two stages of MODEL.py node by node, grouped by source line: what functionalization "
        "did to in-place ops (add_ -> add + copy_ epilogue, a custom in-place op -> "
        "auto_functionalized_v2 + getitems), what TorchAir's passes did (pre_ge in max-autotune mode, "
        "aclgraph in reduce-overhead / npugraph_ex mode: what re-inplacing put back), which nodes were added or "
        "removed. Or diff fxlab's Ascend IR with TorchAir's own conversion op by op, or two saved "
        "traces (every stage both recorded; source files compared relative to the model file, so "
        "two checkouts of one model diff clean). Exit code as diff(1): 0 no differences, 1 differences, 2 trouble.\n\n"
        "Examples:\n\n"
        "  fxlab diff examples/inplace_ops.py --before-functionalize\n\n"
        "  fxlab diff examples/my_inplace.py --from functional --to aclgraph\n\n"
        "  fxlab diff examples/llama_decoder.py --from ascend_ir --to ascend_ir:torchair --torchair-path DIR\n\n"
        "  fxlab diff run_a/ run_b/ --json\n\n"
        "  fxlab diff run_a/ npu_dumps/   (the trace's ascend_ir vs GE's last phase: fused, inserted, changed, by source line)"
    ),
)
def diff_command(
    paths: list[Path] = typer.Argument(
        ...,
        help="MODEL.py, two trace directories saved by `fxlab trace --out`, or a saved trace and GE's dumps off an NPU machine.",
        show_default=False,
        metavar="MODEL.py | TRACE_A TRACE_B | TRACE NPU_DUMP",
    ),
    before_functionalize: bool = typer.Option(
        False, "--before-functionalize", metavar="", help="aten (before functionalization) -> functional; the default for MODEL.py."
    ),
    from_stage: str | None = typer.Option(None, "--from", metavar="STAGE", help=f"Left stage: {', '.join(FX_STAGES + IR_STAGES)}."),
    to_stage: str | None = typer.Option(None, "--to", metavar="STAGE", help="Right stage (same choices as --from)."),
    torchair_path: Path | None = typer.Option(
        None,
        "--torchair-path",
        metavar="DIR",
        help="TorchAir sources for ascend_ir:torchair (default: FXLAB_TORCHAIR_PATH, an importable TorchAir, or the copy `fxlab torchair fetch` made).",
    ),
    plugin: list[Path] | None = PluginOpt,
    entry: str | None = EntryOpt,
    graph: int | None = typer.Option(None, "--graph", metavar="K", help="Diff only Dynamo graph K (default: every graph)."),
    as_json: bool = typer.Option(False, "--json", metavar="", help="Print the diff as JSON."),
    mode: str | None = ModeOpt,
) -> None:
    from fxlab.npu_dumps.read import holds_dumps  # lazy: GE's dump readers and protobuf, ~25 ms at every start

    if len(paths) == 2 and is_saved_trace(paths[0]) and holds_dumps(paths[1]):  # a trace vs dumps off an NPU machine
        _reject_model_options(before_functionalize, from_stage, to_stage, torchair_path, plugin, entry, mode)
        raise typer.Exit(npu_phase_diff(paths[0], paths[1], graph, as_json))
    if len(paths) == 2:
        _check_pair(paths[0], paths[1], holds_dumps)
        _reject_model_options(before_functionalize, from_stage, to_stage, torchair_path, plugin, entry, mode)
        diff = _saved_traces_diff(paths[0], paths[1], graph)
    elif len(paths) == 1:
        if paths[0].is_dir():
            raise UsageError(f"{paths[0]} is a directory: give a model file, or two saved trace directories to diff them with each other.")
        left, right = stage_pair(before_functionalize, from_stage, to_stage, torchair_path)
        diff = _model_diff(paths[0], left, right, plugin, entry, graph, torchair_path, mode_for(left, right, mode))
    else:
        raise UsageError(
            f"fxlab diff takes one model file, two saved trace directories, or a saved trace and NPU dumps (TRACE NPU_DUMP), not {len(paths)} paths."
        )
    _render(diff, as_json)
    raise typer.Exit(0 if diff.identical else 1)  # as diff(1): 0 the same, 1 differences, 2 trouble


def _check_pair(first: Path, second: Path, holds_dumps: Any) -> None:
    """Two paths that are not two traces, said as what they are: dumps given first, or a
    folder that is neither a trace nor dumps."""
    if holds_dumps(first) and is_saved_trace(second):
        raise UsageError(f"{first} holds NPU dumps and {second} a saved trace: give the trace first (fxlab diff TRACE NPU_DUMP).")
    for path in (first, second):
        if path.is_dir() and not is_saved_trace(path) and not holds_dumps(path):
            raise UsageError(
                f"{path} holds neither a saved trace (manifest.json) nor GE dumps fxlab reads: give two trace folders "
                "(`fxlab trace MODEL.py --out DIR`), or a trace and a folder of dumps copied off an NPU machine (see `fxlab dumps --help`)."
            )


def stage_pair(before_functionalize: bool, left: str | None, right: str | None, torchair_path: Path | None) -> tuple[str, str]:
    """The two stages to diff, checked before anything is captured."""
    if before_functionalize and (left or right):
        raise UsageError("--before-functionalize is aten -> functional; give it or --from/--to, not both.")
    if not (left or right):
        left, right = ATEN, FUNCTIONAL
    if not (left and right):
        raise UsageError("give both --from STAGE and --to STAGE (or --before-functionalize).")
    known = FX_STAGES + IR_STAGES
    for option, stage in (("--from", left), ("--to", right)):
        if stage not in known:
            raise UsageError(f"{option} {stage!r} is not a stage: the stages are {', '.join(known)}.")
    if left == right:
        raise UsageError(f"--from and --to are both {left!r}: a stage has no differences with itself. Pick two stages.")
    if (left in IR_STAGES) != (right in IR_STAGES):
        raise UsageError(
            f"{left} and {right} cannot be compared: FX stages ({', '.join(FX_STAGES)}) diff with FX stages, "
            f"the Ascend IR ({', '.join(IR_STAGES)}) with the Ascend IR."
        )
    if torchair_path is not None and TORCHAIR_STAGE not in (left, right):
        raise UsageError(f"--torchair-path is used only with {TORCHAIR_STAGE} (e.g. --from ascend_ir --to {TORCHAIR_STAGE}).")
    return left, right


def mode_for(left: str, right: str, mode: str | None) -> str | None:
    """The mode a pair of stages needs: ``pre_ge`` and the Ascend IR are the GE graph's
    (max-autotune), ``aclgraph`` the aclgraph path's (reduce-overhead unless --mode
    npugraph_ex); other stages follow --mode or the model file."""
    check_mode(mode)
    ge = [s for s in (left, right) if s == PRE_GE or s in IR_STAGES]
    acl = [s for s in (left, right) if s == ACLGRAPH]
    if ge and acl:
        raise UsageError(
            f"{ge[0]} (max-autotune) and aclgraph (reduce-overhead) come from different modes; diff each with a stage of its own mode."
        )
    if acl and mode in (None, "max-autotune"):
        if mode == "max-autotune":
            raise UsageError("aclgraph is the stage of --mode reduce-overhead or npugraph_ex, not max-autotune.")
        return "reduce-overhead"
    if ge and mode not in (None, "max-autotune"):
        raise UsageError(f"{ge[0]} is a stage of max-autotune mode, not {mode}.")
    return "max-autotune" if ge else mode


def _reject_model_options(*values: Any) -> None:
    if any(values):
        raise UsageError(
            "two saved traces are diffed stage by stage as they were recorded: --before-functionalize, "
            "--from, --to, --torchair-path, --plugin, --entry and --mode apply to a model file only."
        )


# -- a model ----------------------------------------------------------------------------------
def _model_diff(
    model: Path,
    left: str,
    right: str,
    plugins: Any,
    entry: str | None,
    graph: int | None,
    torchair_path: Path | None,
    mode: str | None = None,
) -> Any:
    # lazy: the capture and TorchAir's loader import torch (seconds); `fxlab --help` must not.
    from fxlab.compat.torchair_copies import find_torchair
    from fxlab.diff.trace_diff import TraceDiff, diff_graph, select_graphs

    stages = (FUNCTIONAL, ASCEND_IR) if left in IR_STAGES else tuple(s for s in FX_STAGES if s in (left, right))
    request = request_of(
        model=model, entry=entry, plugins=tuple(plugins or ()), stages=stages, mode=mode, verify=False, torchair_path=torchair_path
    )
    with_torchair = TORCHAIR_STAGE in (left, right)
    if with_torchair:
        find_torchair(torchair_path)  # found before the slow capture, so a bad path fails fast
    # TorchAir is open for the capture too, as for `fxlab trace --converter torchair`: its
    # session defines torch_npu's operators, and the captured graph's npu ops must still be
    # defined when TorchAir converts it.
    with console.progress("loading model") as status, open_session(request, status.update, with_torchair=with_torchair) as session:
        captured = session.capture()
        trace = captured.trace
        indices = select_graphs(len(trace.graphs), graph)
        diff = TraceDiff(left, right, notes=[f"graph {g.index}: {g.error}" for g in trace.graphs if g.error and g.index in indices])
        if left in IR_STAGES:
            sides = _ir_sides(captured, indices, session.torchair, diff.notes, status)
        else:
            sides = {i: (trace.graphs[i].stages.get(left), trace.graphs[i].stages.get(right)) for i in indices}
    for index in indices:
        lside, rside = sides[index] if left != TORCHAIR_STAGE else sides[index][::-1]
        diff.graphs.append(diff_graph(index, lside, rside, left, right, left_label=left, right_label=right))
    return diff


def _ir_sides(captured: Any, indices: list[int], torchair: Any, notes: list[str], status: Any) -> dict[int, tuple[Any, Any]]:
    """(built-in IR, TorchAir's IR) of each graph; TorchAir's bridge notes go to ``notes``."""
    trace = captured.trace
    if torchair is None:
        return {index: (trace.graphs[index].ir, None) for index in indices}
    sides: dict[int, tuple[Any, Any]] = {}
    for index in indices:
        functional = captured.graphs[index].modules.get(FUNCTIONAL)
        if functional is None:
            sides[index] = (trace.graphs[index].ir, None)
            continue
        status.update(f"converting graph {index} with TorchAir")
        converted = torchair.convert(functional, f"graph_{index}", captured.options)
        sides[index] = (trace.graphs[index].ir, converted.graph)
        notes += [n for n in converted.notes if n and n not in notes]
    notes += _load_notes(torchair.torchair.report)
    return sides


def _load_notes(report: Any) -> list[str]:
    notes = []
    if report.registration_failures:
        notes.append(
            f"{len(report.registration_failures)} TorchAir converter registration(s) did not load with this torch "
            "(they name ops or overloads it lacks); a node that needs one shows as FxlabUnsupported on the TorchAir side"
        )
    notes += [f"TorchAir module did not load: {issue.describe()}" for issue in report.module_failures]
    return notes


# -- two saved traces ---------------------------------------------------------------------------
def _saved_traces_diff(left: Path, right: Path, graph: int | None) -> Any:
    from fxlab.diff.trace_diff import diff_saved_traces  # lazy: imports torch (seconds); `fxlab --help` must not

    left_label, right_label = _labels(left, right)
    return diff_saved_traces(load_saved_trace(left), load_saved_trace(right), left_label=left_label, right_label=right_label, graph=graph)


def _labels(left: Path, right: Path) -> tuple[str, str]:
    if left.name and right.name and left.name != right.name:
        return left.name, right.name
    return str(left), str(right)


# -- output -----------------------------------------------------------------------------------
def _render(diff: Any, as_json: bool) -> None:
    if as_json:
        console.print_json(dumps_strict(diff.to_json(), default=str))
        return
    from fxlab.viz.diff_views import trace_diff_view  # lazy: imports torch (seconds); `fxlab --help` must not

    console.out().print(trace_diff_view(diff))
