"""The conversion summary (fx_summary-like): rows per target with count, status,
signatures and messages; CSV and JSON files."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import torch

from tests.functional_graphs import functional_graph
from fxlab.reports.conversion_summary import (
    CSV_COLUMNS,
    ConversionSummary,
    SummaryRow,
    summarize_conversion,
    summary_csv_text,
    summary_json_text,
    summary_rows_from_json,
    value_signature,
)
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.registry import ConverterRegistry, register_converter

LIB = torch.library.Library("fxlabtest", "FRAGMENT")
LIB.define("summary_scale(Tensor(a!) x, float s) -> ()")


def _scale(x: torch.Tensor, s: float) -> None:
    x.mul_(s)


LIB.impl("summary_scale", _scale, "CPU")
torch.library.register_fake("fxlabtest::summary_scale", lambda x, s: None, lib=LIB)


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    torch.ops.fxlabtest.summary_scale(x, 2.0)
    a = torch.special.bessel_j0(y)  # TorchAir's converter only raises: refused
    b = torch.special.bessel_j0(a)
    return b


def _summary(registry: ConverterRegistry | None = None) -> ConversionSummary:
    gm = functional_graph(model, torch.randn(2, 3), torch.randn(3))
    return summarize_conversion(gm, convert_to_ascend_ir(gm, registry=registry))


def _rows(registry: ConverterRegistry | None = None) -> tuple[ConversionSummary, list[SummaryRow]]:
    summary = _summary(registry)
    return summary, summary.rows


def _by_target(rows: list[SummaryRow]) -> dict[str, SummaryRow]:
    return {row.target: row for row in rows}


def test_rows_count_status_and_signatures() -> None:
    _, rows = _rows()
    by_target = _by_target(rows)
    bessel = by_target["aten.special_bessel_j0.default"]
    assert (bessel.kind, bessel.count, bessel.status) == ("aten", 2, "refused")
    assert bessel.inputs == {"(float32(3,),)": 2}
    assert bessel.outputs == {"float32(3,)": 2}
    assert bessel.messages[0].startswith("TorchAir refuses aten.special_bessel_j0.default: its converter only raises")
    wrapped = by_target["auto_functionalized_v2(fxlabtest.summary_scale.default)"]
    assert (wrapped.kind, wrapped.count, wrapped.status) == ("higher_order", 1, "auto")
    assert wrapped.outputs == {"(None, float32(2, 3))": 1}
    copy = by_target["aten.copy_.default"]
    assert (copy.status, copy.inputs) == ("converted", {"(float32(2, 3), float32(2, 3))": 1})
    assert by_target["getitem"].status == "marker"
    assert [r.target for r in rows][0] == "auto_functionalized_v2(fxlabtest.summary_scale.default)"


def test_a_raising_converter_is_reported_with_its_message() -> None:
    registry = ConverterRegistry()

    @register_converter(torch.ops.aten.copy_.default, registry=registry)
    def broken(self: Any, src: Any, non_blocking: bool = False, *, meta_outputs: Any = None) -> Any:
        """copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)"""
        raise ValueError("cannot assign here")

    _, rows = _rows(registry)
    copy = _by_target(rows)["aten.copy_.default"]
    assert copy.status == "raised"
    assert "ValueError: cannot assign here" in copy.messages[0]


def test_signature_of_values() -> None:
    assert value_signature(torch.zeros(2, 3, dtype=torch.float16)) == "float16(2, 3)"
    assert value_signature([torch.zeros(1, dtype=torch.int64), 3]) == "[int64(1,), 3]"
    assert value_signature((torch.zeros(()),)) == "(float32(),)"


def test_csv_and_json_text() -> None:
    _, rows = _rows()
    table = list(csv.reader(io.StringIO(summary_csv_text(rows), newline="")))
    assert tuple(table[0]) == CSV_COLUMNS
    bessel = next(r for r in table[1:] if r[0] == "aten.special_bessel_j0.default")
    assert bessel[:6] == ["aten.special_bessel_j0.default", "aten", "refused", "2", "2x: (float32(3,),)", "2x: float32(3,)"]
    assert bessel[6].startswith("TorchAir refuses aten.special_bessel_j0.default: its converter only raises NotImplementedError")
    assert len(table) == len(rows) + 1

    data = json.loads(summary_json_text(rows))
    by_target = {op["target"]: op for op in data["ops"]}
    assert by_target["aten.special_bessel_j0.default"]["statuses"] == {"refused": 2}
    assert by_target["aten.special_bessel_j0.default"]["status"] == "refused"
    assert [op["target"] for op in data["ops"]] == [r.target for r in rows]
    assert summary_rows_from_json(data) == rows  # the saved rows read back equal


def test_the_summary_names_the_ops_not_converted_and_the_custom_ops_auto_converted() -> None:
    summary = _summary()
    assert [(e["op"], e["nodes"], e["status"]) for e in summary.not_converted] == [("aten.special_bessel_j0.default", 2, "refused")]
    assert summary.not_converted[0]["reason"].startswith("TorchAir refuses aten.special_bessel_j0.default")
    (auto,) = summary.auto_converted
    assert (auto["op"], auto["nodes"], auto["ge_type"], auto["prototype"], auto["defined_by"]) == (
        "fxlabtest.summary_scale.default", 1, "SummaryScale", False, "user"
    )
    library_line = Path(__file__).read_text().splitlines().index('LIB = torch.library.Library("fxlabtest", "FRAGMENT")') + 1
    assert auto["defined_at"] == f"{__file__}:{library_line}"  # where the op's library was made
