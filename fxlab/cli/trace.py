"""``fxlab trace MODEL.py``: every stage of every Dynamo graph, the Ascend IR, and checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from fxlab.cli import console
from fxlab.cli.common import EntryOpt, ModeOpt, ModelArg, PluginOpt, capture_model, parse_stages
from fxlab.cli.converter_choice import aclgraph_reference, ascend_ir_converter, check_converter
from fxlab.cli.stage_printing import print_views
from fxlab.cli.app import app
from fxlab.ir.json_values import dumps_strict


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
        help="Comma-separated stages to record and show (default: all of the mode's): dynamo,aten,functional,pre_ge,ascend_ir (max-autotune) or dynamo,aten,functional,aclgraph (reduce-overhead, npugraph_ex).",
    ),
    mode: str | None = ModeOpt,
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Directory to save the trace in (manifest.json, graph_<k>/<stage>.py|.json, ascend_ir.pb|.pbtxt|.py|.json, aclgraph_capture.py).",
    ),
    plugin: list[Path] | None = PluginOpt,
    entry: str | None = EntryOpt,
    as_json: bool = typer.Option(False, "--json", help="Print a machine-readable summary instead of the views."),
    verify: bool | None = typer.Option(
        None,
        "--verify/--no-verify",
        help="Run the Ascend IR (or the aclgraph graph) on CPU and compare with the compiled run (default: on, for every graph).",
    ),
    strict: bool = typer.Option(
        False, "--strict", help="Exit 1 when the trace is unverified (a check could not run), not only when it is partial."
    ),
    summary_only: bool = typer.Option(False, "--summary", help="Print only the one-screen summary, not the stages."),
    graphviz: str | None = typer.Option(
        None,
        "--graphviz",
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
    html: Path | None = typer.Option(None, "--html", help="Also write a self-contained HTML report of the trace to this file."),
    converter: str = typer.Option(
        "builtin",
        "--converter",
        help="Who builds the ascend_ir stage: builtin (fxlab's converters) or torchair (TorchAir's own code path: the real torchair when importable, else a copy of its sources, see --torchair-path).",
    ),
    torchair_path: Path | None = typer.Option(
        None,
        "--torchair-path",
        help="TorchAir sources to load for --converter torchair: a torch_npu wheel's torch_npu/dynamo/torchair folder or a TorchAir checkout's python/ folder (default: $FXLAB_TORCHAIR_PATH, the installed torchair, or the copy `fxlab torchair fetch` made).",
    ),
    convert_refused: bool = typer.Option(
        False,
        "--convert-refused",
        help="Let the built-in conversion convert ops TorchAir fails on (its converter only raises, or it has none) with fxlab's own converters; without it they are marked refused and the trace is partial.",
    ),
    dynamic: bool = typer.Option(
        False,
        "--dynamic",
        help="Compile with torch.compile(dynamic=True), whatever the model file's compile_options say; a graph with symbolic sizes is checked at a second size too.",
    ),
    soc: str = typer.Option(
        "Ascend910B2",
        "--soc",
        help="The SoC stood in: what the NPU machine reports to TorchAir's converters for --converter torchair (some converters branch on it), and whose core counts the aclgraph path's concurrent stream core demands are checked against (default: Ascend910B2, an Atlas A2 part).",
    ),
    nproc: int | None = typer.Option(
        None,
        "--nproc",
        min=1,
        help="Trace N ranks, one process each, with torchrun's environment and gloo on CPU: the model file may call dist.init_process_group() itself. Each rank's collectives are checked against its peers' before any runs. Under torchrun, each process is one rank without --nproc.",
    ),
    timeout: float = typer.Option(
        300.0, "--timeout", min=1.0, help="With several ranks: stop them all and report the ranks still running after this many seconds."
    ),
) -> None:
    from fxlab.viz import trace_views

    wanted = parse_stages(stages, mode)
    check_converter(converter)  # bad options fail before --out is touched
    if graphviz is not None:
        from fxlab.cli.graphviz import check_format

        check_format(graphviz)
    if nproc is not None or _under_launcher():
        from fxlab.cli import trace_ranks

        request = trace_ranks.RankRequest(
            model,
            entry,
            list(plugin or []),
            wanted,
            verify,
            converter,
            torchair_path,
            soc,
            convert_refused,
            timeout,
            summary_only,
            html is not None,
            mode,
            dynamic=dynamic,
        )
        raise typer.Exit(trace_ranks.trace_ranks(request, nproc, out, html, as_json, graphviz))
    trace = _capture_and_save(
        model,
        entry,
        plugin,
        wanted,
        verify,
        converter,
        torchair_path,
        out,
        soc=soc,
        convert_refused=convert_refused,
        mode=mode,
        dynamic=dynamic,
    )
    _write_extras(trace, graphviz, html, out, picture_options(expand, focus, depth))  # after the trace is saved
    if as_json:
        console.out().print_json(dumps_strict(trace_views.json_summary(trace, str(out) if out else None)))
    else:
        print_views(trace, trace_views, summary_only)
        if out is not None:
            console.note(f"trace saved to {out}/ (manifest.json, {len(trace.graphs)} graph folder(s))")
    raise typer.Exit(exit_code(trace.status, strict))


def exit_code(status: str, strict: bool = False) -> int:
    """0 for ``ok``, and for ``unverified`` unless ``strict``; 1 otherwise."""
    return 0 if status == "ok" or (status == "unverified" and not strict) else 1


def _under_launcher() -> bool:
    """This process is one rank of a job a launcher (torchrun) started."""
    from fxlab.distributed.environment import launched_rank

    return launched_rank() is not None


def _capture_and_save(
    model: Path,
    entry: str | None,
    plugin: Any,
    wanted: Any,
    verify: bool | None,
    converter: str,
    torchair_path: Path | None,
    out: Path | None,
    *,
    soc: str,
    convert_refused: bool,
    mode: str | None = None,
    dynamic: bool = False,
) -> Any:
    """Capture, and with ``--out`` save the trace beside the folder and move it in whole:
    a run that fails or is interrupted leaves the trace already there as it was."""
    from fxlab.capture.save import StagedTrace, save_trace

    staged = StagedTrace(out) if out is not None else None
    try:
        with ascend_ir_converter(converter, torchair_path, soc, mode) as convert:
            _, trace = capture_model(
                model,
                entry,
                plugin,
                wanted,
                verify=verify,
                converter=convert,
                convert_refused=convert_refused,
                mode=mode,
                soc=soc,
                dynamic=dynamic,
                reference=aclgraph_reference(convert, torchair_path, soc),
            )
        if staged is not None:
            save_trace(trace, staged.folder)
            staged.publish()
    except BaseException as exc:
        held = staged.abandon(str(model), _failure(exc)) if staged is not None else None
        if held in _HELD:
            console.note(_HELD[held].format(out=out))
        raise
    return trace


_HELD = {"kept": "the trace already in {out}/ is left as it was", "new": "the new trace was saved to {out}/ before this"}


def _failure(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    from fxlab.errors import FxlabError

    return str(exc) if isinstance(exc, FxlabError) else f"{type(exc).__name__}: {exc}"


def picture_options(expand: list[str] | None, focus: str | None, depth: int) -> Any:
    from fxlab.viz.fold import FoldOptions

    return FoldOptions(expand=tuple(expand or ()), focus=focus, depth=depth)


def _picture_progress(done: int, total: int, path: Path, seconds: float, error: str | None) -> None:
    console.note(f"picture {done}/{total}: {path} ({seconds:.1f} s{', failed' if error else ''})")


def _write_extras(trace: Any, graphviz: str | None, html: Path | None, out_dir: Path | None, options: Any) -> None:
    """Pictures and the HTML report, when asked for (after the trace is saved, so a slow
    `dot` or Ctrl-C never costs the trace)."""
    if graphviz is not None:
        from fxlab.capture.save import prepare_out_dir
        from fxlab.cli.pictures import write_pictures

        folder = out_dir if out_dir is not None else prepare_out_dir(Path("fxlab-out"))
        files, messages = write_pictures(trace, folder, graphviz, options, _picture_progress)
        for message in messages:
            console.warn(message)
        console.note(f"{len(files)} picture file(s) written under {folder}/")
    if html is not None:
        from fxlab.cli.pictures import write_html_report

        try:
            console.note(f"HTML report written to {write_html_report(trace, html)}")
        except OSError as exc:
            from fxlab.errors import OutputError

            raise OutputError(f"--html {html} cannot be written ({exc.strerror or exc}). Choose a writable path.") from exc
