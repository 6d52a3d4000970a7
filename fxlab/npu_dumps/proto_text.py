"""Protobuf text of large graphs, parsed by protobuf's own text parser in batches of ops
so that a long read can say how far it is.

GE and TorchAir print graphs with protobuf's text printer: a top-level field per line at
column 0, and each op of a graph a block opened by a line ``op {`` at the graph's
indentation. The ops of a graph are parsed a batch at a time into the same message (a
repeated field appends), which gives exactly the message one parse of the whole text
gives; a batch that fails is parsed again as one whole text, whose error is the one
reported (the file and line, from protobuf's parser). Nothing here prints: progress goes
to a callback.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from google.protobuf import text_format

from fxlab.errors import FxlabError

# (what is being read, characters done, characters in all)
Progress = Callable[[str, int, int], None]
BATCH_CHARS = 1 << 20
# GE's newer "attr group" fields, which fxlab's schema does not model (ir/ge_ir.proto):
# skipped when a file holds them, every other field is read strictly.
ATTR_GROUPS_FIELD = "attr_groups {"


class DumpReadError(FxlabError):
    """A dump that cannot be read: named with its file and line, and what to do."""


def _no_progress(label: str, done: int, total: int) -> None:
    return None


def parse_error(path: str, exc: Exception, line_offset: int = 0) -> DumpReadError:
    """The one-paragraph error for protobuf's ``ParseError`` in ``path``."""
    line = getattr(exc, "GetLine", lambda: None)()
    detail = str(exc)
    if line is not None:
        detail = detail.split(" : ", 1)[-1]
        where = f"{path}, line {line + line_offset}"
    else:
        where = path
    if _UNKNOWN_NAME.search(detail):  # well formed, but of a schema newer than fxlab's copy
        return DumpReadError(
            f"{where}: {detail}: the dump names a field or value that fxlab's copy of GE's dump schema does not have, as a "
            "dump of a newer CANN may. Please report it to fxlab with the file; meanwhile pass the other dumps only."
        )
    return DumpReadError(
        f"{where}: not readable as a graph dump's protobuf text ({detail}). "
        "The file may be cut short (copy it again from the NPU machine) or be another kind of file; "
        "rename or remove it, or pass only the dumps to read."
    )


# protobuf's words for a name its schema lacks: a field, or a value of an enum.
_UNKNOWN_NAME = re.compile(r"has no field named|has no value named|has no value with number")


class TextReader:
    """Reads one text file into a message, in batches, reporting progress."""

    def __init__(self, path: str, text: str, progress: Progress | None = None) -> None:
        self.path = path
        self.text = text
        self.lines = text.split("\n")
        self.progress = progress or _no_progress
        self.done = 0
        self.lenient = ATTR_GROUPS_FIELD in text

    def read_model(self, model: Any, graph_field: str = "graph") -> Any:
        """``model`` (a ModelDef-like message) from text whose top-level ``graph { ... }``
        blocks hold ops ``  op { ... }``."""
        outside: list[str] = []
        start = None
        for number, line in enumerate(self.lines):
            if start is None and line == f"{graph_field} {{":
                start = number
            elif start is not None and line == "}":
                graph = getattr(model, graph_field).add()
                self._read_ops(graph, start + 1, number, "  op {")
                start = None
            elif start is None:
                outside.append(line)
        if start is not None:  # an unclosed graph block: cut short
            return self.parse_whole(type(model)())
        self._merge("\n".join(outside), model, 0)
        self._finished()
        return model

    def read_graph(self, graph: Any, op_line: str = "op {") -> Any:
        """``graph`` (a GraphDef-like message) from text whose ops are top-level
        ``op { ... }`` blocks."""
        self._read_ops(graph, 0, len(self.lines), op_line)
        self._finished()
        return graph

    def _finished(self) -> None:
        self.done = len(self.text)
        self.progress(self.path, self.done, self.done)

    def _read_ops(self, graph: Any, begin: int, end: int, op_line: str) -> None:
        batch_start, size = begin, 0
        for number in range(begin, end):
            if self.lines[number] == op_line and size >= BATCH_CHARS:
                self._merge_lines(graph, batch_start, number)
                batch_start, size = number, 0
            size += len(self.lines[number]) + 1
        self._merge_lines(graph, batch_start, end)

    def _merge_lines(self, message: Any, begin: int, end: int) -> None:
        chunk = "\n".join(self.lines[begin:end])
        self._merge(chunk, message, begin)
        self.done += len(chunk) + 1
        self.progress(self.path, min(self.done, len(self.text)), len(self.text))

    def _merge(self, chunk: str, message: Any, first_line: int) -> None:
        try:
            text_format.Merge(chunk, message, allow_unknown_field=self.lenient)
        except text_format.ParseError as exc:
            raise _Retry(exc, first_line) from exc

    def parse_whole(self, message: Any) -> Any:
        try:
            text_format.Parse(self.text, message, allow_unknown_field=self.lenient)
        except text_format.ParseError as exc:
            raise parse_error(self.path, exc) from exc
        return message


class _Retry(Exception):
    """A batch failed: the whole text is parsed again to give the true error."""

    def __init__(self, exc: Exception, first_line: int) -> None:
        super().__init__(str(exc))
        self.exc = exc
        self.first_line = first_line


def read_text(reader: TextReader, message_type: type, how: Callable[[TextReader, Any], Any]) -> Any:
    """``how(reader, message)`` in batches; on a failing batch, one parse of the whole
    text (a truncated or malformed file is reported as protobuf reports the whole)."""
    try:
        return how(reader, message_type())
    except _Retry:
        return reader.parse_whole(message_type())
