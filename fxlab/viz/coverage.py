"""``fxlab ops coverage`` as rich renderables: the per-op table and its summary line."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from fxlab.reports.op_coverage import Coverage

VERDICT_STYLE = {"converts": "green", "refuses": "red", "no converter": "yellow"}


def coverage_table(cov: Coverage) -> Table:
    with_counts = any(r.count is not None for r in cov.rows)
    table = Table(title=f"Ops of torch and torch_npu: TorchAir ({cov.origin}) vs fxlab's built-in conversion")
    for column in ("op", *(("nodes",) if with_counts else ()), "TorchAir", "fxlab", "agrees", "TorchAir's reason"):
        table.add_column(column, overflow="fold", justify="right" if column == "nodes" else "left")
    for row in cov.rows:
        fxlab = Text(row.fxlab, style=VERDICT_STYLE.get(row.fxlab, ""))
        if row.own_converter:
            fxlab.append(" (own converter: --convert-refused)", style="dim")
        cells = [Text(row.op), *((Text(str(row.count)),) if with_counts else ())]
        cells += [Text(row.torchair, style=VERDICT_STYLE.get(row.torchair, "")), fxlab]
        reason = row.reason.replace(f"torch.ops.{row.op} ", "")  # the message names the op again
        cells += [Text("yes", style="green") if row.agrees else Text("NO", style="bold red"), Text(reason, style="dim")]
        table.add_row(*cells)
    return table


def coverage_summary(cov: Coverage) -> Text:
    s = cov.summary
    converts = s["torchair_converts"]
    share = f" ({100 * s['fxlab_converts_of_torchair_converts'] / converts:.1f}%)" if converts else ""
    return Text(
        f"{s['ops']} ops: TorchAir converts {converts}, refuses {s['torchair_refuses']}, has no converter for "
        f"{s['torchair_no_converter']}; fxlab converts {s['fxlab_converts_of_torchair_converts']} of TorchAir's "
        f"{converts}{share} and marks every op TorchAir fails on as refused ({s['fxlab_own_converter_of_torchair_failures']} "
        f"of them it could convert with --convert-refused); {s['disagree']} disagree."
    )
