"""The cheap renderables for large ``fxlab trace`` views print exactly what rich's Panel and
Table print for the same content: compared byte for byte with colour on and off, at a
width that wraps many lines and at a wide one."""
from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.style import Style
from rich.table import Table
from rich.text import Text

from fxlab.capture.trace import GraphTrace, StageTrace, Trace
from fxlab.viz import trace_views
from fxlab.viz.fast_lines import Cell, LinesPanel, LinesTable
from tests.sessions import trace_of

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def decoder_trace() -> Trace:
    spec = importlib.util.spec_from_file_location("llama_decoder_for_views", ROOT / "examples" / "llama_decoder.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, inputs = module.build(2)
    return trace_of(model, inputs, verify=False)


def render(renderable: RenderableType, width: int = 160, color: bool = True, no_color: bool = False) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=color, color_system="standard" if color else None, no_color=no_color, highlight=False, soft_wrap=False)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def rich_stage_panel(graph: GraphTrace, stage: StageTrace) -> Panel:
    """What stage_view showed for a stage too long to highlight, through rich's Panel."""
    marks = {n.name: n for n in stage.nodes if n.kind or n.scopes}
    out = Text()
    for line in Text(trace_views.relative_paths(stage.code.rstrip())).split("\n", include_separator=False):
        match = trace_views._ASSIGN.match(line.plain)
        node = marks.get(match.group(1)) if match else None
        if node is not None:
            style, label = trace_views.KIND_STYLE.get(node.kind, ("", ""))
            if style:
                line.stylize(style)
            tags = [label] if label else []
            tags += [trace_views.scope_tag(s) for s in node.scopes]
            line.append(f"   # <- {'; '.join(t for t in tags if t)}", style=style or "green")
        out.append_text(line)
        out.append("\n")
    title = f"graph {graph.index} · {stage.name}: {trace_views.STAGE_TITLES.get(stage.name, stage.name)}"
    return Panel(out, title=title, title_align="left", border_style="blue")


def rich_ir_table(graph: GraphTrace) -> Table:
    """What ir_view showed, through rich's Table."""
    table = Table(title=f"graph {graph.index} · ascend_ir: {len(graph.ir.ops)} GE ops", title_justify="left", expand=False)
    table.add_column("FX node")
    table.add_column("GE ops (type:name)")
    table.add_column("scope / core attrs", style="green")
    table.add_column("source", style="dim")
    for fx_node, ops in trace_views._ops_by_fx_node(graph.ir.ops):
        types = ", ".join(label for label, _ in (trace_views._op_label(op) for op in ops))
        attrs = sorted({f"{k}={op.attrs[k].value}" for op in ops for k in trace_views.SCOPE_KEYS_SHOWN if k in op.attrs})
        table.add_row(fx_node, types, ", ".join(attrs), trace_views._short_source(ops[0].source))
    return table


STAGES = ["dynamo", "aten", "functional", "pre_ge"]


@pytest.mark.parametrize("width", [160, 72])
@pytest.mark.parametrize("stage_name", STAGES)
def test_large_stage_view_prints_what_rich_panel_prints(decoder_trace, stage_name, width):
    graph = decoder_trace.graphs[0]
    stage = graph.stages[stage_name]
    fast = trace_views.stage_view(graph, stage, fast_from_lines=0)
    assert isinstance(fast, LinesPanel)
    reference = rich_stage_panel(graph, stage)
    assert render(fast, width) == render(reference, width)
    assert render(fast, width, no_color=True) == render(reference, width, no_color=True)
    assert render(fast, width, color=False) == render(reference, width, color=False)


def test_large_stage_view_exact_lines_and_marks(decoder_trace):
    graph = decoder_trace.graphs[0]
    stage = graph.stages["functional"]
    lines = render(trace_views.stage_view(graph, stage, fast_from_lines=0), 100, color=False).split("\n")
    title = "graph 0 · functional: ATen graph after functionalization (what TorchAir converts)"
    assert lines[0] == "╭─ " + title + " " + "─" * (100 - 6 - len(title)) + "─╮"
    assert lines[1] == "│ " + "class GraphModule(torch.nn.Module):".ljust(96) + " │"
    assert lines[-3] == "│" + " " * 98 + "│"  # the blank line rich's Panel showed after the code
    assert lines[-2] == "╰" + "─" * 98 + "╯"
    wide = render(trace_views.stage_view(graph, stage, fast_from_lines=0), 240, color=False).split("\n")
    epilogue = [line for line in wide if "# <- copy_ epilogue: writes a graph input" in line]
    assert len(epilogue) == stage.count("copy_epilogue") == 4
    assert all(line.startswith("│         copy_") and line.endswith(" │") for line in epilogue)
    # The marked lines carry the kind's style, unmarked ones none.
    console = Console(file=io.StringIO(), width=240, force_terminal=True, color_system="standard")
    rendered = console.render_lines(trace_views.stage_view(graph, stage, fast_from_lines=0), pad=False)
    styles = {"".join(s.text for s in line): {s.style for s in line[1:-1] if s.text.strip()} for line in rendered}
    magenta = Style.parse("bold magenta")
    for text, used in styles.items():
        if "# <- copy_ epilogue" in text:
            assert used == {magenta}
        elif "# <-" not in text and "─" not in text:
            assert used <= {None, Style()}, text


@pytest.mark.parametrize("width", [40, 72, 160])
def test_large_stage_view_lines_fit_the_width(decoder_trace, width):
    graph = decoder_trace.graphs[0]
    text = render(trace_views.stage_view(graph, graph.stages["aten"], fast_from_lines=0), width, color=False)
    assert {cell_len(line) for line in text.split("\n")[:-1]} == {width}


def test_no_escape_codes_without_a_terminal(decoder_trace):
    graph = decoder_trace.graphs[0]
    for view in (trace_views.stage_view(graph, graph.stages["functional"], fast_from_lines=0), trace_views.ir_view(graph)):
        text = render(view, 160, color=False)
        assert "\x1b[" not in text and ("# <- copy_ epilogue" in text or "GE ops" in text)


def test_default_threshold_highlights_small_stages_only(decoder_trace, example_trace):
    small = example_trace("my_inplace").graphs[0]
    assert isinstance(trace_views.stage_view(small, small.stages["functional"]), Panel)
    large = decoder_trace.graphs[0].stages["functional"]  # two decoder layers: over 300 lines
    assert large.code.count("\n") > trace_views.SYNTAX_HIGHLIGHT_MAX_LINES
    assert isinstance(trace_views.stage_view(decoder_trace.graphs[0], large), LinesPanel)


@pytest.mark.parametrize("width", [160, 100])
def test_ir_view_prints_what_rich_table_prints(decoder_trace, width):
    graph = decoder_trace.graphs[0]
    view = trace_views.ir_view(graph)
    assert isinstance(view, Group)  # the table, then the note on Assigns into graph inputs
    fast, note = view.renderables
    assert isinstance(fast, LinesTable) and fast.column_widths(width) is not None
    reference = Group(rich_ir_table(graph), note)
    assert render(view, width) == render(reference, width)
    assert render(view, width, color=False) == render(reference, width, color=False)


def test_ir_view_has_a_row_for_every_ge_op(decoder_trace):
    graph = decoder_trace.graphs[0]
    lines = render(trace_views.ir_view(graph), 160, color=False).split("\n")
    shown: list[str] = []
    for line in lines:
        if line.startswith("│"):
            shown += [w.rstrip(",") for w in line.split("│")[2].split()]
    assert shown == [trace_views._op_label(op)[0] for op in graph.ir.ops]
    assert len(shown) == len(graph.ir.ops)


def table(rows: list[list[Any]], title: str = "t") -> LinesTable:
    cells = [[c if isinstance(c, Cell) else Cell(tuple((w, "") for w in c.split())) for c in row] for row in rows]
    return LinesTable(title, ["a", "ops", "attrs", "src"], cells, ["", "", "green", "dim"], wrap_column=1)


def test_lines_table_styled_words_and_wrapping_match_rich():
    unsupported = Cell((("Add_1,", ""), ("FxlabUnsupported_2,", "bold red"), ("Mul", "")))
    view = table([["x", unsupported, "k=1, j=2", "m.py:3"], ["y", "A, B, C, D, E, F, G, H", "", ""]])
    for width in (160, 48):
        assert view.column_widths(width) is not None
        assert render(view, width) == render(view.rich_table(), width)


@pytest.mark.parametrize("rows", [[["a-very-long-node-name-that-cannot-shrink", "A", "", ""]], [["ü", "A", "", ""]]])
def test_lines_table_falls_back_to_rich_when_its_layout_cannot_fit(rows):
    view = table(rows)
    assert view.column_widths(30) is None
    assert render(view, 30) == render(view.rich_table(), 30)
    assert ANSI.sub("", render(view, 30)).count("\n") > 3


def _every_view(trace: Trace, fast_from_lines: int) -> list[RenderableType]:
    views: list[RenderableType] = []
    for graph in trace.graphs:
        views += [trace_views.stage_view(graph, stage, fast_from_lines) for stage in graph.stages.values()]
        views += [trace_views.ir_view(graph), trace_views.conversion_view(graph)]
    return [*views, trace_views.summary_view(trace)]


def render_uncropped(renderable: RenderableType, width: int, color: bool) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=color, color_system="standard" if color else None, highlight=False, soft_wrap=False)
    console.print(renderable, crop=False)
    return console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("fast_from_lines", [0, trace_views.SYNTAX_HIGHLIGHT_MAX_LINES], ids=["fast", "rich"])
@pytest.mark.parametrize("width", [40, 100, 160])
def test_every_view_fits_the_width_so_printing_need_not_crop(decoder_trace, example_trace, fast_from_lines, width):
    """fxlab trace prints its views with crop=False: the output must be what cropping gives."""
    for trace in (decoder_trace, example_trace("my_inplace"), example_trace("graph_break")):
        for view in _every_view(trace, fast_from_lines):
            for color in (True, False):
                assert render_uncropped(view, width, color) == render(view, width, color)


@pytest.mark.parametrize("name", ["graph_break", "my_inplace", "llama_decoder"])
def test_summary_fits_80_columns_without_cutting_a_header(example_trace, name):
    text = ANSI.sub("", render(trace_views.summary_view(example_trace(name)), width=80, color=False))
    assert "…" not in text
    assert max(cell_len(line) for line in text.splitlines()) <= 80
    for header in ("dynamo", "aten", "functional", "pre_ge", "ascend_ir", "GE ops", "in-place ops", "aten → func."):
        assert header in text
    if name == "my_inplace":
        assert "graph 0: inputs written in place: arg0_1 (x), arg2_1 (state) (3 auto_functionalized, 2 copy_ epilogue(s))" in " ".join(text.split())
    if name == "graph_break":
        assert "graph 0: graph break at graph_break.py:19: Unsupported Tensor.item()" in " ".join(text.split())
