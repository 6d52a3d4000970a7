"""``fusion_result.json``: how often each graph-fusion and UB-fusion pass matched and took
effect, per session and graph, without op names. GE's FE writes it in two shapes: objects
with a ``session_and_graph_id`` of ``"<session>_<graph>"`` (appended one after another, or
in a list), or one object keyed ``session_and_graph_id_<session>_<graph>``. A file that
is empty, an empty list or an empty object records no pass, and reads as no result."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fxlab.npu_dumps.dump_model import FusionResult, PassCount
from fxlab.npu_dumps.proto_text import DumpReadError

KEY = "session_and_graph_id"
KINDS = ("graph_fusion", "ub_fusion")


def read_fusion_result(path: str, text: str) -> list[FusionResult]:
    results: list[FusionResult] = []
    for item in _json_values(path, text):
        if isinstance(item, list):
            for entry in item:
                results += _entry(path, entry)
        else:
            results += _entry(path, item)
    return results


def _json_values(path: str, text: str) -> list[Any]:
    """Every JSON value in ``text``: GE appends one object per graph to the same file."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return values
        try:
            value, pos = decoder.raw_decode(text, pos)
        except ValueError as exc:
            line = text.count("\n", 0, pos) + 1
            raise DumpReadError(
                f"{path}, line {line}: not JSON ({exc}). fusion_result.json is written when the process exits; "
                "copy it again after the run has finished."
            ) from exc
        values.append(value)


def _entry(path: str, data: Any) -> list[FusionResult]:
    if not isinstance(data, Mapping):
        raise DumpReadError(f"{path}: an entry is not a JSON object: not the fusion_result.json GE writes.")
    if not data:  # {}: no session and graph, no pass
        return []
    if KEY in data:
        return [_result(path, str(data[KEY]), data)]
    keyed = [k for k in data if str(k).startswith(KEY + "_")]
    if not keyed:
        raise DumpReadError(f"{path}: no '{KEY}' in an entry: not the fusion_result.json GE writes.")
    return [_result(path, str(k)[len(KEY) + 1 :], data[k]) for k in keyed]


def _result(path: str, ids: str, body: Any) -> FusionResult:
    session, _, graph = ids.strip("_").partition("_")
    result = FusionResult(path, session, int(graph) if graph.isdigit() else None)
    if not isinstance(body, Mapping):
        return result
    for kind in KINDS:
        passes = body.get(kind) or {}
        if isinstance(passes, Mapping):
            for name, counts in passes.items():
                counts = counts if isinstance(counts, Mapping) else {}
                result.passes.append(PassCount(str(name), kind, _count(counts.get("match_times")), _count(counts.get("effect_times"))))
    return result


def _count(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
