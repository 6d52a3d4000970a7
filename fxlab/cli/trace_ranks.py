"""``fxlab trace --nproc N`` and ``torchrun ... fxlab trace``: one trace per rank.

Every rank runs :func:`trace_one_rank` in its own process: it traces the model as a
single ``fxlab trace`` would, with the cross-rank check of its collectives
(:mod:`fxlab.distributed.agreement`), saves its trace into ``DIR/rank_<r>/`` and renders
its views. With ``--nproc`` fxlab starts the ranks itself
(:mod:`fxlab.distributed.launch`) and prints their results here; under ``torchrun`` each
process is one rank, and rank 0 gathers the others' results through the process group's
store and prints them. The views of ranks alike in structure are printed once.

Everything a rank needs is imported with this module (only a multi-rank trace imports
it), before the ranks are forked: each rank starts with it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from rich.console import Console

from fxlab.capture.program import run_status
from fxlab.capture.request import TraceRequest
from fxlab.capture.serialize import json_text
from fxlab.capture.trace import Trace
from fxlab.cli import console
from fxlab.cli.common import open_session
from fxlab.cli.files import MANIFEST, StagedTrace, save_trace, write_atomic
from fxlab.cli.stage_printing import print_views
from fxlab.distributed.agreement import RankAgreement, RankMismatchError, RankTimeoutError, default_store
from fxlab.distributed.environment import REQUIRED_VARIABLES, default_group, ensure_group, launched_rank, this_rank
from fxlab.distributed.launch import launch_ranks, log_of
from fxlab.distributed.layout import exact_key, rank_folder, rank_groups, structure_key, top_manifest
from fxlab.errors import FxlabError, OutputError, UsageError
from fxlab.viz import rank_views, trace_views
from fxlab.viz.html_report import html_report
from fxlab.viz.rank_report import rank_report


class RanksFailedError(FxlabError):
    """A rank failed, disagreed with its peers, or did not finish in time."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class RankOutput:
    """What the command asked to be shown and written of a multi-rank trace."""

    out: Path | None = None
    html: Path | None = None
    as_json: bool = False
    graphviz: str | None = None
    summary_only: bool = False


@dataclass
class RankJob:
    """What every rank is asked to do (plain data: it is handed to the rank processes):
    the request, and how to render its views as this process's console would print them."""

    request: TraceRequest
    summary_only: bool = False
    html: bool = False
    out_folder: Path | None = None  # where the ranks' folders go (the staged --out)
    width: int = 100
    color_system: Any = None  # rich's colour system name
    terminal: bool = False

    @classmethod
    def of(cls, request: TraceRequest, output: RankOutput) -> RankJob:
        out = console.out()
        return cls(request, output.summary_only, output.html is not None, None, out.width, out.color_system, out.is_terminal)


class _NoReporter:
    """Under torchrun: the rank's progress is shown by nothing."""

    def phase(self, what: str) -> None:
        pass


def trace_ranks(request: TraceRequest, output: RankOutput) -> int:
    """The exit code of a multi-rank trace: fxlab starts ``request.nproc`` ranks, or this
    process is one rank of a job torchrun started (``nproc`` is None)."""
    if output.graphviz is not None:
        raise UsageError("--graphviz draws one trace: save the ranks with --out DIR and draw one rank from a single-rank run.")
    job = RankJob.of(request, output)
    if request.nproc is None:
        return trace_under_torchrun(job, output)
    if launched_rank() is not None:
        raise UsageError(
            f"--nproc {request.nproc} under a launcher ({', '.join(REQUIRED_VARIABLES)} are set): run `fxlab trace` without --nproc; each process is one rank."
        )
    return trace_with_ranks(job, request.nproc, output)


# -- one rank ----------------------------------------------------------------------------------
OutFolder = Callable[[Any], "Path | None"]  # the rank's agreement -> the folder its trace folder goes in
Finish = Callable[[Any, dict[str, Any]], None]  # what the rank does with its result, its group still up


def trace_one_rank(reporter: Any, job: RankJob, out_folder: OutFolder | None = None, finish: Finish | None = None) -> dict[str, Any]:
    """Trace this process's rank; the result the launcher gets back (plain data)."""
    request = job.request
    env = this_rank()
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(env.local_world_size, 1)))
    agreement = RankAgreement(default_store, env.rank, env.world_size, request.timeout, reporter.phase)
    group_notes: list[str] = []
    with default_group(request.model_file, request.timeout, group_notes):
        with open_session(request, reporter.phase) as session, _cross_rank_errors_first():
            trace = session.capture(ranks=agreement.hooks(), after_load=lambda: ensure_group(request.timeout)).trace
        trace.notes.extend(group_notes)
        reporter.phase("saving and rendering its trace")
        folder = out_folder(agreement) if out_folder is not None else job.out_folder
        result = _rank_result(trace, job, env.rank, agreement.calls, folder)
        if finish is not None:
            finish(agreement, result)
    reporter.phase("done")
    return result


@contextlib.contextmanager
def _cross_rank_errors_first() -> Iterator[None]:
    """A disagreement between ranks found while Dynamo compiles reaches the user as it
    is, not as the compile failure Dynamo wraps it in."""
    try:
        yield
    except Exception as exc:
        seen: set[int] = set()
        cause: BaseException | None = exc
        while cause is not None and id(cause) not in seen:
            if isinstance(cause, (RankMismatchError, RankTimeoutError)):
                raise cause from None
            seen.add(id(cause))
            cause = cause.__cause__ or getattr(cause, "inner_exception", None) or cause.__context__
        raise


def _rank_result(trace: Trace, job: RankJob, rank: int, calls: list[Any], out_folder: Path | None) -> dict[str, Any]:
    folder = out_folder / rank_folder(rank) if out_folder is not None else None
    if folder is not None:
        save_trace(trace, folder)
    return {
        "rank": rank,
        "status": trace.status,
        "views": "" if job.summary_only else _render(job, lambda out: print_views(trace, out=out, with_summary=False)),
        "summary": _render(job, lambda out: out.print(trace_views.summary_view(trace), crop=False)),
        "json": trace_views.json_summary(trace, str(folder) if folder else None),
        "collectives": [c.to_json() for c in calls],
        "graphs": len(trace.graphs),
        "ge_ops": sum(len(g.ir.ops) for g in trace.graphs if g.ir is not None),
        "check": trace.check.verdict if trace.check else None,
        "ir_check": trace.ir_check.verdict if trace.ir_check else None,
        "aclgraph_check": trace.aclgraph_check.verdict if trace.aclgraph_check else None,
        "structure": structure_key(trace),
        "exact": exact_key(trace),
        "html": html_report(trace) if job.html else None,
        "model": trace.model,
        "entry": trace.entry,
        "versions": {"fxlab_version": trace.fxlab_version, "torch_version": trace.torch_version},
    }


def _render(job: RankJob, draw: Callable[[Any], None]) -> str:
    buffer = io.StringIO()
    out = Console(
        file=buffer,
        width=job.width,
        force_terminal=job.terminal,
        color_system=job.color_system,
        highlight=False,
        soft_wrap=False,
    )
    draw(out)
    return buffer.getvalue()


# -- fxlab starts the ranks -----------------------------------------------------------------------
def trace_with_ranks(job: RankJob, nproc: int, output: RankOutput) -> int:
    """``--nproc N``: start the ranks, print their results; the exit code."""
    request = job.request
    staged = StagedTrace(output.out) if output.out is not None else None
    run_dir = Path(tempfile.mkdtemp(prefix="fxlab-ranks-"))
    try:
        job.out_folder = staged.folder if staged is not None else None
        with console.progress(f"tracing {nproc} ranks"):
            launched = launch_ranks(nproc, _rank_entry, (job,), timeout=request.timeout, run_dir=run_dir)
        _print_rank_notes(run_dir, nproc)
        if launched.failures:
            raise _failure_error(launched, nproc)
        results = [launched.results[r] for r in sorted(launched.results)]
        code = report_ranks(results, request, output)
        if staged is not None:
            _write_top_manifest(staged.folder, results)
            staged.publish()
        return code
    except BaseException as exc:
        if staged is not None:
            staged.abandon(request.model_name, str(exc) if isinstance(exc, FxlabError) else type(exc).__name__)
        raise
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _rank_entry(reporter: Any, job: RankJob) -> dict[str, Any]:
    # Notes go to the rank's log, one line each (fxlab prints them from there).
    os.environ["FXLAB_WIDTH"] = "100000"
    console.err.cache_clear()
    return trace_one_rank(reporter, job)


def _print_rank_notes(run_dir: Path, nproc: int) -> None:
    """The notes and warnings the ranks printed, each once."""
    seen: set[str] = set()
    for rank in range(nproc):
        path = log_of(run_dir, rank)
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines() if path else []
        for line in lines:
            for prefix, say in (("note: ", console.note), ("warning: ", console.warn)):
                if line.startswith(prefix) and line not in seen:
                    seen.add(line)
                    say(line[len(prefix) :])


def _failure_error(launched: Any, nproc: int) -> RanksFailedError:
    """One paragraph about the failure that is a cause (not a rank stopped because of it)."""
    failures = launched.failures
    causes = [f for f in failures.values() if f.kind != "signal"] or list(failures.values())
    # A disagreement explains the rest: the peers of the rank that found it fail in their
    # collectives when it stops (gloo: "Connection closed by peer").
    first = min(causes, key=lambda f: (f.kind != "mismatch", f.kind == "timeout", f.rank))
    if first.kind == "mismatch":  # the message names both ranks and the collective
        return RanksFailedError(first.message, first.exit_code)
    if first.kind == "timeout":
        return RanksFailedError(_timeout_text(first, failures), 1)
    text = f"rank {first.rank} failed" + (f" ({first.phase})" if first.phase else "") + f": {first.message}"
    if first.kind == "internal":
        text += f"\nThis failed inside the rank's run; its last output:\n{first.log_tail}\n"
    stopped = sorted(r for r in range(nproc) if r != first.rank and r not in launched.results)
    if stopped:
        text += f" Rank(s) {', '.join(map(str, stopped))} were stopped."
    return RanksFailedError(text, first.exit_code if first.kind == "error" else 1)


def _timeout_text(first: Any, failures: dict[int, Any]) -> str:
    text = first.message + "."
    if first.log_tail:
        text += f" Rank {first.rank} was here (innermost call first):\n{first.log_tail}\n"
    waiting = sorted((f for f in failures.values() if f.kind == "signal" and f.rank != first.rank), key=lambda f: f.rank)
    text += "".join(f" Rank {f.rank} was {f.phase}." for f in waiting)
    return text + " All ranks were stopped. Raise --timeout if the model is only slow."


# -- the report ------------------------------------------------------------------------------------
def report_ranks(results: list[dict[str, Any]], request: TraceRequest, output: RankOutput) -> int:
    """Print every rank's result (views of alike ranks once) and return the exit code."""
    out, html, as_json = output.out, output.html, output.as_json
    groups = rank_groups({r["rank"]: r["structure"] for r in results})
    by_rank = {r["rank"]: r for r in results}
    if html is not None:
        _write_html(results, groups, html)
    status = overall_status(results)
    if as_json:
        console.print_json(json.dumps(rank_views.ranks_json(results, groups, status, str(out) if out else None)))
        return status_exit_code(status)
    stdout = console.out()
    for group in groups:
        first = by_rank[group[0]]
        stdout.print(rank_views.group_rule(group, by_rank), crop=False)
        stdout.file.write(first["views"] + first["summary"])
    stdout.print(rank_views.ranks_table(results, groups, request.model_name), crop=False)
    for line in rank_views.rank_lines(results, groups, status):
        stdout.print(line, crop=False)
    if out is not None:
        folders = ", ".join(f"rank_{r}" for r in sorted(by_rank))
        console.note(f"trace saved to {out}/ (manifest.json, one folder per rank: {folders})")
    return status_exit_code(status)


def status_exit_code(status: str) -> int:
    """As a one-process trace's: 0 for ``ok`` and ``unverified``, 1 otherwise."""
    return 0 if status in ("ok", "unverified") else 1


def overall_status(results: list[dict[str, Any]]) -> str:
    """The worst of the ranks' statuses."""
    return run_status([r["status"] for r in results])


def _write_html(results: list[dict[str, Any]], groups: list[list[int]], path: Path) -> None:
    try:
        write_atomic(path, rank_report({r["rank"]: r["html"] for r in results}, groups))
    except OSError as exc:
        raise OutputError(f"--html {path} cannot be written ({exc.strerror or exc}). Choose a writable path.") from exc
    console.note(f"HTML report written to {path}")


def _write_top_manifest(folder: Path, results: list[dict[str, Any]]) -> None:
    first = results[0]
    ranks = [{"rank": r["rank"], "folder": rank_folder(r["rank"]), "status": r["status"]} for r in results]
    groups = rank_groups({r["rank"]: r["structure"] for r in results})
    write_atomic(
        folder / MANIFEST,
        json_text(top_manifest(first["model"], first["entry"], first["versions"], ranks, groups, overall_status(results))),
    )


# -- torchrun starts the ranks -----------------------------------------------------------------------
def trace_under_torchrun(job: RankJob, output: RankOutput) -> int:
    """This process is one rank of a torchrun job: trace it; rank 0 gathers every rank's
    result through the store, prints them and publishes the --out folder it staged."""
    out = output.out
    rank = this_rank().rank
    staged = StagedTrace(out) if out is not None and rank == 0 else None
    gathered: dict[str, Any] = {}

    def out_folder(agreement: Any) -> Path | None:
        if out is None:
            return None
        if staged is not None:
            agreement.store.set("fxlab/out", str(staged.folder))
        return Path(agreement.wait_for("fxlab/out", "rank 0 to make the --out folder"))

    def finish(agreement: Any, result: dict[str, Any]) -> None:
        agreement.store.set(f"fxlab/result/{rank}", json.dumps(result))
        if rank == 0:
            gathered["all"] = [
                json.loads(agreement.wait_for(f"fxlab/result/{r}", f"rank {r}'s result")) for r in range(agreement.world_size)
            ]

    try:
        mine = trace_one_rank(_NoReporter(), job, out_folder, finish)
        if rank != 0:
            return 0 if mine["status"] == "ok" else 1
        code = report_ranks(gathered["all"], job.request, output)
        if staged is not None:
            _write_top_manifest(staged.folder, gathered["all"])
            staged.publish()
        return code
    except BaseException as exc:
        if staged is not None:
            staged.abandon(job.request.model_name, str(exc) if isinstance(exc, FxlabError) else type(exc).__name__)
        raise
