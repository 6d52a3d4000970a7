"""Views of a multi-rank trace: a row per rank, which ranks are alike, the JSON summary.

Each rank's result is the plain data a rank hands back (``fxlab.cli.trace_ranks``):
its status, checks, counts, collectives and the keys that say whether two ranks' graphs
are alike (:mod:`fxlab.distributed.layout`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from rich import box
from rich.console import RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from fxlab.distributed.layout import ranks_text
from fxlab.viz.safe_text import plain

_STATUS_STYLE = {"ok": "bold green", "partial": "bold yellow"}


def group_rule(group: list[int], by_rank: dict[int, dict[str, Any]]) -> RenderableType:
    """The heading above the views printed once for ``group``."""
    if len(group) == 1:
        title = f"rank {group[0]}"
    else:
        title = f"ranks {ranks_text(group)}: graphs identical in structure"
        differ = _constants_differ(group, by_rank)
        if differ:
            title += f" (constants differ on ranks {ranks_text(differ)})"
        else:
            title += ", shown once"
    return Rule(plain(title), style="cyan")


def _constants_differ(group: list[int], by_rank: dict[int, dict[str, Any]]) -> list[int]:
    first = by_rank[group[0]]["exact"]
    others = [r for r in group if by_rank[r]["exact"] != first]
    return [group[0], *others] if others else []


def _collectives_text(calls: list[dict[str, Any]]) -> str:
    if not calls:
        return "0"
    counts = Counter(c["op"].lstrip("_") for c in calls)
    return f"{len(calls)} ({', '.join(f'{n} {op}' for op, n in counts.most_common())})"


def ranks_table(results: list[dict[str, Any]], groups: list[list[int]], model: Path | str) -> RenderableType:
    # The graph checked on CPU: the Ascend IR (max-autotune) or the aclgraph graph.
    acl = any(r.get("aclgraph_check") is not None for r in results)
    table = Table(
        title=plain(f"fxlab trace · {Path(str(model)).name} · {len(results)} ranks", style="table.title"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for header, justify in (
        ("rank", "right"),
        ("graphs", "right"),
        ("GE ops", "right"),
        ("collectives", "left"),
        ("eager vs compiled", "left"),
        ("aclgraph graph on CPU" if acl else "Ascend IR on CPU", "left"),
        ("status", "left"),
    ):
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for result in results:
        table.add_row(
            str(result["rank"]),
            str(result["graphs"]),
            str(result["ge_ops"]),
            plain(_collectives_text(result["collectives"])),
            _verdict(result["check"]),
            _verdict(result.get("aclgraph_check") if acl else result["ir_check"]),
            Text(result["status"], style=_STATUS_STYLE.get(result["status"], "bold red")),
        )
    return table


def _verdict(verdict: str | None) -> Text:
    """A check's verdict in a word or two (each rank group's summary has it whole)."""
    if verdict is None:
        return Text("-")
    for word in ("MISMATCH", "REFUSED"):
        if verdict.startswith(word):
            return Text(word, style="bold red")
    if verdict.startswith("match"):
        return Text("match, some not run", style="yellow") if "not run" in verdict else Text("match", style="green")
    return Text("not run", style="yellow")


def rank_lines(results: list[dict[str, Any]], groups: list[list[int]], status: str) -> list[RenderableType]:
    lines: list[RenderableType] = []
    if len(groups) == 1:
        lines.append(plain(f"graphs: same on ranks {ranks_text(groups[0])} (structure)"))
    elif all(len(g) == 1 for g in groups):
        lines.append(plain("graphs: every rank's differ from the others' (views shown per rank)", style="yellow"))
    else:
        alike = "; ".join(f"ranks {ranks_text(g)} alike" if len(g) > 1 else f"rank {g[0]} unlike the others" for g in groups)
        lines.append(plain(f"graphs differ between ranks: {alike}", style="yellow"))
    counts = {len(r["collectives"]) for r in results}
    if counts != {0}:
        lines.append(
            plain("collectives: every rank's calls agreed with its peers' (op, group, dtype, shape, reduction, order) before any ran")
        )
    lines.append(Text.assemble(("status: ", ""), (status, _STATUS_STYLE.get(status, "bold red"))))
    return lines


def ranks_json(results: list[dict[str, Any]], groups: list[list[int]], status: str, out_dir: str | None) -> dict[str, Any]:
    """``fxlab trace --nproc N --json``: every rank's summary, and which ranks are alike."""
    return {
        "nproc": len(results),
        "status": status,
        "same_structure": groups,
        "out": out_dir,
        "ranks": [{"rank": r["rank"], **r["json"], "collectives": r["collectives"]} for r in results],
    }
