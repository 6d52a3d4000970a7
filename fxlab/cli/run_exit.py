"""How a process of a traced program ends, as fxlab sees it: the run saved before an end
that runs no exit handler, and the exit code the process records.

- ``os._exit(n)`` ends a process at once: no ``atexit`` handler runs, so a traced process
  would leave its part of the run unsaved (the root: the folder staged beside ``DIR``,
  never moved into place). While a process is traced, ``os._exit`` first saves what the
  run has (:func:`saved_at_os_exit`), as ``torch.compile`` is a recorder while the program
  runs, put back after.
- SIGTERM and SIGHUP, while the program leaves them their default action, end the process
  the same way (:func:`saved_when_ended_by_signal`): saved first, then ended by the signal.
- An ``atexit`` handler cannot read the exit code: :class:`ExitNotes` notes the code of a
  ``sys.exit`` call in the main thread, and an uncaught exception is ``sys.last_value``.
  A ``raise SystemExit(n)`` written out passes through nothing the process sees; the
  traced process that waits for it does (:func:`noting_child_exits`), and its record wins.

Each acts only in the process that installed it: a child forked from it inherits the
hooks, but the run is not its to save.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from fxlab.cli.run_program import end_by_signal

Save = Callable[[int], None]  # save the run, given the exit code the process ends with
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def saved_at_os_exit(save: Save) -> Iterator[None]:
    """For the block, ``os._exit(n)`` called by this process first runs ``save(n)``."""
    real, owner, armed = os._exit, os.getpid(), [True]

    def exit_saving(status: int) -> NoReturn:
        if armed[0] and os.getpid() == owner:
            armed[0] = False  # once: a second call (another thread, the save itself) ends at once
            save_quietly(save, status)
        real(status)

    os._exit = exit_saving
    try:
        yield
    finally:
        armed[0] = False  # a reference the program kept calls the real one from now on
        if os._exit is exit_saving:
            os._exit = real


@contextlib.contextmanager
def saved_when_ended_by_signal(save: Save) -> Iterator[None]:
    """A signal that ends the program as it would end it without fxlab (SIGTERM, SIGHUP,
    while the program keeps their default action) first runs ``save(128 + signal)``."""
    owner = os.getpid()

    def save_and_end(number: int, frame: object) -> None:
        if os.getpid() == owner:
            save_quietly(save, 128 + number)
        end_by_signal(number)

    main = threading.current_thread() is threading.main_thread()  # only the main thread sets handlers
    ours = {number: save_and_end for number in ENDING_SIGNALS if main and signal.getsignal(number) is signal.SIG_DFL}
    for number, handler in ours.items():
        signal.signal(number, handler)
    try:
        yield
    finally:
        for number, handler in ours.items():
            if signal.getsignal(number) is handler:
                signal.signal(number, signal.SIG_DFL)


@contextlib.contextmanager
def noting_child_exits(codes: dict[int, int]) -> Iterator[None]:
    """For the block, the exit code of each child this process waits for is noted in
    ``codes`` by process id (128 + the signal for a child a signal ended), as ``subprocess``
    and ``multiprocessing`` wait for theirs: through ``os.waitpid``."""
    real, owner = os.waitpid, os.getpid()

    def waitpid_noting(pid: int, options: int) -> tuple[int, int]:
        found, status = real(pid, options)
        if found > 0 and os.getpid() == owner:
            with contextlib.suppress(ValueError):  # a stopped child has not ended
                code = os.waitstatus_to_exitcode(status)
                codes[found] = 128 - code if code < 0 else code
        return found, status

    os.waitpid = waitpid_noting
    try:
        yield
    finally:
        if os.waitpid is waitpid_noting:
            os.waitpid = real


def save_quietly(save: Save, code: int) -> None:
    """The process is ending: a failure to save is said, never raised."""
    try:
        save(code)
    except Exception as exc:  # noqa: BLE001 - the program's end is its own; fxlab's failure is only said
        print(f"fxlab: the run could not be saved ({type(exc).__name__}: {exc}).", file=sys.stderr)


class ExitNotes:
    """The exit code a traced process ends with, as its ``atexit`` handler can know it:
    1 after an uncaught exception (130 after Ctrl-C, which ends Python by SIGINT), else the
    code of the last ``sys.exit`` its main thread called, else 0. A ``raise SystemExit(n)``
    written out passes through nothing the process sees: it records 0 (the traced process
    that waits for it records ``n``: :func:`noting_child_exits`)."""

    def __init__(self) -> None:
        self.asked: object = None  # sys.exit's argument

    @contextlib.contextmanager
    def watching(self) -> Iterator[ExitNotes]:
        """``sys.exit`` notes its code for the block (then raises SystemExit, as it does)."""
        real = sys.exit

        def exit_noting(code: Any = None) -> NoReturn:
            if threading.current_thread() is threading.main_thread():  # another thread's sys.exit ends that thread only
                self.asked = code
            real(code)

        sys.exit = exit_noting
        try:
            yield self
        finally:
            if sys.exit is exit_noting:
                sys.exit = real

    def code(self) -> int:
        uncaught = getattr(sys, "last_value", None)
        if uncaught is not None:
            return 128 + signal.SIGINT if isinstance(uncaught, KeyboardInterrupt) else 1
        if self.asked is None:
            return 0
        return self.asked if isinstance(self.asked, int) else 1  # sys.exit("message") prints it and exits 1
