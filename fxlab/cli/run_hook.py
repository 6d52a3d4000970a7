"""fxlab in every Python process of a traced program: ``FXLAB_TRACE=DIR``.

``fxlab run`` sets ``FXLAB_TRACE`` (and its options, ``FXLAB_TRACE_OPTIONS``) for the
program; any launcher passes the environment on (``torchrun``'s workers,
``torch.multiprocessing.spawn``'s children, the programs a shell script starts), and a
user may set it by hand for a program another launcher starts. fxlab's ``fxlab-run.pth``,
which ``pip install`` (a wheel, or ``pip install -e .``) puts into site-packages, has
every Python process read the variable at startup and call :func:`start` when it is set;
without it, the line does nothing else (one look at the environment).

A process that finds the variable opens a :class:`TracedProcess`: the program session
(:class:`~fxlab.session.program_session.ProgramSession`), and at exit its part of the
run folder (:mod:`fxlab.cli.run_folder`). The first such process of a run (``fxlab run``
itself, else the process the user started) is the root: it stages the folder, tells the
processes after it where (``FXLAB_TRACE_STAGED``), writes the run's manifest and moves
the folder into place when it ends; a process the program starts writes ``rank_<r>/``
(a rank) or ``process_<n>/`` inside it, when it traced something. An end that runs no
exit handler (``os._exit``, SIGTERM) saves first, and each process records the exit code
it can see (:mod:`fxlab.cli.run_exit`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import site
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fxlab.cli import console
from fxlab.cli.files import StagedTrace
from fxlab.cli.run_dumps import NpuDumps
from fxlab.cli.run_exit import ExitNotes, noting_child_exits, saved_at_os_exit, saved_when_ended_by_signal
from fxlab.cli.run_folder import RunFolder, child_folder, forget_bookkeeping, mark_staged, remove_stale_staged
from fxlab.cli.run_program import fxlab_cause, without_fxlab_frames
from fxlab.cli.run_report import print_run
from fxlab.errors import FxlabError
from fxlab.socs import choose_soc

if TYPE_CHECKING:
    from fxlab.capture.program import ProgramTrace
    from fxlab.capture.ranks import RankHooks
    from fxlab.capture.request import TraceRequest

TRACE = "FXLAB_TRACE"
OPTIONS = "FXLAB_TRACE_OPTIONS"
STAGED = "FXLAB_TRACE_STAGED"  # the root's staged folder: set for the processes after it
PROGRAM = "FXLAB_TRACE_PROGRAM"  # the program as the root names it (a spawned child's own command line is multiprocessing's)
HOOK_FILE = "fxlab-run.pth"
DEFAULT_TIMEOUT = 300.0


# -- the options, through the environment --------------------------------------------------------
def options_of(request: TraceRequest, soc_ini: Path | None = None) -> str:
    """The request's trace options as ``FXLAB_TRACE_OPTIONS`` carries them (JSON)."""
    return json.dumps(
        {
            "stages": list(request.stages),
            "converter": request.converter,
            "torchair_path": str(request.torchair_path) if request.torchair_path else None,
            "soc": None if soc_ini is not None else request.soc.name,
            "soc_ini": str(soc_ini) if soc_ini is not None else None,
            "verify": request.verify,
            "convert_refused": request.convert_refused,
            "plugins": [str(Path(p).resolve()) for p in request.plugins],
            "timeout": request.timeout,
        }
    )


def request_of_environment(program: str) -> TraceRequest:
    """The request ``FXLAB_TRACE_OPTIONS`` describes (fxlab's defaults when it is unset)."""
    # lazy: imports torch; fxlab-run.pth loads this module in every process of a run, and start() says what fails
    from fxlab.capture.request import TraceRequest

    options = json.loads(os.environ.get(OPTIONS) or "{}")
    soc = choose_soc(options.pop("soc", None), options.pop("soc_ini", None))
    fields = {key: value for key, value in options.items() if value is not None}
    if "torchair_path" in fields:
        fields["torchair_path"] = Path(fields["torchair_path"])
    return TraceRequest(Path(program), soc=soc, **fields)


def hook_environment(staged: Path, options: str, program: str) -> dict[str, str]:
    """What the root puts into the environment of the processes after it."""
    return {TRACE: str(staged), STAGED: str(staged), OPTIONS: options, PROGRAM: program}


@contextlib.contextmanager
def environment(values: dict[str, str]) -> Any:
    """``os.environ`` with ``values`` for the block (the program and its children see them)."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def hook_installed() -> bool:
    """Whether Python processes started from here load fxlab's hook (``fxlab-run.pth`` in a
    site folder of this interpreter, or one on its path)."""
    folders = {*site.getsitepackages(), site.getusersitepackages(), *sys.path}
    return any(Path(folder, HOOK_FILE).is_file() for folder in folders if folder)


# -- one process of the run ---------------------------------------------------------------------
Report = Callable[[RunFolder, str], None]  # the root says what the run saved: its folder, the run's status


class TracedProcess:
    """This process's part of a run: its session, its folder, and its end."""

    def __init__(
        self,
        request: TraceRequest,
        command: Sequence[str],
        *,
        out: Path | None = None,
        staged_root: Path | None = None,
        report: Report | None = None,
    ) -> None:
        """The root stages ``out`` (and ``report`` says what it saved: by default the
        table); a process after it writes inside ``staged_root``."""
        self.request, self.command = request, list(command)
        self._made = _first_missing(Path(os.path.realpath(out)).parent) if out is not None else None  # staging makes it
        self.staged = StagedTrace(out) if out is not None else None
        self.root = self.staged.folder if self.staged is not None else Path(staged_root or ".")
        self.folder: Path | None = self.root if self.staged is not None else None  # a child's: when it first saves
        self.run = RunFolder(self.folder or self.root, request.model_name, command)
        if self.staged is not None:
            mark_staged(self.root)
            for name in remove_stale_staged(self.root):
                self.run.note(f"removed {name}, the folder an earlier run of {out} staged beside it and left when it was killed or crashed")
        self.report: Report = report or self._print_run
        self.session: Any = None
        self.dumps: NpuDumps | None = None  # an NPU machine's TorchAir and GE dumps
        self.exits = ExitNotes()
        self._stack = contextlib.ExitStack()

    def _print_run(self, run: RunFolder, status: str) -> None:
        print_run(run, status, self.staged.out if self.staged is not None else self.root)

    def open(self, note: Callable[[str], None] | None = None) -> TracedProcess:
        """The session around the program (npu device on the CPU, stand-ins, watched compiles)."""
        # lazy: imports torch; fxlab-run.pth loads this module in every process of a run, and start() says what fails
        from fxlab.distributed.environment import npu_backends_on_gloo
        from fxlab.session.program_session import ProgramSession

        say = note or self.run.note
        gloo_notes: list[str] = []
        with contextlib.ExitStack() as stack:
            if on_npu_machine():  # TorchAir's and GE's dumps into the run folder
                self.dumps = NpuDumps(self.root / f".npu-dumps-{os.getpid()}")
                stack.enter_context(environment(self.dumps.environment(os.environ)))
            else:  # no NPU: an HCCL process group is made with gloo
                stack.enter_context(npu_backends_on_gloo(gloo_notes))
            torchair_dumps = str(self.dumps.torchair_folder) if self.dumps is not None else None
            self.session = stack.enter_context(
                ProgramSession(
                    self.request, self._saved, note=say, warn=say, torchair_dumps=torchair_dumps, ranks=_rank_hooks(self.request.timeout)
                )
            )
            stack.callback(self._note_all, gloo_notes)
            # An end that runs no exit handler saves first; sys.exit notes the exit code for close().
            stack.enter_context(saved_at_os_exit(self.end_now))
            stack.enter_context(saved_when_ended_by_signal(self.end_now))
            stack.enter_context(self.exits.watching())
            stack.enter_context(noting_child_exits(self.run.exit_codes))
            self._stack = stack.pop_all()
        return self

    def _note_all(self, notes: list[str]) -> None:
        for message in notes:
            self.run.note(message)

    def _saved(self, built: ProgramTrace) -> None:
        if self.folder is None:  # a process the program started: its folder is known once it traces
            self.folder = child_folder(self.root, _rank())
            self.run.folder = self.folder
        self.run.add(built)
        if self.staged is None:  # a process the program started: its traces are listed even if it is killed
            self.run.write_manifest(None, self._status())

    def close(self, exit_code: int | None) -> str:
        """End the session; write this process's manifest; the root moves the run into
        place. The run's status."""
        self._stack.close()
        self._collect_dumps()
        return self._save(exit_code)

    def _status(self) -> str:
        from fxlab.capture.program import run_status  # lazy: see open()

        return run_status([row["status"] for row in self.run.rows()])

    def _save(self, exit_code: int | None) -> str:
        """Write this process's manifest; the root moves the run into place. The run's status."""
        status = self._status()
        if self.folder is not None:
            self.run.write_manifest(exit_code, status)
        if self.staged is not None:
            forget_bookkeeping(self.root)
            self.staged.publish()
            self.run.folder = self.staged.out  # where the children's folders are read from now
        return status

    def _collect_dumps(self) -> None:
        """The dumps TorchAir and GE wrote, into this process's folder (an NPU machine)."""
        if self.dumps is None:
            return
        capture = self.session.capture if self.session is not None else None
        self.dumps.chosen += [Path(f.backend.dumps_to) for f in (capture.functions if capture else []) if f.backend.dumps_to]
        if self.folder is not None:
            self.dumps.collect(self.folder)

    def end_now(self, exit_code: int) -> None:
        """The process ends now and runs no exit handler (``os._exit``, a signal): what the run
        has saved is written and moved into place, the session left open (nothing of the
        program is undone), and the root says what it saved."""
        status = self._save(exit_code)
        if self.staged is not None:
            try:
                self.report(self.run, status)
            except FxlabError as exc:  # the run is saved; what could not be written (--html) is said
                console.error(str(exc))

    def discard(self) -> None:
        """The program could not be started: the root's folder is removed, ``--out`` left as it was."""
        self._stack.close()
        if self.staged is None:
            return
        shutil.rmtree(self.staged.folder, ignore_errors=True)
        made = self.staged.folder.parent
        while self._made is not None and (made == self._made or self._made in made.parents):
            with contextlib.suppress(OSError):  # the folders staging made for --out, while empty
                made.rmdir()
            made = made.parent

    def abandon(self, reason: str) -> None:
        """After fxlab itself failed: the root's folder is removed, ``--out`` left as it was."""
        self._stack.close()
        if self.staged is not None:
            self.staged.abandon(self.request.model_name, reason)


def _first_missing(folder: Path) -> Path | None:
    """The outermost folder of ``folder``'s path that does not exist yet (None: it exists)."""
    missing = None
    while not folder.exists() and folder != folder.parent:
        missing, folder = folder, folder.parent
    return missing


def on_npu_machine() -> bool:
    """torch_npu is really importable here: the program runs on the NPU, with TorchAir's own backend."""
    from fxlab.compat.layer import really_importable  # lazy: see TracedProcess.open

    return really_importable("torch_npu")


def _rank() -> int | None:
    """This process's rank: torchrun's ``RANK``, else its default process group's."""
    if os.environ.get("RANK", "").isdigit():
        return int(os.environ["RANK"])
    import torch.distributed as dist  # lazy: see TracedProcess.open

    return dist.get_rank() if dist.is_available() and dist.is_initialized() else None


def _rank_hooks(timeout: float) -> Callable[[], RankHooks | None]:
    """The cross-rank check, once the program has made a process group of several ranks."""

    def hooks() -> RankHooks | None:
        import torch.distributed as dist  # lazy: see TracedProcess.open

        if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2 or dist.get_backend() == "fake":
            return None
        from fxlab.distributed.agreement import RankAgreement, default_store  # lazy: see TracedProcess.open

        return RankAgreement(default_store, dist.get_rank(), dist.get_world_size(), timeout).program_hooks()

    return hooks


# -- started by fxlab-run.pth ---------------------------------------------------------------------
_STARTED = False


def start() -> None:
    """Trace this process when ``FXLAB_TRACE`` is set (see the module docstring). A failure
    to start is said in one paragraph; the program then runs without fxlab."""
    global _STARTED
    if _STARTED or not os.environ.get(TRACE) or _is_fxlab_command():
        return
    _STARTED = True  # a site folder seen under two names (a venv's lib64) reads the hook twice
    try:
        process = _process_of_environment()
        process.open()
    except Exception as exc:  # noqa: BLE001 - never stop the user's program from starting
        print(
            f"fxlab: FXLAB_TRACE is set, but tracing could not start in this process ({type(exc).__name__}: {exc}); "
            "the program runs without fxlab. Unset FXLAB_TRACE, or fix what the message names.",
            file=sys.stderr,
        )
        return
    atexit.register(_at_exit, process)
    sys.excepthook = _fxlab_errors_in_words(sys.excepthook, process)


def _fxlab_errors_in_words(previous: Callable[..., Any], process: TracedProcess) -> Callable[..., Any]:
    """The process's uncaught exceptions as Python prints them, but fxlab's own (what only an
    NPU can do, ranks that disagree on a collective) as its one paragraph."""

    def hook(kind: type[BaseException], value: BaseException, traceback: Any) -> None:
        ours = fxlab_cause(value) or (process.session.explain(value) if process.session is not None else None)
        if ours is None:
            previous(kind, value, without_fxlab_frames(traceback))
        else:
            print(f"error: {ours}", file=sys.stderr)

    return hook


def _is_fxlab_command() -> bool:
    """fxlab's own command line never traces itself (``fxlab run`` sets the variable for the program)."""
    argv = list(getattr(sys, "orig_argv", sys.argv))
    if "-m" in argv[:-1] and argv[argv.index("-m") + 1] == "fxlab":
        return True
    return any(Path(word).name == "fxlab" for word in argv[:2])


def _process_of_environment() -> TracedProcess:
    argv = list(getattr(sys, "orig_argv", sys.argv))
    request = request_of_environment(_program_of(argv))
    staged = os.environ.get(STAGED)
    if staged:
        return TracedProcess(request, argv, staged_root=Path(staged))
    process = TracedProcess(request, argv, out=Path(os.environ[TRACE]))
    os.environ.update(hook_environment(process.root, os.environ.get(OPTIONS) or "{}", request.model_name))  # for the processes it starts
    return process


def _program_of(argv: Sequence[str]) -> str:
    """The program this process runs: its script (a torchrun worker's), else the program
    the run's root named (a spawned child runs multiprocessing's own code), else Python."""
    script = next((word for word in argv[1:] if not word.startswith("-")), None)
    if script is not None and Path(script).is_file():
        return script
    return os.environ.get(PROGRAM) or script or (argv[0] if argv else "python")


def _at_exit(process: TracedProcess) -> None:
    try:
        status = process.close(process.exits.code())
    except Exception as exc:  # noqa: BLE001 - the program has ended: say it, never raise at exit
        print(f"fxlab: the run could not be saved ({type(exc).__name__}: {exc}).", file=sys.stderr)
        return
    if process.staged is not None:  # the root: it says what the run saved
        process.report(process.run, status)
