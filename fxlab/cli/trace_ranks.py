"""``fxlab trace --nproc N`` and ``torchrun ... fxlab trace``: one trace per rank.

Every rank runs :func:`trace_one_rank` in its own process: it traces the model as a
single ``fxlab trace`` would, with the cross-rank check of its collectives
(:mod:`fxlab.distributed.agreement`), saves its trace into ``DIR/rank_<r>/`` and renders
its views. With ``--nproc`` fxlab starts the ranks itself
(:mod:`fxlab.distributed.launch`) and prints their results here; under ``torchrun`` each
process is one rank, and rank 0 gathers the others' results through the process group's
store and prints them. The views of ranks alike in structure are printed once.
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

from fxlab.cli import console
from fxlab.errors import FxlabError
from fxlab.socs import SocInfo


class RanksFailedError(FxlabError):
    """A rank failed, disagreed with its peers, or did not finish in time."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class RankRequest:
    """What every rank is asked to do (plain data: it is handed to the rank processes)."""

    model: Path
    entry: str | None
    plugins: list[Path]
    stages: tuple[str, ...]
    verify: bool | None
    converter: str
    torchair_path: Path | None
    soc: SocInfo
    convert_refused: bool
    timeout: float
    summary_only: bool
    html: bool
    mode: str | None = None  # TorchAir's mode (--mode)
    dynamic: bool = False  # --dynamic
    out_folder: Path | None = None  # where the ranks' folders go (the staged --out)
    width: int | None = None
    color_system: Any = None  # rich's colour system name
    terminal: bool = False

    def __post_init__(self) -> None:
        # The ranks render their views as this process's console would print them.
        out = console.out()
        self.width, self.color_system, self.terminal = self.width or out.width, self.color_system or out.color_system, out.is_terminal


class _NoReporter:
    """Under torchrun: the rank's progress is shown by nothing."""

    def phase(self, what: str) -> None:
        pass


def trace_ranks(request: RankRequest, nproc: int | None, out: Path | None, html: Path | None, as_json: bool, graphviz: str | None) -> int:
    """The exit code of a multi-rank trace: fxlab starts ``nproc`` ranks, or this process
    is one rank of a job torchrun started (``nproc`` is None)."""
    from fxlab.errors import UsageError

    if graphviz is not None:
        raise UsageError("--graphviz draws one trace: save the ranks with --out DIR and draw one rank from a single-rank run.")
    if nproc is None:
        return trace_under_torchrun(request, out, html, as_json)
    from fxlab.distributed.environment import REQUIRED_VARIABLES, launched_rank

    if launched_rank() is not None:
        raise UsageError(
            f"--nproc {nproc} under a launcher ({', '.join(REQUIRED_VARIABLES)} are set): run `fxlab trace` without --nproc; each process is one rank."
        )
    return trace_with_ranks(request, nproc, out, html, as_json)


# -- one rank ----------------------------------------------------------------------------------
OutFolder = Callable[[Any], "Path | None"]  # the rank's agreement -> the folder its trace folder goes in
Finish = Callable[[Any, dict[str, Any]], None]  # what the rank does with its result, its group still up


def trace_one_rank(
    reporter: Any, request: RankRequest, out_folder: OutFolder | None = None, finish: Finish | None = None
) -> dict[str, Any]:
    """Trace this process's rank; the result the launcher gets back (plain data)."""
    import torch

    from fxlab.cli.common import capture_model
    from fxlab.cli.converter_choice import ascend_ir_converter
    from fxlab.distributed.agreement import RankAgreement, default_store
    from fxlab.distributed.environment import default_group, ensure_group, this_rank

    env = this_rank()
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(env.local_world_size, 1)))
    agreement = RankAgreement(default_store, env.rank, env.world_size, request.timeout, reporter.phase)
    group_notes: list[str] = []
    with default_group(request.model, request.timeout, group_notes):
        with (
            ascend_ir_converter(request.converter, request.torchair_path, request.soc.name, request.mode) as convert,
            _cross_rank_errors_first(),
        ):
            _, trace = capture_model(
                request.model,
                request.entry,
                request.plugins,
                request.stages,
                verify=request.verify,
                converter=convert,
                convert_refused=request.convert_refused,
                mode=request.mode,
                soc=request.soc,
                dynamic=request.dynamic,
                ranks=agreement.hooks(),
                after_load=lambda: ensure_group(request.timeout),
                progress=reporter.phase,
            )
        trace.notes.extend(group_notes)
        reporter.phase("saving and rendering its trace")
        folder = out_folder(agreement) if out_folder is not None else request.out_folder
        result = _rank_result(trace, request, env.rank, agreement.calls, folder)
        if finish is not None:
            finish(agreement, result)
    reporter.phase("done")
    return result


@contextlib.contextmanager
def _cross_rank_errors_first() -> Iterator[None]:
    """A disagreement between ranks found while Dynamo compiles reaches the user as it
    is, not as the compile failure Dynamo wraps it in."""
    from fxlab.distributed.agreement import RankMismatchError, RankTimeoutError

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


def _rank_result(trace: Any, request: RankRequest, rank: int, calls: list[Any], out_folder: Path | None) -> dict[str, Any]:
    from fxlab.capture.save import save_trace
    from fxlab.distributed.layout import exact_key, rank_folder, structure_key
    from fxlab.viz import trace_views

    folder = out_folder / rank_folder(rank) if out_folder is not None else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        save_trace(trace, folder)
    html = None
    if request.html:
        from fxlab.viz.html_report import html_report

        html = html_report(trace)
    return {
        "rank": rank,
        "status": trace.status,
        "views": "" if request.summary_only else _render(request, lambda out: _views(trace, out)),
        "summary": _render(request, lambda out: out.print(trace_views.summary_view(trace), crop=False)),
        "json": trace_views.json_summary(trace, str(folder) if folder else None),
        "collectives": [c.to_json() for c in calls],
        "graphs": len(trace.graphs),
        "ge_ops": sum(len(g.ir.ops) for g in trace.graphs if g.ir is not None),
        "check": trace.check.verdict if trace.check else None,
        "ir_check": trace.ir_check.verdict if trace.ir_check else None,
        "aclgraph_check": trace.aclgraph_check.verdict if trace.aclgraph_check else None,
        "structure": structure_key(trace),
        "exact": exact_key(trace),
        "html": html,
        "model": trace.model,
        "entry": trace.entry,
        "versions": {"fxlab_version": trace.fxlab_version, "torch_version": trace.torch_version},
    }


def _views(trace: Any, out: Any) -> None:
    from fxlab.cli.stage_printing import print_views
    from fxlab.viz import trace_views

    print_views(trace, trace_views, False, out=out, with_summary=False)


def _render(request: RankRequest, draw: Callable[[Any], None]) -> str:
    from rich.console import Console

    buffer = io.StringIO()
    out = Console(
        file=buffer,
        width=request.width or 100,
        force_terminal=request.terminal,
        color_system=request.color_system,
        highlight=False,
        soft_wrap=False,
    )
    draw(out)
    return buffer.getvalue()


# -- fxlab starts the ranks -----------------------------------------------------------------------
def trace_with_ranks(request: RankRequest, nproc: int, out: Path | None, html: Path | None, as_json: bool) -> int:
    """``--nproc N``: start the ranks, print their results; the exit code."""
    from fxlab.capture.save import StagedTrace
    from fxlab.distributed.launch import launch_ranks

    staged = StagedTrace(out) if out is not None else None
    run_dir = Path(tempfile.mkdtemp(prefix="fxlab-ranks-"))
    try:
        request.out_folder = staged.folder if staged is not None else None
        _preload()
        with console.err().status(f"tracing {nproc} ranks", spinner="dots"):
            launched = launch_ranks(nproc, _rank_entry, (request,), timeout=request.timeout, run_dir=run_dir)
        _print_rank_notes(run_dir, nproc)
        if launched.failures:
            raise _failure_error(launched, nproc)
        results = [launched.results[r] for r in sorted(launched.results)]
        code = report_ranks(results, request, out, html, as_json)
        if staged is not None:
            _write_top_manifest(staged.folder, results)
            staged.publish()
        return code
    except BaseException as exc:
        if staged is not None:
            staged.abandon(str(request.model), str(exc) if isinstance(exc, FxlabError) else type(exc).__name__)
        raise
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _rank_entry(reporter: Any, request: RankRequest) -> dict[str, Any]:
    # Notes go to the rank's log, one line each (fxlab prints them from there).
    os.environ["FXLAB_WIDTH"] = "100000"
    console.err.cache_clear()
    return trace_one_rank(reporter, request)


def _preload() -> None:
    """Import what every rank needs before the ranks are forked: each then starts with it."""
    import torch._dynamo  # noqa: F401
    import torch._functorch.aot_autograd  # noqa: F401

    import fxlab.capture.pipeline  # noqa: F401
    import fxlab.compat.collectives  # noqa: F401
    import fxlab.ir.kernels  # noqa: F401
    import fxlab.passes.converters  # noqa: F401
    import fxlab.viz.trace_views  # noqa: F401


def _print_rank_notes(run_dir: Path, nproc: int) -> None:
    """The notes and warnings the ranks printed, each once."""
    from fxlab.distributed.launch import log_of

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
def report_ranks(results: list[dict[str, Any]], request: RankRequest, out: Path | None, html: Path | None, as_json: bool) -> int:
    """Print every rank's result (views of alike ranks once) and return the exit code."""
    from fxlab.distributed.layout import rank_groups
    from fxlab.viz import rank_views

    groups = rank_groups({r["rank"]: r["structure"] for r in results})
    by_rank = {r["rank"]: r for r in results}
    if html is not None:
        _write_html(results, groups, html)
    status = overall_status(results)
    if as_json:
        console.out().print_json(json.dumps(rank_views.ranks_json(results, groups, status, str(out) if out else None)))
        return 0 if status == "ok" else 1
    stdout = console.out()
    for group in groups:
        first = by_rank[group[0]]
        stdout.print(rank_views.group_rule(group, by_rank), crop=False)
        stdout.file.write(first["views"] + first["summary"])
    stdout.print(rank_views.ranks_table(results, groups, request.model), crop=False)
    for line in rank_views.rank_lines(results, groups, status):
        stdout.print(line, crop=False)
    if out is not None:
        folders = ", ".join(f"rank_{r}" for r in sorted(by_rank))
        console.note(f"trace saved to {out}/ (manifest.json, one folder per rank: {folders})")
    return 0 if status == "ok" else 1


def overall_status(results: list[dict[str, Any]]) -> str:
    return "ok" if all(r["status"] == "ok" for r in results) else "partial"


def _write_html(results: list[dict[str, Any]], groups: list[list[int]], path: Path) -> None:
    from fxlab.errors import OutputError
    from fxlab.viz.rank_report import rank_report

    try:
        path.write_text(rank_report({r["rank"]: r["html"] for r in results}, groups), encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"--html {path} cannot be written ({exc.strerror or exc}). Choose a writable path.") from exc
    console.note(f"HTML report written to {path}")


def _write_top_manifest(folder: Path, results: list[dict[str, Any]]) -> None:
    from fxlab.capture.save import MANIFEST, write_json
    from fxlab.distributed.layout import rank_folder, rank_groups, top_manifest

    first = results[0]
    ranks = [{"rank": r["rank"], "folder": rank_folder(r["rank"]), "status": r["status"]} for r in results]
    groups = rank_groups({r["rank"]: r["structure"] for r in results})
    write_json(folder / MANIFEST, top_manifest(first["model"], first["entry"], first["versions"], ranks, groups, overall_status(results)))


# -- torchrun starts the ranks -----------------------------------------------------------------------
def trace_under_torchrun(request: RankRequest, out: Path | None, html: Path | None, as_json: bool) -> int:
    """This process is one rank of a torchrun job: trace it; rank 0 gathers every rank's
    result through the store, prints them and publishes the --out folder it staged."""
    from fxlab.capture.save import StagedTrace
    from fxlab.distributed.environment import this_rank

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
        mine = trace_one_rank(_NoReporter(), request, out_folder, finish)
        if rank != 0:
            return 0 if mine["status"] == "ok" else 1
        code = report_ranks(gathered["all"], request, out, html, as_json)
        if staged is not None:
            _write_top_manifest(staged.folder, gathered["all"])
            staged.publish()
        return code
    except BaseException as exc:
        if staged is not None:
            staged.abandon(str(request.model), str(exc) if isinstance(exc, FxlabError) else type(exc).__name__)
        raise
