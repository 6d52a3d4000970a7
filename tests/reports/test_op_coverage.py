from __future__ import annotations

from fxlab.passes.torchair_refusals import TorchAirVerdict
from fxlab.reports.op_coverage import coverage

VERDICTS = {
    "aten.add.Tensor": TorchAirVerdict("aten.add.Tensor", "converts", "", "aten/add.py:10"),
    "aten.roll.default": TorchAirVerdict("aten.roll.default", "refuses", "NotImplementedError: no", "aten/roll.py:7"),
    "aten.glu.default": TorchAirVerdict("aten.glu.default", "converts", "", "aten/glu.py:9"),
    "npu.npu_rms_norm.default": TorchAirVerdict("npu.npu_rms_norm.default", "converts", "", "custom/rms.py:3"),
}


def test_every_op_of_torch_and_torch_npu_with_both_sides_verdicts():
    # torch_npu's operators count as ATen's do: TorchAir converts npu_rms_norm, fxlab not here.
    cov = coverage(VERDICTS, ["aten.add.Tensor", "aten.roll.default", "aten._reshape_alias.default"], "test")
    rows = [(r.op, r.torchair, r.fxlab, r.agrees, r.own_converter) for r in cov.rows]
    assert rows == [
        ("aten._reshape_alias.default", "no converter", "refuses", True, True),
        ("aten.add.Tensor", "converts", "converts", True, False),
        ("aten.glu.default", "converts", "no converter", False, False),
        ("aten.roll.default", "refuses", "refuses", True, True),
        ("npu.npu_rms_norm.default", "converts", "no converter", False, False),
    ]
    assert cov.summary == {
        "ops": 5,
        "torchair_converts": 3,
        "torchair_refuses": 1,
        "torchair_no_converter": 1,
        "fxlab_converts_of_torchair_converts": 1,
        "fxlab_own_converter_of_torchair_failures": 2,
        "disagree": 2,
    }


def test_collectives_and_torch_npu_ops_without_a_converter_are_counted_not_skipped():
    model_ops = {"_c10d_functional.all_reduce.default": 2, "npu.npu_grouped_matmul.default": 1, "npu_define.broadcast.default": 1}
    verdicts = {
        "_c10d_functional.all_reduce.default": TorchAirVerdict("_c10d_functional.all_reduce.default", "converts", "", "c10d/c.py:108"),
        "npu.npu_grouped_matmul.default": TorchAirVerdict("npu.npu_grouped_matmul.default", "converts", "", "custom/g.py:256"),
    }
    cov = coverage(verdicts, ["npu.npu_grouped_matmul.default"], "test", model_ops)
    assert [(r.op, r.count, r.torchair, r.fxlab, r.agrees) for r in cov.rows] == [
        ("_c10d_functional.all_reduce.default", 2, "converts", "no converter", False),
        ("npu.npu_grouped_matmul.default", 1, "converts", "converts", True),
        ("npu_define.broadcast.default", 1, "no converter", "refuses", True),
    ]


def test_a_models_ops_with_counts_custom_ops_left_to_ops_check():
    cov = coverage(VERDICTS, ["aten.add.Tensor"], "test", {"aten.add.Tensor": 3, "aten.roll.default": 1, "npu.my_op.default": 2})
    assert [(r.op, r.count, r.torchair, r.agrees, r.reason) for r in cov.rows] == [
        ("aten.add.Tensor", 3, "converts", True, ""),
        ("aten.roll.default", 1, "refuses", True, "NotImplementedError: no"),
    ]
    assert cov.to_json()["ops"][1]["fxlab"] == "refuses"


def test_a_converter_that_fails_when_run_is_a_refusal_on_both_sides():
    op = "aten._native_batch_norm_legit.no_stats"
    cov = coverage({op: TorchAirVerdict(op, "converts", "", "aten/_native_batch_norm_legit.py:84")}, [op], "test")
    (row,) = cov.rows
    assert (row.torchair, row.fxlab, row.agrees, row.own_converter) == ("refuses", "refuses", True, True)
    assert row.reason.startswith("NotImplementedError: torch.ops.aten._native_batch_norm_legit.no_stats ge_converter is not implemented! on SoCs before arch35")
