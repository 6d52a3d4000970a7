"""Running the user's program as Python would (``fxlab run``), in this process or as a
child process.

``python script.py ARGS`` and ``python -m module ARGS`` (with ``python`` this
interpreter's name, or its path) run in this process, as the interpreter runs them:
``sys.argv`` set, the script's folder (or the working folder for ``-m``) first on
``sys.path``, the code run as ``__main__`` (runpy), and the end as Python's own: the
threads it started (not daemons) run to their end first, under the same session; the exit
code of a ``SystemExit`` (its message on stderr), an uncaught exception's traceback
printed by ``sys.excepthook`` from the program's first frame on (fxlab's frames left out)
with exit code 1, and an uncaught Ctrl-C ending the process by SIGINT after fxlab has
saved what it has. Any other command (``torchrun ...``, a shell script, ``python -c ...``)
runs as a child process with the environment given (``python`` there is this interpreter too); Ctrl-C reaches it as it reaches any foreground
program, and fxlab's exit is the child's: its code, or the signal that ended it.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import threading
import shutil
import signal
import subprocess
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from fxlab.cli import console
from fxlab.errors import FxlabError, UsageError

SCRIPT, MODULE, COMMAND = "script", "module", "command"


@dataclass(frozen=True)
class Program:
    """The command to run, and how: a script or module of this Python, or a command."""

    command: tuple[str, ...]
    kind: str = COMMAND
    target: str = ""  # the script's path or the module's name
    args: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The program as the run names it: the script, ``-m module``, or the command."""
        return self.target if self.kind == SCRIPT else f"-m {self.target}" if self.kind == MODULE else " ".join(self.command)


def parse_program(command: Sequence[str]) -> Program:
    """What ``fxlab run -- COMMAND...`` runs (see the module docstring)."""
    if not command:
        raise UsageError("no program given: write it after --, e.g. `fxlab run -- python script.py ARGS`.")
    words = tuple(command)
    if not is_this_python(words[0]) or len(words) < 2:
        return Program(words)
    if words[1] == "-m" and len(words) > 2:
        return Program(words, MODULE, words[2], words[3:])
    if not words[1].startswith("-"):
        if not Path(words[1]).is_file():
            raise UsageError(f"{words[1]} is not a file: give the Python script to run, e.g. `fxlab run -- python path/to/script.py`.")
        return Program(words, SCRIPT, words[1], words[2:])
    return Program(words)


class CannotStart(UsageError):
    """The command cannot be started: no such program, or not one this system can run."""


def check_runnable(program: Program, path: str | None = None) -> None:
    """Refuse a command that cannot be started, before the run stages anything: ``PATH`` is
    searched as the child process would search it (``path``: another ``PATH``)."""
    name = program.command[0]
    if shutil.which(name, path=path) is not None:
        return
    use = "e.g. `fxlab run -- python script.py` for a Python script, `fxlab run -- ./run.sh` for a program in this folder"
    if os.sep not in name and os.path.isfile(name):
        raise CannotStart(
            f"{name}: no such command on PATH; a file of that name is in this folder: give its path (./{name}), or its "
            f"interpreter, e.g. `fxlab run -- python {name}`."
        )
    if os.sep not in name:
        raise CannotStart(f"{name}: no such command (no program of that name on PATH). Check its spelling, or give its path; {use}.")
    if not os.path.exists(name):
        raise CannotStart(f"{name}: no such file. Check the path, or give the program's name as you would type it; {use}.")
    if os.path.isdir(name):
        raise CannotStart(f"{name} is a folder, not a program. Give the program to run after --; {use}.")
    raise CannotStart(
        f"{name} cannot be run: it is not executable. Make it executable (chmod +x {name}), or run it through its "
        f"interpreter, e.g. `fxlab run -- python {name}` or `fxlab run -- sh {name}`."
    )


def is_this_python(word: str) -> bool:
    """``python``, ``python3``, ``python3.N`` of this version, or this interpreter's path."""
    names = {"python", f"python{sys.version_info.major}", f"python{sys.version_info.major}.{sys.version_info.minor}"}
    return word in names or os.path.abspath(word) == os.path.abspath(sys.executable)


# -- in this process ----------------------------------------------------------------------------
def run_in_process(program: Program, explain: Callable[[BaseException], FxlabError | None] | None = None) -> int:
    """Run a script or module as ``python`` runs it; its exit code (see the module
    docstring). A failure that is fxlab's to explain (the program asked the CPU standing
    in for the NPU for what only an NPU does; ``explain`` finds more) is said in one
    paragraph naming the call and the program's line, with that error's exit code."""
    before = set(threading.enumerate())
    with _as_main(program):
        code = _run_main_code(program, explain)
        _wait_for_its_threads(before)
    return code


def _run_main_code(program: Program, explain: Callable[[BaseException], FxlabError | None] | None) -> int:
    try:
        if program.kind == SCRIPT:
            runpy.run_path(os.path.abspath(program.target), run_name="__main__")
        else:
            runpy.run_module(program.target, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return _exit_code(exc.code)
    except KeyboardInterrupt as exc:
        _print_uncaught(exc, program)
        raise
    except BaseException as exc:  # noqa: BLE001 - the program's own failure, reported as Python reports it
        ours = fxlab_cause(exc) or (explain(exc) if explain is not None else None)
        if ours is not None:
            console.error(str(ours))
            return ours.exit_code
        _print_uncaught(exc, program)
        return 1
    return 0


def _wait_for_its_threads(before: set[threading.Thread]) -> None:
    """As Python does before it exits: the non-daemon threads the program started (and
    theirs) run to their end, while the session still watches what they compile."""
    while waiting := [t for t in threading.enumerate() if t not in before and not t.daemon and t is not threading.current_thread()]:
        for thread in waiting:
            thread.join()


def fxlab_cause(exc: BaseException | None) -> FxlabError | None:
    """fxlab's own error in ``exc``'s chain of causes (Dynamo wraps what it met while tracing)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, FxlabError):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or getattr(exc, "inner_exception", None) or exc.__context__
    return None


@contextlib.contextmanager
def _as_main(program: Program) -> Iterator[None]:
    """``sys.argv`` and ``sys.path`` as the interpreter sets them for the program; put back after."""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    folder = os.path.dirname(os.path.realpath(program.target)) if program.kind == SCRIPT else os.getcwd()
    sys.argv = [program.target if program.kind == SCRIPT else "-m", *program.args]
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.argv[:], sys.path[:] = saved_argv, saved_path


def _exit_code(code: object) -> int:
    """What Python exits with for ``sys.exit(code)``: a message is printed, exit code 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _print_uncaught(exc: BaseException, program: Program) -> None:
    """The traceback Python prints for the program: from its own first frame on (none for
    a program that does not compile: Python shows the SyntaxError alone), fxlab's frames
    left out."""
    traceback = exc.__traceback__
    while traceback is not None and not _is_program_frame(traceback.tb_frame.f_code.co_filename, program):
        traceback = traceback.tb_next
    exc.__traceback__ = without_fxlab_frames(traceback)  # the hook prints the exception's own traceback
    sys.stderr.flush()
    sys.excepthook(type(exc), exc, exc.__traceback__)


def without_fxlab_frames(traceback: types.TracebackType | None) -> types.TracebackType | None:
    """``traceback`` without the frames of fxlab's own code (the wrapper around each compiled
    call a program makes): what ``python PROGRAM`` prints has none."""
    frames = []
    while traceback is not None:
        if not _is_fxlab(traceback.tb_frame.f_code.co_filename):
            frames.append(traceback)
        traceback = traceback.tb_next
    rebuilt = None
    for frame in reversed(frames):
        rebuilt = types.TracebackType(rebuilt, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return rebuilt


def _is_program_frame(filename: str, program: Program) -> bool:
    if program.kind == SCRIPT:
        return os.path.realpath(filename) == os.path.realpath(program.target)
    return not filename.startswith("<frozen") and "runpy" not in os.path.basename(filename) and not _is_fxlab(filename)


def _is_fxlab(filename: str) -> bool:
    from fxlab.source_lines import is_fxlab_file  # lazy: imports torch (seconds); `fxlab --help` must not

    return is_fxlab_file(filename)


def end_by_signal(number: int) -> None:
    """End this process by signal ``number`` as an uncaught one would (its default action)."""
    with contextlib.suppress(OSError):  # SIGKILL (the OOM killer's) has no handler to reset
        signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)


# -- as a child process --------------------------------------------------------------------------
def run_child(program: Program, env: dict[str, str], started: Callable[[int], None] | None = None) -> int:
    """Run the command as a child process; its exit code (-N when signal N ended it).
    ``started`` hears its process id. While it runs, Ctrl-C is left to the child (it reaches
    the whole foreground group) and SIGTERM / SIGHUP sent to fxlab are passed on to it."""
    # ``python`` is this interpreter here as in ``python script.py`` (which runs in this
    # process), not whichever one PATH finds first.
    argv = [sys.executable, *program.command[1:]] if is_this_python(program.command[0]) else list(program.command)
    try:
        child = subprocess.Popen(argv, env=env)
    except OSError as exc:  # gone since check_runnable, or not a format this system runs (no #! line)
        check_runnable(program, env.get("PATH"))
        raise CannotStart(
            f"{program.command[0]} cannot be run ({exc.strerror or exc}). Give a program you can run; a script without a #! line "
            "runs through its interpreter, e.g. `fxlab run -- python script.py`."
        ) from exc
    if started is not None:
        started(child.pid)
    forwarded = (signal.SIGTERM, signal.SIGHUP)
    saved = {number: signal.getsignal(number) for number in (signal.SIGINT, *forwarded)}
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for number in forwarded:
        signal.signal(number, lambda received, frame: child.send_signal(received))
    try:
        return child.wait()
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
