"""``fxlab scopes MODEL.py``: SuperKernel scopes and core-count limits, explained."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from fxlab.cli import console
from fxlab.cli.common import EntryOpt, ModeOpt, ModelArg, PluginOpt, capture_request, request_of
from fxlab.cli.app import app
from fxlab.cli.soc_options import SocIniOpt, SocOpt
from fxlab.ir.json_values import dumps_strict
from fxlab.passes.torchair_options import MAX_AUTOTUNE, check_mode
from fxlab.socs import choose_soc, parse_aicore_num
from fxlab.stage_names import ACLGRAPH, ALL_STAGES, ASCEND_IR, DYNAMO, FUNCTIONAL


@app.command(
    "scopes",
    help=(
        "Report the SuperKernel scopes (torchair.scope.super_kernel) and core-count limits "
        "(torchair.scope.limit_core_num, ge_config.aicore_num) of MODEL.py: which GE ops each "
        "scope covers, its options parsed and checked, where and why a scope splits into several "
        "SuperKernels, which core limit each op runs with and whether it fits the SoC, and "
        "problems such as a graph break inside a scope. With --mode reduce-overhead (or npugraph_ex), "
        "the streams, events and stream core limits as TorchAir's aclgraph path applies them, and ops that may run "
        "at once on different streams asking for more cores than the SoC has. Exit code 1 when it finds errors.\n\n"
        "Examples:\n\n"
        "  fxlab scopes examples/superkernel_scopes.py --soc Ascend910B1\n\n"
        "  fxlab scopes examples/multi_stream.py --mode reduce-overhead\n\n"
        "  fxlab scopes model.py --soc-ini $ASCEND_HOME_PATH/<arch>-linux/data/platform_config/Ascend910B2.ini --aicore-num '20|40' --json"
    ),
)
def scopes_command(
    model: Path = ModelArg,
    soc: str | None = SocOpt,
    soc_ini: Path | None = SocIniOpt,
    aicore_num: str | None = typer.Option(
        None,
        "--aicore-num",
        metavar="'A|V'",
        help='Global core limit "A|V" (as ge_config.aicore_num); overrides the model\'s CompilerConfig.',
    ),
    as_json: bool = typer.Option(False, "--json", metavar="", help="Print the report as JSON."),
    plugin: list[Path] | None = PluginOpt,
    entry: str | None = EntryOpt,
    mode: str | None = ModeOpt,
) -> None:
    # lazy: the report imports torch (seconds); `fxlab --help` must not
    import fxlab.passes.annotate_scopes  # noqa: F401 - registers the annotation with the capture
    from fxlab.reports.scope_report import report_for_trace
    from fxlab.viz.scope_views import render_scope_report

    soc_info = choose_soc(soc, soc_ini)
    if aicore_num is not None:
        _parse_global(aicore_num, "--aicore-num")  # fail before the (slow) capture
    request = request_of(
        model=model,
        entry=entry,
        plugins=tuple(plugin or ()),
        stages=_stages(mode),
        mode=mode,
        verify=False,
        soc=soc_info,
    )
    captured = capture_request(request)
    if captured.trace.mode != MAX_AUTOTUNE:
        _aclgraph_report(captured, as_json)
        return
    report = report_for_trace(captured, soc_info, _global_limit(aicore_num, captured.loaded))
    if as_json:
        console.print_json(dumps_strict(report.to_json()))
    else:
        console.out().print(render_scope_report(report))
    raise typer.Exit(1 if report.has_errors else 0)


def _stages(mode: str | None) -> tuple[str, ...]:
    """The stages the report reads: the GE graph's, or the aclgraph path's; without
    --mode, every stage of the mode the model file's config picks."""
    if check_mode(mode) is None:
        return tuple(ALL_STAGES)
    return (DYNAMO, FUNCTIONAL, ASCEND_IR) if mode == MAX_AUTOTUNE else (DYNAMO, FUNCTIONAL, ACLGRAPH)


def _aclgraph_report(captured: Any, as_json: bool) -> None:
    """Streams, events and stream core limits of each graph (the aclgraph path has no
    GE ops, so SuperKernel scopes and op-level core attrs do not apply), and a graph
    break inside a scope, said as in max-autotune."""
    from fxlab.reports.scope_report import graph_break_in_scopes  # lazy: imports torch (seconds); `fxlab --help` must not

    trace = captured.trace
    errors = [f"graph {g.index}: {g.error}" for g in trace.graphs if g.error]  # a pass that failed on the graph (a bad core limit)
    broken = graph_break_in_scopes(captured)
    if broken is not None:
        errors.append(f"[{broken.code}] {broken.message}")
    if as_json:
        graphs = [g.streams or {"index": g.index} for g in trace.graphs]
        console.print_json(dumps_strict({"mode": trace.mode, "graphs": graphs, "errors": errors}))
        raise typer.Exit(1 if errors else 0)
    from fxlab.viz.pass_views import aclgraph_scopes_view  # lazy: imports torch (seconds); `fxlab --help` must not

    console.out().print(aclgraph_scopes_view(trace))
    for error in errors:
        console.error(error)
    raise typer.Exit(1 if errors else 0)


def _parse_global(text: str, origin: str) -> Any:
    from fxlab.reports.scope_report import GlobalCoreLimit  # lazy: imports torch (seconds); `fxlab --help` must not

    aicore, vectorcore = parse_aicore_num(text, origin)
    return GlobalCoreLimit(aicore, vectorcore, origin)


def _global_limit(cli_value: str | None, loaded: Any) -> Any:
    """``--aicore-num`` wins; otherwise the model's CompilerConfig (a malformed value
    there is the model's error, reported as such)."""
    from fxlab.reports.scope_report import global_limit_of  # lazy: imports torch (seconds); `fxlab --help` must not

    if cli_value is not None:
        return _parse_global(cli_value, "--aicore-num")
    found = global_limit_of(getattr(loaded, "module", None))
    if found is None:
        return None
    value, origin = found
    return _parse_global(value, origin)
