"""``fxlab run [OPTIONS] -- COMMAND...``: any program, unchanged, with every function it
compiles with TorchAir's backends traced as ``fxlab trace`` traces a model file.

The program runs as it would without fxlab: its output, its exit code, its signals are
its own (:mod:`fxlab.cli.run_program`). ``python script.py`` and ``python -m module``
run in this process; any other command (``torchrun``, a shell script) runs as a child
process, and every Python process of it is traced through fxlab's process hook
(:mod:`fxlab.cli.run_hook`). Each compile, and each recompile, is saved as a trace in the
run folder as soon as it is made (:mod:`fxlab.cli.run_folder`); when the program ends,
fxlab's notes and a table of what was compiled, where, with which backend and mode, and
each trace's status go to stderr.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fxlab.cli.app import app
from fxlab.cli.common import PluginOpt, parse_stages, request_of
from fxlab.cli.run_program import (
    COMMAND,
    CannotStart,
    Program,
    check_runnable,
    end_by_signal,
    parse_program,
    run_child,
    run_in_process,
)
from fxlab.cli.soc_options import SocIniOpt, SocOpt
from fxlab.cli.files import check_output_file
from fxlab.errors import FxlabError, UsageError
from fxlab.socs import choose_soc

if TYPE_CHECKING:
    from fxlab.capture.request import TraceRequest
    from fxlab.cli.run_folder import RunFolder
    from fxlab.cli.run_hook import TracedProcess

DEFAULT_OUT = Path("fxlab-run")
DEFAULT_NPUS = 8  # an Atlas server's


@app.command(
    "run",
    context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
    help=(
        "Run a program unchanged and trace every function it compiles with TorchAir's backends "
        "(torchair.get_npu_backend(...), the 'npu' and 'npugraph_ex' backends, npugraph_ex.compile_fx): "
        "each compile and recompile is saved as a trace, with every stage and check `fxlab trace` gives, "
        "the line of the torch.compile call, the line of the call that compiled it and Dynamo's recompile "
        "reason. Without an NPU, the npu device runs on the CPU. The program's output, exit code and signals "
        "are its own; at the end a table of what was compiled goes to stderr.\n\n"
        "Examples:\n\n"
        "  fxlab run -- python infer.py --batch 8\n\n"
        "  fxlab run --out run_dir --html run.html -- python -m my_server.warmup\n\n"
        "  fxlab run -- torchrun --nproc-per-node 2 tp_infer.py\n\n"
        "  FXLAB_TRACE=run_dir python infer.py   (any launcher: every Python process of it is traced)"
    ),
)
def run_command(
    command: list[str] = typer.Argument(
        None,
        metavar="-- COMMAND...",
        help="The program, as you would run it: python script.py ARGS, python -m module ARGS, torchrun ..., any command.",
    ),
    out: Path = typer.Option(
        DEFAULT_OUT,
        "--out",
        metavar="DIR",
        help="The run folder: manifest.json, and one saved trace per compile (trace_<k>/); rank_<r>/ per rank of a multi-process program. Replaced whole by each run.",
    ),
    stages: str | None = typer.Option(
        None, "--stages", metavar="STAGES", help="Comma-separated stages to record (default: all of each compile's mode)."
    ),
    verify: bool | None = typer.Option(
        None,
        "--verify/--no-verify",
        metavar="",
        help="Run the Ascend IR (or the aclgraph graph) on CPU against the compiled run (default: on).",
    ),
    converter: str = typer.Option(
        "builtin",
        "--converter",
        metavar="builtin|torchair",
        help="Who builds the ascend_ir stage: fxlab's converters, or TorchAir's own code.",
    ),
    torchair_path: Path | None = typer.Option(None, "--torchair-path", metavar="DIR", help="TorchAir sources for --converter torchair."),
    convert_refused: bool = typer.Option(
        False, "--convert-refused", metavar="", help="Convert ops TorchAir refuses with fxlab's own converters where there is one."
    ),
    plugin: list[Path] | None = PluginOpt,
    soc: str | None = SocOpt,
    soc_ini: Path | None = SocIniOpt,
    html: Path | None = typer.Option(
        None, "--html", metavar="FILE", help="Also write one self-contained HTML page with every trace's report."
    ),
    npus: int = typer.Option(
        DEFAULT_NPUS,
        "--npus",
        min=1,
        metavar="N",
        help="Without an NPU: how many NPUs the CPU stands in for (torch.npu.device_count(), the indexes set_device takes); torchrun's LOCAL_WORLD_SIZE wins in its workers.",
    ),
    strict: bool = typer.Option(
        False, "--strict", metavar="", help="When the program exits 0, exit 1 if a trace is not ok (partial, unverified or not made)."
    ),
) -> None:
    program = parse_program(command or [])
    request = request_of(
        model_is_file=False,
        model=Path(program.name),
        plugins=tuple(plugin or ()),
        stages=parse_stages(stages),
        converter=converter,
        torchair_path=torchair_path,
        soc=choose_soc(soc, soc_ini),
        verify=verify,
        convert_refused=convert_refused,
    )
    if program.kind == COMMAND:
        check_runnable(program)  # before anything is staged: --out is left as it was
        _check_hook(program.command[0])
    if html is not None:
        check_output_file(html, "--html")  # before the program runs, not after it
    code, status, ended_by = _run(program, request, soc_ini, out, html, npus)
    if ended_by is not None:
        end_by_signal(ended_by)
    raise typer.Exit(1 if strict and code == 0 and status != "ok" else code)


def _check_hook(command: str) -> None:
    from fxlab.cli.run_hook import hook_installed  # lazy: the run's modules, ~4 ms at every start

    if not hook_installed():
        raise UsageError(
            f"{command} is not `python script.py` or `python -m module`, so fxlab traces it through its process hook, which is not "
            "installed in this Python (fxlab-run.pth is in no site-packages folder). Install fxlab with pip (`pip install -e .` "
            "or the wheel), or run a Python program as `fxlab run -- python script.py`."
        )


def _run(
    program: Program, request: TraceRequest, soc_ini: Path | None, out: Path, html: Path | None, npus: int
) -> tuple[int, str, int | None]:
    """Run the program with its run folder; (its exit code, the run's status, the signal
    that ended it or None)."""
    # lazy: the run's modules (~4 ms at every start) and the npu device (torch)
    from fxlab.cli.run_hook import TracedProcess, environment, hook_environment, options_of
    from fxlab.compat.npu_device_api import NPUS_VARIABLE

    process = TracedProcess(request, program.command, out=out, report=_reporter(out, html))
    ended_by: int | None = None
    try:
        with environment({**hook_environment(process.root, options_of(request, soc_ini), program.name), NPUS_VARIABLE: str(npus)}):
            if program.kind == COMMAND:
                code, ended_by = _run_child(program, process)
            else:
                process.open()
                started_in = os.getcwd()
                try:
                    code = run_in_process(program, process.session.explain)
                except KeyboardInterrupt:
                    code, ended_by = 128 + signal.SIGINT, signal.SIGINT
                finally:
                    # The program may have changed directory; --out and --html are read as given, where fxlab started.
                    os.chdir(started_in)
        status = process.close(code)
    except CannotStart:
        process.discard()  # the program never ran: nothing to say in --out
        raise
    except BaseException as exc:
        process.abandon(str(exc) if isinstance(exc, FxlabError) else type(exc).__name__)
        raise
    process.report(process.run, status)
    return code, status, ended_by


def _run_child(program: Program, process: TracedProcess) -> tuple[int, int | None]:
    """Run the command as a child process; (its exit code, the signal that ended it or
    None). Its code is the run's record of it too, when it traced (its own record cannot
    see a signal)."""
    started: list[int] = []
    code = run_child(program, dict(os.environ), started.append)
    ended_by, code = (-code, 128 - code) if code < 0 else (None, code)
    process.run.exit_codes[started[0]] = code
    return code, ended_by


def _reporter(out: Path, html: Path | None) -> Callable[[RunFolder, str], None]:
    """What ``fxlab run`` says when the program ends: the table, and the --html page."""

    def report(run: RunFolder, status: str) -> None:
        from fxlab.cli.run_report import print_run, write_run_page  # lazy: the run's modules, ~4 ms at every start

        print_run(run, status, out)
        if html is not None:
            write_run_page(run, out, html)

    return report
