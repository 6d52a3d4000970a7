"""``fxlab ops list`` and ``fxlab ops check OP``: the custom-op kit on the command line."""
from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer

from fxlab.cli import console
from fxlab.cli.main import app
from fxlab.ir.json_values import dumps_strict

ops_app = typer.Typer(
    name="ops",
    help="Custom ops: list what is registered, and check one op end to end (schema, kernel, Meta, in-place rules, prototype, converter).",
    no_args_is_help=True,
)
app.add_typer(ops_app, name="ops")

PluginOpt = typer.Option(None, "--plugin", help="Python file to import first (defines or adapts custom ops). Repeatable.")
JsonOpt = typer.Option(False, "--json", help="Print JSON instead of a table.")
STATUS_STYLE = {"pass": ("PASS", "green"), "fail": ("FAIL", "bold red"), "warn": ("WARN", "yellow"), "skip": ("SKIP", "dim")}


def _load_plugins(plugins: Optional[List[Path]]) -> None:
    from fxlab.compat.plugins import load_plugin

    for plugin in plugins or []:
        load_plugin(plugin)


@ops_app.command("list", help="Registered custom ops: schema, kernels per dispatch key, fake (Meta) function, converter (fxlab / torchair / auto / none), prototype.")
def list_command(plugin: Optional[List[Path]] = PluginOpt, as_json: bool = JsonOpt) -> None:
    from fxlab.compat.layer import compat_layer
    from fxlab.ops.inspect_op import list_ops

    with compat_layer(announce=console.note):
        _load_plugins(plugin)
        facts = list_ops()
        if as_json:
            console.out().print_json(dumps_strict([f.to_json() for f in facts]))
            return
        console.out().print(_ops_table(facts))


def _ops_table(facts: list[Any]) -> Any:
    from rich.table import Table
    from rich.text import Text

    from fxlab.viz.safe_text import plain, visible

    table = Table(title="Custom ops", show_lines=True)
    for column in ("op", "kernels", "fake (Meta)", "converter", "prototype"):
        table.add_column(column, overflow="fold")
    for f in facts:
        kernels = plain("\n".join(f"{key}: {_short(site)}" for key, site in f.kernels.items())) or Text("none", style="red")
        fake = plain(_short(f.fake)) if f.fake else Text("none", style="red")
        converter = f.converter if f.converter in ("none", "auto") else f"{f.converter} ({_short(f.converter_where)})"
        if f.replaced:
            converter += f"\nreplaces fxlab's ({_short(f.replaced)})"
        if f.converter == "auto":
            converter = f"auto ({f.converter_where})"
        proto = plain(f"{f.prototype.op_type} ({_short(f.prototype.source)})") if f.prototype else Text("none", style="dim")
        table.add_row(Text.assemble(visible(f.qualname), "\n", (visible(f.schema), "dim")), kernels, fake, plain(converter), proto)
    return table


def _short(site: str) -> str:
    """``name.py:12`` for a path:line, the text itself otherwise."""
    path, sep, rest = site.rpartition(":")
    if not sep or not rest.isdigit():
        path, rest = site, ""
    if "/" in path or "\\" in path:
        return f"{Path(path).name}:{rest}" if rest else Path(path).name
    return site


@ops_app.command(
    "check",
    help=(
        "Check one custom op: torch.library.opcheck on its samples, Meta vs CPU kernel, the in-place rules, "
        "its Ascend C prototype against the schema, TorchAir's auto converter, and its converter on fake inputs. "
        "Exit code 1 when any check fails.\n\n"
        "Examples:\n\n  fxlab ops check npu::my_inplace\n\n  fxlab ops check my_op --prototype my_op.json --plugin my_op_plugin.py --json"
    ),
)
def check_command(
    op: str = typer.Argument(..., help="The op: npu::my_inplace, npu.my_inplace, torch.ops.npu.my_inplace.default or my_inplace."),
    prototype: Optional[Path] = typer.Option(None, "--prototype", help="The op's msOpGen prototype JSON (default: the registered one)."),
    plugin: Optional[List[Path]] = PluginOpt,
    as_json: bool = JsonOpt,
) -> None:
    from fxlab.compat.layer import compat_layer
    from fxlab.ops.check import check_op

    with compat_layer(announce=console.note):
        _load_plugins(plugin)
        report = check_op(op, prototype)
    if as_json:
        console.out().print_json(dumps_strict(report.to_json()))
    else:
        _print_report(report)
    raise typer.Exit(0 if report.ok else 1)


def _print_report(report: Any) -> None:
    from rich.text import Text

    from fxlab.viz.safe_text import visible

    out = console.out()
    out.print(Text.assemble((visible(report.op), "bold"), "  ", visible(report.schema)))
    if report.samples_source != "registered":
        out.print(Text.assemble((f"samples {visible(report.samples_source)}", "yellow"), " (the op registers none): small random tensors, scalar defaults"))
    for item in report.items:
        label, style = STATUS_STYLE[item.status]
        out.print(Text.assemble("  ", (label, style), f" {visible(item.name)}: {visible(item.detail)}"), highlight=False)
        if item.status == "fail" and item.fix:
            out.print(Text.assemble("       ", ("fix:", "cyan"), f" {visible(item.fix)}"), highlight=False)
    failed = sum(item.status == "fail" for item in report.items)
    out.print(Text("all checks passed" if not failed else f"{failed} check(s) failed", style="bold"))
