"""``fxlab trace MODEL.py``: every stage of every Dynamo graph, the Ascend IR, and checks."""
from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional

import typer

from fxlab.cli import console
from fxlab.cli.common import EntryOpt, ModelArg, PluginOpt, capture_model, parse_stages
from fxlab.cli.main import app
from fxlab.heap import frozen_heap


@app.command(
    "trace",
    help=(
        "Capture MODEL.py under torch.compile and show, for every graph Dynamo captures, each "
        "stage on the way to the Ascend IR: dynamo, aten (before functionalization), functional, "
        "reinplaced, ascend_ir. In-place ops, copy_ epilogues and auto_functionalized nodes are "
        "highlighted; every GE op is traced back to its FX node and source line. The compiled run "
        "and the Ascend IR (run on CPU) are checked against eager.\n\n"
        "Examples:\n\n"
        "  fxlab trace examples/inplace_ops.py\n\n"
        "  fxlab trace examples/llama_decoder.py --stages functional,ascend_ir --out trace_dir\n\n"
        "  fxlab trace model.py --plugin my_op_plugin.py --json"
    ),
)
def trace_command(
    model: Path = ModelArg,
    stages: Optional[str] = typer.Option(None, "--stages", help="Comma-separated stages to record and show (default: all): dynamo,aten,functional,reinplaced,ascend_ir."),
    out: Optional[Path] = typer.Option(None, "--out", help="Directory to save the trace in (manifest.json, graph_<k>/<stage>.py|.json, ascend_ir.pb|.pbtxt|.py|.json)."),
    plugin: Optional[List[Path]] = PluginOpt,
    entry: Optional[str] = EntryOpt,
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable summary instead of the views."),
    verify: Optional[bool] = typer.Option(None, "--verify/--no-verify", help="Run the Ascend IR on CPU and compare with the compiled run (default: on for graphs up to 1500 FX nodes)."),
    summary_only: bool = typer.Option(False, "--summary", help="Print only the one-screen summary, not the stages."),
    graphviz: Optional[str] = typer.Option(None, "--graphviz", help="Also draw each stage and the Ascend IR with graphviz: svg, png or dot (pictures go to --out DIR, else ./fxlab-out; without the `dot` binary only .dot files are written)."),
    expand: Optional[List[str]] = typer.Option(None, "--expand", metavar="PATH", help="In the --graphviz pictures, open this module (e.g. layers.3 or layers.0.attn) instead of folding it; repeatable."),
    focus: Optional[str] = typer.Option(None, "--focus", metavar="NODE", help="In the --graphviz pictures, draw only the nodes within --depth edges of this node or GE op."),
    depth: int = typer.Option(2, "--depth", min=0, metavar="K", help="How many edges around --focus to draw."),
    html: Optional[Path] = typer.Option(None, "--html", help="Also write a self-contained HTML report of the trace to this file."),
    converter: str = typer.Option("builtin", "--converter", help="Who builds the ascend_ir stage: builtin (fxlab's converters) or torchair (TorchAir's own code path: the real torchair when importable, else a copy of its sources, see --torchair-path)."),
    torchair_path: Optional[Path] = typer.Option(None, "--torchair-path", help="TorchAir sources to load for --converter torchair: a torch_npu wheel's torch_npu/dynamo/torchair folder or a TorchAir checkout's python/ folder (default: $FXLAB_TORCHAIR_PATH, the installed torchair, or .cache/torchair/)."),
) -> None:
    from fxlab.capture.save import prepare_out_dir, save_trace, write_failed_manifest
    from fxlab.errors import FxlabError
    from fxlab.viz import trace_views

    wanted = parse_stages(stages)
    if graphviz is not None:
        from fxlab.viz.graphviz_probe import check_format

        check_format(graphviz)
    out_dir = prepare_out_dir(out) if out is not None else None
    try:
        with ascend_ir_converter(converter, torchair_path) as convert:
            _, trace = capture_model(model, entry, plugin, wanted, verify=verify if convert is None else bool(verify), converter=convert)
    except FxlabError as exc:
        if out_dir is not None:
            write_failed_manifest(out_dir, str(model), str(exc))
        raise
    if out_dir is not None:
        save_trace(trace, out_dir)  # first: pictures take time, and a stopped run keeps the trace
    _write_extras(trace, graphviz, html, out_dir, picture_options(expand, focus, depth))
    if as_json:
        console.out().print_json(json.dumps(trace_views.json_summary(trace, str(out_dir) if out_dir else None)))
    else:
        _print_views(trace, trace_views, summary_only)
        if out_dir is not None:
            console.note(f"trace saved to {out_dir}/ (manifest.json, {len(trace.graphs)} graph folder(s))")
    raise typer.Exit(0 if trace.status == "ok" else 1)


def picture_options(expand: Optional[List[str]], focus: Optional[str], depth: int) -> Any:
    from fxlab.viz.fold import FoldOptions

    return FoldOptions(expand=tuple(expand or ()), focus=focus, depth=depth)


def _picture_progress(done: int, total: int, path: Path, seconds: float, error: Optional[str]) -> None:
    console.note(f"picture {done}/{total}: {path} ({seconds:.1f} s{', failed' if error else ''})")


def _write_extras(trace: Any, graphviz: Optional[str], html: Optional[Path], out_dir: Optional[Path], options: Any) -> None:
    """Pictures and the HTML report, when asked for (after the trace is saved)."""
    if graphviz is not None:
        from fxlab.capture.save import prepare_out_dir
        from fxlab.viz.pictures import write_pictures

        folder = out_dir if out_dir is not None else prepare_out_dir(Path("fxlab-out"))
        files, messages = write_pictures(trace, folder, graphviz, options, _picture_progress)
        for message in messages:
            console.warn(message)
        console.note(f"{len(files)} picture file(s) written under {folder}/")
    if html is not None:
        from fxlab.viz.html_report import write_html_report

        try:
            console.note(f"HTML report written to {write_html_report(trace, html)}")
        except OSError as exc:
            from fxlab.errors import OutputError

            raise OutputError(f"--html {html} cannot be written ({exc.strerror or exc}). Choose a writable path.") from exc


@contextlib.contextmanager
def ascend_ir_converter(name: str, torchair_path: Optional[Path]) -> Iterator[Optional[Callable[..., Any]]]:
    """``None`` for fxlab's built-in conversion; for ``torchair``, TorchAir's own
    conversion with its session held open for the whole capture."""
    from fxlab.errors import UsageError

    if name == "builtin":
        yield None
        return
    if name != "torchair":
        raise UsageError(f"--converter {name!r}: choose builtin or torchair.")
    from fxlab.compat.bridge import open_torchair, run_torchair_conversion
    from fxlab.compat.torchair_loader import condensed_failures

    with open_torchair(torchair_path) as torchair:
        report = torchair.report
        console.note(f"TorchAir ({report.version.describe()}) loaded, {report.converters} converters: {report.native_note}")
        if report.version.matches(report.torch_version) is False:
            console.warn(report.version.compatibility(report.torch_version))
        for line in condensed_failures(report.module_failures + report.registration_failures):
            console.warn(line)
        loaded_before = len(report.module_failures)
        yield lambda gm, graph_name: run_torchair_conversion(gm, graph_name, torchair)
        # TorchAir imports some converter modules only when it first converts.
        for line in condensed_failures(report.module_failures[loaded_before:]):
            console.warn(line)


def _print_views(trace, trace_views, summary_only: bool) -> None:  # type: ignore[no-untyped-def]
    out = console.out()
    # Every view lays its lines out within the console's width (panels and tables do), so
    # rich's cropping of each printed line would change nothing; it costs a third of the
    # printing of a large graph.
    with frozen_heap():  # printing only makes short-lived objects; full collections would walk the capture's heap
        if not summary_only:
            for graph in trace.graphs:
                for stage in graph.stages.values():
                    out.print(trace_views.stage_view(graph, stage), crop=False)
                if graph.ir is not None:
                    out.print(trace_views.ir_view(graph), crop=False)
                    out.print(trace_views.conversion_view(graph), crop=False)
        out.print(trace_views.summary_view(trace), crop=False)
