"""Start N rank processes on this machine with torch.distributed's launcher.

:func:`launch_ranks` runs ``worker(*args)`` in ``nproc`` processes through
``torch.distributed.launcher.api`` (the code ``torchrun`` runs): a static rendezvous on
the loopback at a free port, so every worker gets torchrun's environment (``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR=127.0.0.1``,
``MASTER_PORT``), no restarts, and each worker's stdout and stderr in a log file.
Workers are forked, so they start with everything this process imported.

Each worker reports through its folder in ``run_dir`` (:class:`RankReporter`): its
process id and what it is doing, and, when it fails, the error to show. When a rank
fails the launcher stops the others at once; when the run outlasts ``timeout`` the
ranks still running are asked for their Python stacks (``faulthandler``) and stopped;
Ctrl-C stops them all. The launcher never waits longer than ``timeout``.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import logging
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs, SignalException, Std
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
from torch.distributed.elastic.utils.distributed import get_free_port
from torch.distributed.launcher.api import LaunchConfig, elastic_launch

from fxlab.distributed.agreement import RankMismatchError
from fxlab.errors import FxlabError

STACK_SIGNAL = signal.SIGUSR1
SHUTDOWN_SECONDS = 2
_QUIET_LOGGERS = ("torch.distributed.elastic", "torch.distributed.launcher", "torch.multiprocessing")


class LaunchTimeout(BaseException):
    """Raised in the launching thread when the run outlasts its timeout."""


class LaunchStopped(FxlabError):
    """fxlab was stopped by a signal while its ranks ran; they were stopped with it."""


@dataclass
class RankFailure:
    rank: int
    message: str
    exit_code: int = 1
    kind: str = "error"  # error | mismatch | internal | timeout | signal
    phase: str = ""
    log_tail: str = ""


@dataclass
class LaunchResult:
    results: dict[int, Any] = field(default_factory=dict)
    failures: dict[int, RankFailure] = field(default_factory=dict)
    seconds: float = 0.0
    timed_out: bool = False


# -- the worker's side ---------------------------------------------------------------------------
class RankReporter:
    """What a worker writes for the launcher, in ``run_dir/rank_<r>/``."""

    def __init__(self, run_dir: Path, rank: int) -> None:
        self.folder = Path(run_dir) / f"rank_{rank}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.phase("starting")

    def phase(self, what: str) -> None:
        (self.folder / "phase.json").write_text(json.dumps({"pid": os.getpid(), "phase": what}))

    def failed(self, exc: BaseException) -> None:
        signal_name = _stopping_signal(exc)
        if signal_name is not None:
            # The launcher stops the other ranks when one fails: whatever this rank was
            # doing (and however fxlab wrapped it) is a consequence, not a cause.
            record = {"message": f"stopped by {signal_name}", "exit_code": 1, "kind": "signal", "traceback": ""}
        else:
            is_fxlab = isinstance(exc, FxlabError)
            record = {
                "message": str(exc) if is_fxlab else f"{type(exc).__name__}: {exc}",
                "exit_code": getattr(exc, "exit_code", 1),
                "kind": "mismatch" if isinstance(exc, RankMismatchError) else "error" if is_fxlab else "internal",
                "traceback": "" if is_fxlab else "".join(traceback.format_exception(exc)),
            }
        (self.folder / "failure.json").write_text(json.dumps(record))


def _stopping_signal(exc: BaseException) -> str | None:
    """The signal's name when ``exc`` is, or was caused by, the launcher stopping this rank
    (torch.distributed.elastic raises ``SignalException`` in a rank it terminates)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, SignalException):
            return signal.Signals(current.sigval).name
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def rank_worker(worker: Callable[..., Any]) -> Callable[..., Any]:
    """``worker`` as a launched process runs it: stacks dumped on request, failures
    recorded. ``worker`` takes the reporter first."""

    def run(run_dir: str, *args: Any) -> Any:
        reporter = RankReporter(Path(run_dir), int(os.environ["RANK"]))
        faulthandler.register(STACK_SIGNAL, file=sys.stderr, all_threads=True)
        try:
            return worker(reporter, *args)
        except BaseException as exc:
            reporter.failed(exc)
            raise

    run.__name__ = run.__qualname__ = f"rank_worker_{worker.__name__}"
    return run


# -- the launcher's side -------------------------------------------------------------------------
def launch_ranks(nproc: int, worker: Callable[..., Any], args: tuple[Any, ...], *, timeout: float, run_dir: Path) -> LaunchResult:
    """Run ``rank_worker(worker)`` in ``nproc`` ranks (see the module docstring)."""
    result = LaunchResult()
    start = time.monotonic()
    config = _config(nproc, run_dir)
    try:
        with _quiet_launcher(), _deadline(timeout, run_dir, nproc):
            result.results = elastic_launch(config, rank_worker(worker))(str(run_dir), *args)
    except ChildFailedError as exc:
        result.failures = {rank: _failure(run_dir, rank, f.exitcode, f.message) for rank, f in exc.failures.items()}
    except LaunchTimeout:
        result.timed_out = True
        result.failures = _unfinished(run_dir, nproc, timeout)
    except SignalException as exc:  # the launcher stopped every rank before raising this
        if exc.sigval == signal.SIGINT:
            raise KeyboardInterrupt from None
        stopped = LaunchStopped(f"fxlab was stopped by {signal.Signals(exc.sigval).name}; every rank was stopped with it.")
        stopped.exit_code = 128 + int(exc.sigval)
        raise stopped from None
    finally:
        result.seconds = time.monotonic() - start
    _add_other_failures(result, run_dir, nproc)
    return result


def _config(nproc: int, run_dir: Path) -> Any:
    return LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=nproc,
        run_id="fxlab",
        rdzv_backend="static",
        rdzv_endpoint=f"127.0.0.1:{get_free_port()}",
        rdzv_configs={"rank": 0},
        local_addr="127.0.0.1",
        max_restarts=0,
        monitor_interval=0.05,
        start_method="fork",
        logs_specs=DefaultLogsSpecs(log_dir=str(run_dir / "logs"), redirects=Std.ALL),
        shutdown_timeout=SHUTDOWN_SECONDS,
    )


@contextlib.contextmanager
def _quiet_launcher() -> Iterator[None]:
    """The launcher logs its own report of every failure: fxlab reports them itself."""
    # The launcher's loggers set their own levels: each one is quieted, not just the parents.
    names = [n for n in logging.root.manager.loggerDict if n.startswith(_QUIET_LOGGERS)]
    loggers = [logging.getLogger(name) for name in {*_QUIET_LOGGERS, *names}]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


@contextlib.contextmanager
def _deadline(timeout: float, run_dir: Path, nproc: int) -> Iterator[None]:
    """Raise :class:`LaunchTimeout` in this thread after ``timeout`` seconds, once the
    ranks still running have dumped their stacks into their logs."""

    def expire(signum: int, frame: Any) -> None:
        _ask_for_stacks(run_dir, nproc)
        raise LaunchTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _phase(run_dir: Path, rank: int) -> dict[str, Any]:
    try:
        return json.loads((run_dir / f"rank_{rank}" / "phase.json").read_text())
    except (OSError, ValueError):
        return {}


def _ask_for_stacks(run_dir: Path, nproc: int) -> None:
    for rank in range(nproc):
        state = _phase(run_dir, rank)
        if state.get("pid") and state.get("phase") != "done":
            with contextlib.suppress(OSError):
                os.kill(state["pid"], STACK_SIGNAL)
    time.sleep(0.5)


def log_of(run_dir: Path, rank: int, stream: str = "stderr") -> Path | None:
    found = sorted((run_dir / "logs").glob(f"*/attempt_*/{rank}/{stream}.log"))
    return found[-1] if found else None


def _tail(run_dir: Path, rank: int, lines: int = 25) -> str:
    path = log_of(run_dir, rank)
    if path is None:
        return ""
    text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join(text[-lines:])


def _failure(run_dir: Path, rank: int, exit_code: int, launcher_message: str) -> RankFailure:
    """A failed rank: its own record when it wrote one, else what the launcher saw."""
    phase = _phase(run_dir, rank).get("phase", "")
    try:
        record = json.loads((run_dir / f"rank_{rank}" / "failure.json").read_text())
    except (OSError, ValueError):
        kind = "signal" if exit_code < 0 else "internal"
        return RankFailure(rank, launcher_message or f"exit code {exit_code}", 1, kind, phase, _tail(run_dir, rank))
    tail = record.get("traceback") or _tail(run_dir, rank) if record["kind"] == "internal" else ""
    return RankFailure(rank, record["message"], int(record["exit_code"]), record["kind"], phase, tail)


WAITING = "waiting for rank"  # the phase of a rank stopped at the cross-rank check


def _unfinished(run_dir: Path, nproc: int, timeout: float) -> dict[int, RankFailure]:
    """The ranks still running at the timeout; those waiting for a peer are not its cause."""
    failures = {}
    for rank in range(nproc):
        phase = _phase(run_dir, rank).get("phase", "not started")
        if phase != "done":
            message = f"rank {rank} did not finish within {timeout:g} s (it was {phase})"
            kind = "signal" if phase.startswith(WAITING) else "timeout"
            failures[rank] = RankFailure(rank, message, 1, kind, phase, _stack_in_log(run_dir, rank))
    return failures


def _stack_in_log(run_dir: Path, rank: int, frames: int = 12) -> str:
    """Where the rank's main thread was, innermost call first: the frames faulthandler
    dumped into its log, down to the worker's entry (the rest is the launcher's)."""
    path = log_of(run_dir, rank)
    text = path.read_text(encoding="utf-8", errors="replace") if path else ""
    start = text.rfind("Current thread 0x")
    if start < 0:
        return _tail(run_dir, rank)
    kept = []
    for line in text[start:].splitlines()[1:]:
        if not line.strip() or (__file__ in line and " in run" in line):
            break
        kept.append(line.strip())
    return "\n".join(kept[:frames])


def _add_other_failures(result: LaunchResult, run_dir: Path, nproc: int) -> None:
    """Ranks the launcher stopped after another failed did not fail themselves; a rank
    that recorded a failure of its own is reported with it."""
    for rank in range(nproc):
        if rank not in result.failures and rank not in result.results and (run_dir / f"rank_{rank}" / "failure.json").exists():
            result.failures[rank] = _failure(run_dir, rank, 1, "")
