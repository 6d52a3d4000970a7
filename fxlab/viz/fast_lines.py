"""Cheap renderables for large ``fxlab trace`` views.

Rich's ``Panel`` and ``Table`` measure, wrap and crop every line of their content through
``Text``; on a graph of thousands of nodes that costs seconds. These renderables yield
pre-styled ``Segment`` lines directly, and hand only the rare line wider than the console
to rich's own wrapping, so what is shown stays the same as the rich layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.panel import Panel
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text


@dataclass(frozen=True)
class StyledLine:
    """One line of a view: its text in ``style``, then a ``tag`` in ``tag_style``."""

    text: str
    style: str = ""
    tag: str = ""
    tag_style: str = ""


class LinesPanel:
    """The look of ``Panel(Text(lines), title=..., expand=True)`` with one segment run per
    line: the border lines come from a rich Panel around nothing, the body is written here."""

    def __init__(self, lines: list[StyledLine], title: str, border_style: str) -> None:
        self.lines = lines
        self.title = title
        self.border_style = border_style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        frame = console.render_lines(
            Panel(Text(""), title=Text(self.title), title_align="left", border_style=self.border_style), options, pad=False
        )
        top, bottom = frame[0], frame[-1]
        border_row = frame[1]  # left border, padded empty body, right border
        left, right = border_row[0], border_row[-1]
        inner = options.max_width - 4  # borders and one space of padding each side
        yield from top
        yield Segment.line()
        styles = _StyleCache(console)
        for line in self.lines:
            for body in _body_lines(line, inner, console, styles):
                yield left
                yield from merge_unstyled(body)
                yield right
                yield Segment.line()
        yield from bottom
        yield Segment.line()


class _StyleCache(dict):
    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console

    def __missing__(self, name: str) -> Style | None:
        style = self.console.get_style(name) if name else None
        self[name] = style
        return style


_PAD = Segment(" ")


def _body_lines(line: StyledLine, inner: int, console: Console, styles: _StyleCache) -> Iterator[list[Segment]]:
    width = len(line.text) + len(line.tag)
    if width <= inner and line.text.isascii() and line.tag.isascii():
        body = [_PAD, Segment(line.text, styles[line.style])] if line.text else [_PAD]
        if line.tag:
            body.append(Segment(line.tag, styles[line.tag_style]))
        body.append(Segment(" " * (inner - width + 1)))
        yield body
        return
    # Wider than the panel (or not plain ASCII): rich wraps it exactly as Panel would.
    text = Text(line.text)
    text.stylize(line.style)
    if line.tag:
        text.append(line.tag, style=line.tag_style)
    for wrapped in text.wrap(console, inner):
        yield [_PAD, *wrapped.render(console), Segment(" " * (inner - wrapped.cell_len + 1))]


@dataclass(frozen=True)
class Cell:
    """One table cell: words joined by ``sep`` (wrapped at word breaks), each word styled."""

    words: tuple[tuple[str, str], ...]

    @staticmethod
    def plain(text: str, style: str = "") -> Cell:
        return Cell(((text, style),) if text else ())

    def width(self) -> int:
        return len(" ".join(w for w, _ in self.words))

    def longest_word(self) -> int:
        return max((len(w) for w, _ in self.words), default=0)

    def ascii(self) -> bool:
        return all(w.isascii() for w, _ in self.words)


class LinesTable:
    """The look of a rich ``Table`` (default box, bold header, left-aligned, italic title
    on the left) for plain-text cells, laid out once: every column as wide as its widest
    cell, and when that is too wide for the console only ``wrap_column`` gives up width,
    wrapping its cells at word breaks (what rich's table does in that case too)."""

    def __init__(self, title: str, headers: list[str], rows: list[list[Cell]], column_styles: list[str], wrap_column: int) -> None:
        self.title = title
        self.headers = headers
        self.rows = rows
        self.column_styles = column_styles
        self.wrap_column = wrap_column

    def column_widths(self, max_width: int) -> list[int] | None:
        """Content widths per column, or None when this simple layout cannot show the
        table as rich would (non-ASCII text, or a column other than ``wrap_column`` too wide)."""
        widths = [len(h) for h in self.headers]
        longest = 0
        for row in self.rows:
            for i, cell in enumerate(row):
                if not cell.ascii():
                    return None
                widths[i] = max(widths[i], cell.width())
            longest = max(longest, row[self.wrap_column].longest_word())
        if not all(h.isascii() for h in self.headers):
            return None
        total = sum(widths) + 3 * len(widths) + 1
        if total > max_width:
            widths[self.wrap_column] -= total - max_width
            if widths[self.wrap_column] < max(longest, len(self.headers[self.wrap_column])):
                return None
        return widths

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = self.column_widths(options.max_width)
        if widths is None:
            yield self.rich_table()
            return
        box = Table().box.substitute(options, safe=console.safe_box)  # type: ignore[union-attr]
        styles = _StyleCache(console)
        table_width = sum(widths) + 3 * len(widths) + 1
        title = self.title[:table_width]
        yield Segment(title + " " * (table_width - len(title)), styles["table.title"])
        yield Segment.line()
        yield Segment(box.get_top([w + 2 for w in widths]))
        yield Segment.line()
        header_cells = [[[(h, "table.header")]] for h in self.headers]
        yield from _table_row(
            header_cells, widths, box.head_left, box.head_vertical, box.head_right, styles, ["table.header"] * len(widths)
        )
        yield Segment(box.get_row([w + 2 for w in widths], "head"))
        yield Segment.line()
        column_styles = self.column_styles
        for row in self.rows:
            cells = [_wrap_words(cell, widths[i], column_styles[i]) for i, cell in enumerate(row)]
            yield from _table_row(cells, widths, box.mid_left, box.mid_vertical, box.mid_right, styles, column_styles)
        yield Segment(box.get_bottom([w + 2 for w in widths]))
        yield Segment.line()

    def rich_table(self) -> Table:
        """The same table through rich (for layouts this class does not handle)."""
        table = Table(title=Text(self.title, style="table.title"), title_justify="left", expand=False)
        for header, style in zip(self.headers, self.column_styles):
            table.add_column(header, style=style or None)
        for row in self.rows:
            table.add_row(*(_cell_text(cell) for cell in row))
        return table


def _cell_text(cell: Cell) -> Text:
    text = Text()
    for i, (word, style) in enumerate(cell.words):
        if i:
            text.append(" ")
        text.append(word, style=style or None)
    return text


Run = list[tuple[str, str]]  # (text, style name) pieces of one line of a cell


def _wrap_words(cell: Cell, width: int, column_style: str) -> list[Run]:
    lines: list[Run] = [[]]
    used = 0
    for word, style in cell.words:
        if used and used + 1 + len(word) > width:
            lines.append([])
            used = 0
        run = lines[-1]
        word_style = f"{column_style} {style}".strip()
        if used:
            run.append((" ", column_style))
            used += 1
        run.append((word, word_style))
        used += len(word)
        if len(run) > 2 and run[-2][1] == run[-3][1] == word_style:  # one piece per style, as rich
            run[-3:] = [(run[-3][0] + " " + word, word_style)]
        elif len(run) > 1 and run[-2][1] == word_style:
            run[-2:] = [(run[-2][0] + word, word_style)]
    return lines


def _table_row(
    cells: list[list[Run]], widths: list[int], left: str, vertical: str, right: str, styles: _StyleCache, cell_styles: list[str]
) -> Iterable[Segment]:
    height = max(len(c) for c in cells)
    for n in range(height):
        line = [Segment(left)]
        for i, cell in enumerate(cells):
            if i:
                line.append(Segment(vertical))
            pad_style = styles[cell_styles[i]]
            if n >= len(cell):  # below a shorter cell of the row
                line.append(Segment(" " * (widths[i] + 2), pad_style))
                continue
            line.append(Segment(" ", pad_style))
            runs = list(cell[n])
            fill = widths[i] - sum(len(text) for text, _ in runs)
            if fill:  # rich pads a cell line in the style of its last piece
                if runs and runs[-1][1] == cell_styles[i]:
                    runs[-1] = (runs[-1][0] + " " * fill, runs[-1][1])
                else:
                    runs.append((" " * fill, cell_styles[i]))
            line.extend(Segment(text, styles[style]) for text, style in runs)
            line.append(Segment(" ", pad_style))
        line.append(Segment(right))
        yield from merge_unstyled(line)
        yield Segment.line()


def merge_unstyled(segments: list[Segment]) -> list[Segment]:
    """Neighbouring segments without a style as one: the same output, and each segment
    costs the console a pass through its line splitting and cropping."""
    merged: list[Segment] = []
    pending: list[str] = []
    for segment in segments:
        if segment.style is None or not segment.style:
            pending.append(segment.text)
            continue
        if pending:
            merged.append(Segment("".join(pending)))
            pending = []
        merged.append(segment)
    if pending:
        merged.append(Segment("".join(pending)))
    return merged
