"""``fxlab trace MODEL.py``: every stage of every Dynamo graph, the Ascend IR, and checks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from fxlab.cli import console
from fxlab.cli.soc_options import SocIniOpt, SocOpt
from fxlab.cli.app import app
from fxlab.cli.common import EntryOpt, ModeOpt, ModelArg, PluginOpt, capture_request, parse_stages, request_of
from fxlab.cli.files import StagedTrace, check_output_file, prepare_out_dir, save_trace
from fxlab.cli.graphviz import PICTURE_FORMATS, check_format
from fxlab.cli.stage_printing import print_views
from fxlab.errors import FxlabError, OutputError, UsageError
from fxlab.ir.json_values import dumps_strict
from fxlab.socs import choose_soc

if TYPE_CHECKING:
    from fxlab.capture.request import TraceRequest
    from fxlab.capture.trace import Trace


@app.command(
    "trace",
    help=(
        "Capture MODEL.py under torch.compile and show, for every graph Dynamo captures, each "
        "stage TorchAir takes it through: dynamo, aten (before functionalization), functional, then "
        "pre_ge (after TorchAir's own passes) and ascend_ir (the GE graph) in max-autotune mode, or "
        "aclgraph (after TorchAir's aclgraph passes, with the capture code it generates) in reduce-overhead "
        "and npugraph_ex mode; every pass is listed with what it changed. In-place ops, copy_ epilogues and auto_functionalized nodes are "
        "highlighted; every GE op is traced back to its FX node and source line. The compiled run "
        "and the Ascend IR (or the aclgraph graph), run on CPU, are checked against eager.\n\n"
        "Examples:\n\n"
        "  fxlab trace examples/inplace_ops.py\n\n"
        "  fxlab trace examples/inplace_ops.py --mode reduce-overhead\n\n"
        "  fxlab trace examples/llama_decoder.py --stages functional,ascend_ir --out trace_dir\n\n"
        "  fxlab trace model.py --plugin my_op_plugin.py --json"
    ),
)
def trace_command(
    model: Path = ModelArg,
    stages: str | None = typer.Option(
        None,
        "--stages",
        metavar="STAGES",
        help="Comma-separated stages to record and show (default: all of the mode's): dynamo,aten,functional,pre_ge,ascend_ir (max-autotune) or dynamo,aten,functional,aclgraph (reduce-overhead, npugraph_ex).",
    ),
    mode: str | None = ModeOpt,
    out: Path | None = typer.Option(
        None,
        "--out",
        metavar="DIR",
        help="Directory to save the trace in: manifest.json, and per graph graph_<k>/<stage>.py|.json, ascend_ir.json|.pb|.pbtxt|.py, conversion_summary.csv|.json, aclgraph_capture.py.",
    ),
    plugin: list[Path] | None = PluginOpt,
    entry: str | None = EntryOpt,
    as_json: bool = typer.Option(False, "--json", metavar="", help="Print a machine-readable summary instead of the views."),
    verify: bool | None = typer.Option(
        None,
        "--verify/--no-verify",
        metavar="",
        help="Run the Ascend IR (or the aclgraph graph) on CPU and compare with the compiled run (default: on, for every graph).",
    ),
    strict: bool = typer.Option(
        False, "--strict", metavar="", help="Exit 1 when the trace is unverified (a check could not run), not only when it is partial."
    ),
    summary_only: bool = typer.Option(False, "--summary", metavar="", help="Print only the one-screen summary, not the stages."),
    graphviz: str | None = typer.Option(
        None,
        "--graphviz",
        metavar="svg|png|dot",
        help="Also draw each stage and the Ascend IR with graphviz: svg, png or dot (pictures go to --out DIR, else ./fxlab-out; without the `dot` binary only .dot files are written).",
    ),
    expand: list[str] | None = typer.Option(
        None,
        "--expand",
        metavar="PATH",
        help="In the --graphviz pictures, open this module (e.g. layers.3 or layers.0.attn) instead of folding it; repeatable.",
    ),
    focus: str | None = typer.Option(
        None, "--focus", metavar="NODE", help="In the --graphviz pictures, draw only the nodes within --depth edges of this node or GE op."
    ),
    depth: int = typer.Option(2, "--depth", min=0, metavar="K", help="How many edges around --focus to draw."),
    html: Path | None = typer.Option(
        None, "--html", metavar="FILE", help="Also write a self-contained HTML report of the trace to this file."
    ),
    converter: str = typer.Option(
        "builtin",
        "--converter",
        metavar="builtin|torchair",
        help="Who builds the ascend_ir stage: builtin (fxlab's converters) or torchair (TorchAir's own code path: the real torchair when importable, else a copy of its sources, see --torchair-path).",
    ),
    torchair_path: Path | None = typer.Option(
        None,
        "--torchair-path",
        metavar="DIR",
        help="TorchAir sources to load for --converter torchair: a torch_npu wheel's torch_npu/dynamo/torchair folder or a TorchAir checkout's python/ folder (default: $FXLAB_TORCHAIR_PATH, the installed torchair, or the copy `fxlab torchair fetch` made).",
    ),
    convert_refused: bool = typer.Option(
        False,
        "--convert-refused",
        metavar="",
        help="Let the built-in conversion convert ops TorchAir fails on (its converter only raises, or it has none) with fxlab's own converters; without it they are marked refused and the trace is partial.",
    ),
    dynamic: bool = typer.Option(
        False,
        "--dynamic",
        metavar="",
        help="Compile with torch.compile(dynamic=True), whatever the model file's compile_options say; a graph with symbolic sizes is checked at a second size too.",
    ),
    soc: str | None = SocOpt,
    soc_ini: Path | None = SocIniOpt,
    nproc: int | None = typer.Option(
        None,
        "--nproc",
        metavar="N",
        min=1,
        help="Trace N ranks, one process each, with torchrun's environment and gloo on CPU: the model file may call dist.init_process_group() itself. Each rank's collectives are checked against its peers' before any runs. Under torchrun, each process is one rank without --nproc.",
    ),
    timeout: float = typer.Option(
        300.0,
        "--timeout",
        metavar="SECONDS",
        min=1.0,
        help="With several ranks: stop them all and report the ranks still running after this many seconds.",
    ),
) -> None:
    request = request_of(
        model=model,
        entry=entry,
        plugins=tuple(plugin or ()),
        stages=parse_stages(stages),
        mode=mode,
        converter=converter,
        torchair_path=torchair_path,
        soc=choose_soc(soc, soc_ini),
        dynamic=dynamic,
        convert_refused=convert_refused,
        verify=verify,
        nproc=nproc,
        timeout=timeout,
    )
    if graphviz is not None:
        check_format(graphviz)
    elif expand or focus is not None:
        given = [option for option, value in (("--expand", expand), ("--focus", focus)) if value]
        raise UsageError(
            f"{' and '.join(given)} {'shape' if len(given) > 1 else 'shapes'} the --graphviz pictures, which were not asked for: "
            f"add --graphviz FORMAT ({', '.join(PICTURE_FORMATS)})."
        )
    if html is not None:
        check_output_file(html, "--html")
    if nproc is not None or under_launcher():
        from fxlab.cli.trace_ranks import RankOutput, trace_ranks  # lazy: the ranks' machinery (torch), only for ranks

        raise typer.Exit(trace_ranks(request, RankOutput(out, html, as_json, graphviz, summary_only)))
    try:
        trace = capture_and_save(request, out)
    except FxlabError as exc:
        if as_json:  # a script reading stdout gets the failure as JSON too (the message stays on stderr)
            console.print_json(dumps_strict({"status": "failed", "error": str(exc), "exit_code": exc.exit_code}))
        raise
    write_extras(trace, graphviz, html, out, picture_options(expand, focus, depth))  # after the trace is saved
    if as_json:
        from fxlab.viz.trace_views import json_summary  # lazy: imports torch (seconds); `fxlab --help` must not

        console.print_json(dumps_strict(json_summary(trace, str(out) if out else None)))
    else:
        print_views(trace, summary_only)
        if out is not None:
            console.note(f"trace saved to {out}/ (manifest.json, {len(trace.graphs)} graph folder(s))")
    raise typer.Exit(exit_code(trace.status, strict))


def exit_code(status: str, strict: bool = False) -> int:
    """0 for ``ok``, and for ``unverified`` unless ``strict``; 1 otherwise."""
    return 0 if status == "ok" or (status == "unverified" and not strict) else 1


def under_launcher() -> bool:
    """This process is one rank of a job a launcher (torchrun) started."""
    from fxlab.distributed.environment import launched_rank  # lazy: imports torch (seconds); `fxlab --help` must not

    return launched_rank() is not None


def capture_and_save(request: TraceRequest, out: Path | None) -> Trace:
    """Capture, and with ``--out`` save the trace beside the folder and move it in whole:
    a run that fails or is interrupted leaves the trace already there as it was."""
    staged = StagedTrace(out) if out is not None else None
    try:
        trace = capture_request(request).trace
        if staged is not None:
            save_trace(trace, staged.folder)
            staged.publish()
    except BaseException as exc:
        held = staged.abandon(str(request.model_name), failure_text(exc)) if staged is not None else None
        if held in _HELD:
            console.note(_HELD[held].format(out=out))
        raise
    return trace


_HELD = {
    "kept": "the trace already in {out}/ is left as it was",
    "new": "the new trace was saved to {out}/ before this",
    "failed": "{out}/ holds no trace: its manifest.json records that the run failed, and why",
}


def failure_text(exc: BaseException) -> str:
    """Why a run failed, as a failed manifest says it."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    return str(exc) if isinstance(exc, FxlabError) else f"{type(exc).__name__}: {exc}"


def picture_options(expand: list[str] | None, focus: str | None, depth: int) -> Any:
    from fxlab.viz.fold import FoldOptions  # lazy: ~5 ms at every start, read only once a trace is made

    return FoldOptions(expand=tuple(expand or ()), focus=focus, depth=depth)


def _picture_progress(done: int, total: int, path: Path, seconds: float, error: str | None) -> None:
    console.note(f"picture {done}/{total}: {path} ({seconds:.1f} s{', failed' if error else ''})")


def write_extras(trace: Trace, graphviz: str | None, html: Path | None, out_dir: Path | None, options: Any) -> None:
    """Pictures and the HTML report, when asked for (after the trace is saved, so a slow
    `dot` or Ctrl-C never costs the trace)."""
    if graphviz is not None:
        from fxlab.cli.picture_files import write_pictures  # lazy: imports torch (seconds); `fxlab --help` must not

        folder = out_dir if out_dir is not None else prepare_out_dir(Path("fxlab-out"))
        files, messages = write_pictures(trace, folder, graphviz, options, _picture_progress)
        for message in messages:
            console.warn(message)
        console.note(f"{len(files)} picture file(s) written under {folder}/")
    if html is not None:
        from fxlab.cli.picture_files import write_html_report  # lazy: imports torch (seconds); `fxlab --help` must not

        try:
            console.note(f"HTML report written to {write_html_report(trace, html)}")
        except OSError as exc:
            raise OutputError(f"--html {html} cannot be written ({exc.strerror or exc}). Choose a writable path.") from exc
