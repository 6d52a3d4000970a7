"""``fxlab ops list`` and ``fxlab ops check OP``: the custom-op kit on the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from fxlab.cli import console
from fxlab.cli.app import FxlabTyper, app
from fxlab.errors import UsageError
from fxlab.cli.common import capture_request, request_of
from fxlab.ir.json_values import dumps_strict
from fxlab.stage_names import FUNCTIONAL, PRE_GE
from fxlab.viz.safe_text import plain, visible

ops_app = FxlabTyper(
    name="ops",
    help="Custom ops: list what is registered, and check one op end to end (schema, kernel, Meta, in-place rules, prototype, converter).",
    no_args_is_help=True,
)
app.add_typer(ops_app, name="ops")

PluginOpt = typer.Option(None, "--plugin", metavar="FILE", help="Python file to import first (defines or adapts custom ops). Repeatable.")
JsonOpt = typer.Option(False, "--json", metavar="", help="Print JSON instead of a table.")
STATUS_STYLE = {"pass": ("PASS", "green"), "fail": ("FAIL", "bold red"), "warn": ("WARN", "yellow"), "skip": ("SKIP", "dim")}


def _load_plugins(plugins: list[Path] | None) -> None:
    from fxlab.compat.plugins import load_plugin  # lazy: imports torch (seconds); `fxlab --help` must not

    for plugin in plugins or []:
        load_plugin(plugin)


@ops_app.command(
    "list",
    help="Registered custom ops: schema, kernels per dispatch key, fake (Meta) function, converter (fxlab / torchair / auto / none), prototype.",
)
def list_command(plugin: list[Path] | None = PluginOpt, as_json: bool = JsonOpt) -> None:
    # lazy: the op kit imports torch (seconds); `fxlab --help` must not
    from fxlab.compat.layer import compat_layer
    from fxlab.ops.inspect_op import list_ops

    with compat_layer(announce=console.note):
        _load_plugins(plugin)
        facts = list_ops()
        if as_json:
            console.print_json(dumps_strict([f.to_json() for f in facts]))
            return
        console.out().print(_ops_table(facts))


def _ops_table(facts: list[Any]) -> Any:
    table = Table(title="Custom ops", show_lines=True)
    for column in ("op", "kernels", "fake (Meta)", "converter", "prototype"):
        table.add_column(column, overflow="fold")
    for f in facts:
        kernels = plain("\n".join(f"{key}: {_short(site)}" for key, site in f.kernels.items())) or Text("none", style="red")
        fake = plain(_short(f.fake)) if f.fake else Text("none", style="red")
        converter = f.converter if f.converter in ("none", "auto") else f"{f.converter} ({_short(f.converter_where)})"
        if f.replaced:
            converter += f"\nreplaces fxlab's ({_short(f.replaced)})"
        if f.converter == "auto":
            converter = f"auto ({f.converter_where})"
        proto = plain(f"{f.prototype.op_type} ({_short(f.prototype.source)})") if f.prototype else Text("none", style="dim")
        table.add_row(Text.assemble(visible(f.qualname), "\n", (visible(f.schema), "dim")), kernels, fake, plain(converter), proto)
    return table


def _short(site: str) -> str:
    """``name.py:12`` for a path:line, the text itself otherwise."""
    path, sep, rest = site.rpartition(":")
    if not sep or not rest.isdigit():
        path, rest = site, ""
    if "/" in path or "\\" in path:
        return f"{Path(path).name}:{rest}" if rest else Path(path).name
    return site


@ops_app.command(
    "check",
    help=(
        "Check one custom op: torch.library.opcheck on its samples, Meta vs CPU kernel, the in-place rules, "
        "its Ascend C prototype against the schema, TorchAir's auto converter, and its converter on fake inputs. "
        "Exit code 1 when any check fails.\n\n"
        "Examples:\n\n  fxlab ops check npu::my_inplace\n\n  fxlab ops check my_op --prototype my_op.json --plugin my_op_plugin.py --json"
    ),
)
def check_command(
    op: str = typer.Argument(
        ..., metavar="OP", help="The op: npu::my_inplace, npu.my_inplace, torch.ops.npu.my_inplace.default or my_inplace."
    ),
    prototype: Path | None = typer.Option(
        None, "--prototype", metavar="FILE", help="The op's msOpGen prototype JSON (default: the registered one)."
    ),
    plugin: list[Path] | None = PluginOpt,
    as_json: bool = JsonOpt,
) -> None:
    # lazy: the op kit imports torch (seconds); `fxlab --help` must not
    from fxlab.compat.layer import compat_layer
    from fxlab.ops.op_check import check_op

    with compat_layer(announce=console.note):
        _load_plugins(plugin)
        _refuse_torch_npus_own(op)
        report = check_op(op, prototype)
    if as_json:
        console.print_json(dumps_strict(report.to_json()))
    else:
        _print_report(report)
    raise typer.Exit(0 if report.ok else 1)


def _refuse_torch_npus_own(op: str) -> None:
    """torch_npu's own operators are no custom op of the user's: said so, with what shows them."""
    import torch  # lazy: as check_op's imports (seconds)

    from fxlab.compat.torch_npu_ops import find_torch_npu_copy, read_schemas  # lazy: as above

    parts = op.strip().removeprefix("torch.ops.").replace("::", ".").split(".")
    namespace, bare = (parts[0], parts[1]) if len(parts) >= 2 else ("npu", parts[0])
    copy = find_torch_npu_copy()
    if namespace != "npu" or copy is None or not copy.complete or hasattr(torch.ops.npu, bare):  # defined: a plugin's, or torch_npu's own
        return
    if bare in {name.split(".", 1)[0] for name in read_schemas(copy.schema_file)}:
        raise UsageError(
            f"{op!r} is one of torch_npu's own operators (fxlab defines them from torch_npu's schemas and Meta functions while "
            "it traces), not a custom op: `fxlab ops check` checks the delivery of a custom op a model or plugin defines. To see "
            "how TorchAir converts it, trace a model that calls it (`fxlab trace MODEL.py`; `fxlab ops coverage MODEL.py` lists "
            "TorchAir's verdict for each op)."
        )


def _print_report(report: Any) -> None:
    out = console.out()
    out.print(Text.assemble((visible(report.op), "bold"), "  ", visible(report.schema)))
    if report.samples_source != "registered":
        out.print(
            Text.assemble(
                (f"samples {visible(report.samples_source)}", "yellow"), " (the op registers none): small random tensors, scalar defaults"
            )
        )
    for item in report.items:
        label, style = STATUS_STYLE[item.status]
        out.print(Text.assemble("  ", (label, style), f" {visible(item.name)}: {visible(item.detail)}"), highlight=False)
        if item.status in ("fail", "warn") and item.fix:
            out.print(Text.assemble("       ", ("fix:", "cyan"), f" {visible(item.fix)}"), highlight=False)
    out.print(Text(report.verdict, style="bold"))


@ops_app.command(
    "coverage",
    help=(
        "For every op of torch's and torch_npu's own namespaces (aten, prims, npu, the collectives ...; or those in MODEL.py): whether TorchAir converts it, refuses it (its converter only "
        "raises) or has no converter, and whether fxlab's built-in conversion agrees. TorchAir's verdicts come from "
        "its sources when a copy is found (as --converter torchair finds one), else from the table fxlab ships. "
        "With a model, exit code 1 when one of its ops fails under TorchAir or fxlab disagrees."
    ),
)
def coverage_command(
    model: Path | None = typer.Argument(
        None, metavar="MODEL.py", help="Model file: show only the ops its graphs call, with node counts.", show_default=False
    ),
    entry: str | None = typer.Option(
        None, "--entry", metavar="NAME", help="Name of a function in the model file returning (model, inputs)."
    ),
    plugin: list[Path] | None = PluginOpt,
    torchair_path: Path | None = typer.Option(
        None,
        "--torchair-path",
        metavar="DIR",
        help="TorchAir sources to scan (default: $FXLAB_TORCHAIR_PATH, the installed torchair, or the copy `fxlab torchair fetch` made in fxlab's cache, ~/.cache/fxlab/torchair/ by default).",
    ),
    as_json: bool = JsonOpt,
) -> None:
    # lazy: the coverage report imports torch (seconds); `fxlab --help` must not
    from fxlab.reports.op_coverage import coverage
    from fxlab.viz.coverage import coverage_summary, coverage_table

    verdicts, origin = _torchair_verdicts(torchair_path)
    model_ops = _model_ops(model, entry, plugin) if model is not None else None
    cov = coverage(verdicts, _fxlab_converter_ops(), origin, model_ops)
    if as_json:
        console.print_json(dumps_strict(cov.to_json()))
    else:
        console.out().print(coverage_table(cov))
        console.out().print(coverage_summary(cov))
    failing = any(r.torchair != "converts" or not r.agrees for r in cov.rows)
    raise typer.Exit(1 if model is not None and failing else 0)


def _torchair_verdicts(torchair_path: Path | None) -> tuple[Any, str]:
    """TorchAir's verdicts from a scan of its sources, or fxlab's shipped table."""
    # lazy: TorchAir's copies and verdicts import torch (seconds); `fxlab --help` must not
    from fxlab.compat.torchair_copies import TorchAirNotFoundError, find_torchair
    from fxlab.compat.torchair_converter_scan import scan_converters
    from fxlab.compat.torchair_versions import read_torchair_version
    from fxlab.passes.torchair_refusals import TorchAirVerdict, load_table, registrations

    try:
        where = find_torchair(torchair_path)
    except TorchAirNotFoundError:
        if torchair_path is not None:
            raise
        console.note("no TorchAir copy found: TorchAir's verdicts come from the table fxlab ships")
        return registrations(), f"{load_table()['from']}, table shipped with fxlab"
    if where is None:
        import torchair  # optional: the installed one, found importable just above

        where = Path(torchair.__file__).parent
    scanned = {r.op: TorchAirVerdict(r.op, r.verdict, r.reason, r.where) for r in scan_converters(where)}
    return scanned, f"{read_torchair_version(where).torch_npu or 'unknown release'}, scanned from its sources"


def _fxlab_converter_ops() -> list[str]:
    # lazy: the converters import torch (seconds); `fxlab --help` must not
    import fxlab.passes.converters  # noqa: F401 - registers fxlab's converters
    from fxlab.passes.converters.collectives import NPU_DEFINE_CONVERTERS
    from fxlab.passes.converters.npu import NPU_CONVERTERS
    from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB

    # torch_npu's operators and TorchAir's npu_define collectives exist only while defined
    # (a trace defines them): their converters are kept by name, registered only then.
    by_name = [f"npu.{name}" for name in NPU_CONVERTERS] + [f"npu_define.{name}" for name in NPU_DEFINE_CONVERTERS]
    return sorted({*by_name, *(str(c.target) for c in CONVERTERS if c.origin == ORIGIN_FXLAB or c.replaced is not None)})


def _note_ops_left_out(trace: Any) -> None:
    """Custom ops a graph break left out of the graphs: in no graph, so in no row either."""
    from fxlab.capture.checks.custom_ops import ops_said_left_out  # lazy: imports torch (seconds); `fxlab --help` must not

    for qualname in ops_said_left_out([*trace.problems, *(g.error for g in trace.graphs if g.error)]):
        console.note(
            f"custom op {qualname} ran outside the graphs: Dynamo broke the graph around it (it has no fake/Meta function), "
            f"so no converter is asked for it. `fxlab ops check {qualname}` says what it lacks."
        )


ONE_RANK_TIMEOUT = 300.0  # seconds a collective of the one-rank group may take
ONE_RANK_NOTE = (
    "{model} uses torch.distributed: its ops were read from rank 0 of a world of one (a gloo process group on CPU, "
    "as `fxlab trace --nproc 1` runs it); with more ranks a model may call other ops: `fxlab trace --nproc N` traces them"
)


def _model_ops(model: Path, entry: str | None, plugin: list[Path] | None) -> dict[str, int]:
    """The ops the model's graphs call after TorchAir's passes, with node counts."""
    # lazy: imports torch (seconds); `fxlab --help` must not
    import torch

    from fxlab.distributed.environment import ensure_group, launched_rank, one_rank, uses_torch_distributed

    request = request_of(model=model, entry=entry, plugins=tuple(plugin or ()), stages=(FUNCTIONAL, PRE_GE), verify=False)
    if launched_rank() is not None or not uses_torch_distributed(model):
        captured = capture_request(request)
    else:  # a multi-rank model builds itself from its rank and world size: run it as one rank
        notes: list[str] = []
        with one_rank(model, ONE_RANK_TIMEOUT, notes):
            captured = capture_request(request, after_load=lambda: ensure_group(ONE_RANK_TIMEOUT))
        for note in [ONE_RANK_NOTE.format(model=model), *notes]:
            console.note(note)
    _note_ops_left_out(captured.trace)
    counts: dict[str, int] = {}
    for graph in captured.graphs:
        for node in graph.modules[PRE_GE].graph.nodes:
            if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
                counts[str(node.target)] = counts.get(str(node.target), 0) + 1
    return counts
