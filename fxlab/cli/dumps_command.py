"""``fxlab dumps PATH...``: what GE did on the NPU machine (its phase dumps, OM JSON,
SuperKernel sub-graph dumps, fusion_result.json), mapped back to TorchAir's ops, the FX
nodes and source lines through a saved trace (``--trace``) or TorchAir's own graph dump;
and ``fxlab diff TRACE NPU_DUMP`` (the trace's ``ascend_ir`` against GE's last phase)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from fxlab.cli import console
from fxlab.cli.files import check_output_file, write_atomic
from fxlab.cli.app import app
from fxlab.cli.saved_trace import load_saved_trace
from fxlab.errors import OutputError, UsageError
from fxlab.ir.json_values import dumps_strict

JSON_FILE = "dumps.json"
HTML_FILE = "dumps.html"
PROGRESS_FROM_CHARS = 4 << 20  # a file this long shows how far its read is


@app.command(
    "dumps",
    help=(
        "Read files copied off an NPU machine: GE's phase dumps (DUMP_GE_GRAPH: ge_proto_*.txt, ge_onnx_*.pbtxt), "
        "SuperKernel sub-graph dumps, OM models as JSON (atc --mode=1), TorchAir's graph dumps (txt, pbtxt, py) and "
        "fusion_result.json. For every graph: its phases in order with what each fused, renamed, inserted and removed, and every "
        "op with what GE made of it (originals, passes, UB fusion scope, SuperKernel, stream and core limits, format and "
        "dtype changes). With --trace (a folder `fxlab trace --out` wrote), or TorchAir's dump among the files, every GE "
        "op maps to TorchAir's ops, FX nodes and source lines, and the SuperKernel scopes fxlab predicted are compared "
        "with the ones GE made.\n\n"
        "Examples:\n\n"
        "  fxlab dumps npu_run/ --trace trace_out/\n\n"
        "  fxlab dumps npu_run/ge_proto_00000123_graph_1_Build.txt --json\n\n"
        "  fxlab dumps npu_run/ --trace trace_out/ --html report.html"
    ),
)
def dumps_command(
    paths: list[Path] = typer.Argument(..., help="Dump files, or folders searched for them.", show_default=False, metavar="PATH..."),
    traces: list[Path] | None = typer.Option(
        None, "--trace", metavar="DIR", help="A saved fxlab trace of the same model (`fxlab trace MODEL.py --out DIR`)."
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        metavar="",
        help="Print the result as JSON (graphs -> ops with originals, passes, fusion_scope, inserted, fx_nodes, source).",
    ),
    html: Path | None = typer.Option(
        None,
        "--html",
        metavar="FILE",
        help="Also write a self-contained HTML page: GE's phases in the graph viewer, beside the trace's stages.",
    ),
    out: Path | None = typer.Option(None, "--out", metavar="DIR", help=f"Also write {JSON_FILE} and {HTML_FILE} into this folder."),
    phase: str | None = typer.Option(
        None, "--phase", metavar="PHASE", help="The phase whose ops the table lists (default: each graph's last)."
    ),
    every_op: bool = typer.Option(
        False, "--all-ops", metavar="", help="List every op, not only those GE fused, renamed, inserted, cut or changed."
    ),
) -> None:
    _check_outputs(out, html)
    dumps, loaded, joined = read_and_join(paths, _one_trace(traces))
    _check_phase(phase, dumps)
    verdicts = _super_kernel_verdicts(loaded, dumps, joined) if loaded is not None else []
    data = _json(dumps, verdicts)
    if out is not None:
        _write(out / JSON_FILE, dumps_strict(data) + "\n", "--out")
        _write(out / HTML_FILE, _page(dumps, loaded, joined), "--out")
    if html is not None:
        _write(html, _page(dumps, loaded, joined), "--html")
    if as_json:
        console.print_json(dumps_strict(data))
        return
    from fxlab.viz.npu_dump_views import dumps_view, super_kernel_lines  # lazy: imports torch (seconds); `fxlab --help` must not

    console.out().print(dumps_view(dumps, phase, every_op))
    if verdicts:
        console.out().print(super_kernel_lines(verdicts))


def _one_trace(traces: list[Path] | None) -> Path | None:
    """The one ``--trace`` given (a dump is joined with one trace of its model)."""
    if traces and len(traces) > 1:
        raise UsageError(
            f"--trace is given {len(traces)} times ({', '.join(map(str, traces))}): the dumps are joined with one saved trace "
            "of the model they are of. Give the one trace folder `fxlab trace MODEL.py --out DIR` wrote for it."
        )
    return traces[0] if traces else None


def _check_outputs(out: Path | None, html: Path | None) -> None:
    """Every output path is checked before anything is read or written: a run never
    leaves half its files."""
    if out is not None:
        if out.exists() and not out.is_dir():
            raise OutputError(f"--out {out} is a file, not a folder. Give a folder path (it is created if missing).")
        if out.is_dir():
            for name in (JSON_FILE, HTML_FILE):
                check_output_file(out / name, "--out")
    if html is not None:
        check_output_file(html, "--html")


def _check_phase(phase: str | None, dumps: Any) -> None:
    phases = list(dict.fromkeys(g.phase for g in dumps.graphs))
    if phase is not None and phase not in phases:
        raise UsageError(f"--phase {phase!r} is in none of the dumps read: their phases are {', '.join(phases) or 'none'}.")


def read_and_join(paths: list[Path], trace_dir: Path | None) -> tuple[Any, Any, dict[int, int | None]]:
    """The dumps read (with progress on stderr), the saved trace, and for each GE graph
    (by position) joined with a TorchAir graph, the index of the trace graph it was joined
    with (None: joined with TorchAir's own dump)."""
    # lazy: the join imports torch (seconds); `fxlab --help` must not
    from fxlab.npu_dumps.join import join, merge_torchair_graphs, torchair_graph_from_ir
    from fxlab.npu_dumps.read import read_dumps

    loaded = load_saved_trace(trace_dir) if trace_dir is not None else None
    with console.progress("reading dumps") as status:
        dumps = read_dumps(paths, _progress(status))
    torchair = merge_torchair_graphs(dumps.torchair)
    trace_index: dict[int, int] = {}
    if loaded is not None:  # the trace knows every op's source line: it is joined first
        from_trace = [(g.index, torchair_graph_from_ir(g.ir, f"{trace_dir}/graph_{g.index}")) for g in loaded.graphs if g.ir is not None]
        if not from_trace:
            dumps.notes.append(
                f"the trace in {trace_dir} has no ascend_ir stage (it was traced in reduce-overhead or npugraph_ex mode, or with "
                "--stages leaving it out), so it maps no GE op: trace the model again in max-autotune mode with every stage"
            )
        trace_index = {id(graph): index for index, graph in from_trace}
        torchair = [graph for _, graph in from_trace] + torchair
    elif not torchair:
        dumps.notes.append("no --trace and no TorchAir graph dump among the files: GE ops are not mapped to FX nodes and source lines")
    return dumps, loaded, {position: trace_index.get(id(graph)) for position, graph in join(dumps, torchair).items()}


def _progress(status: Any) -> Any:
    def report(label: str, done: int, total: int) -> None:
        if total >= PROGRESS_FROM_CHARS:
            status.update(f"reading {Path(label).name}: {100 * done // max(total, 1)}%")

    return report


def _super_kernel_verdicts(trace: Any, dumps: Any, joined: dict[int, int | None]) -> list[Any]:
    # lazy: the reports import torch (seconds); `fxlab --help` must not
    from fxlab.reports.ge_superkernels import compare_super_kernels
    from fxlab.reports.scope_report import GraphInput, build_scope_report

    report = build_scope_report([GraphInput(g.index, None, g.ir) for g in trace.graphs if g.ir is not None])
    verdicts: list[Any] = []
    seen: set[tuple[int, str]] = set()
    for position, graph in reversed(list(enumerate(dumps.graphs))):  # each graph's last phase with SuperKernels
        index = joined.get(position)
        if index is None or (index, graph.key) in seen or not any(op.super_kernel_members for op in graph.ops):
            continue
        seen.add((index, graph.key))
        verdicts += compare_super_kernels(report, index, graph, dumps.graphs)
    return verdicts


def _json(dumps: Any, verdicts: list[Any]) -> dict[str, Any]:
    from fxlab.npu_dumps.phases import dump_set_json  # lazy: ~6 ms at every start; only reading dumps needs it

    data = dump_set_json(dumps)
    if verdicts:
        data["super_kernels"] = [v.to_json() for v in verdicts]
    return data


def _page(dumps: Any, trace: Any, joined: dict[int, int | None]) -> str:
    from fxlab.viz.npu_dumps_html import dumps_html  # lazy: imports torch (seconds); `fxlab --help` must not

    return dumps_html(dumps, trace, joined)


def _write(path: Path, text: str, option: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    except OSError as exc:
        raise OutputError(f"{option} {path} cannot be written ({exc.strerror or exc}). Choose a writable path.") from exc
    console.note(f"written {path}")


def npu_phase_diff(trace_dir: Path, dump_path: Path, graph: int | None, as_json: bool) -> int:
    """``fxlab diff TRACE NPU_DUMP``: each trace graph's ``ascend_ir`` against the last
    phase of the GE graph joined with it. Exit code as diff(1)."""
    # lazy: the diff imports torch (seconds); `fxlab --help` must not
    from fxlab.diff.npu_diff import diff_ir_with_phase
    from fxlab.npu_dumps.phases import phase_chains
    from fxlab.viz.npu_dump_views import npu_diff_view

    dumps, trace, joined = read_and_join([dump_path], trace_dir)
    if not any(g.ir is not None for g in trace.graphs):
        raise UsageError(
            f"{trace_dir} holds no Ascend IR (its stages: {', '.join(trace.stages)}), so nothing in it compares with GE's graphs: "
            "trace the model again with the ascend_ir stage (the default stages of `fxlab trace MODEL.py --out DIR`)."
        )
    diffs = []
    for chain in phase_chains(dumps.graphs).values():
        last = chain[-1]
        index = joined.get(dumps.graphs.index(last))
        if index is None or (graph is not None and index != graph):
            continue
        diffs.append(diff_ir_with_phase(index, trace.graphs[index].ir, last))
    if not diffs:
        raise UsageError(
            f"no GE graph in {dump_path} holds the ops of {trace_dir}'s Ascend IR: the dumps are of another model or run, "
            "or hold no phase of its graphs. Dump the same model's run (DUMP_GE_GRAPH) and trace it with `fxlab trace --out`."
        )
    if as_json:
        console.print_json(dumps_strict({"graphs": [d.to_json() for d in diffs], "notes": dumps.notes}))
    else:
        console.out().print(npu_diff_view(diffs))
    return 0 if all(d.identical for d in diffs) else 1
