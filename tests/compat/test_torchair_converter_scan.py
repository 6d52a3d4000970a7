"""The table of TorchAir's converter verdicts fxlab ships, against TorchAir's sources."""
from __future__ import annotations

from pathlib import Path

import pytest

from fxlab.compat.torchair_converter_scan import CONVERTS, REFUSES, builders_text, scan_converters, scan_file, scan_ge_op_builders, table_text
from fxlab.passes.inference_rule import GE_APIS_PATH
from fxlab.passes.torchair_refusals import TABLE_PATH, load_table, registrations


def test_the_shipped_table_is_a_fresh_scan_of_torchairs_sources(torchair_path):
    where = torchair_path
    if where is None:
        pytest.skip("the installed TorchAir is used")
    fresh = scan_converters(Path(where))
    origin = load_table()["from"]
    assert TABLE_PATH.read_text(encoding="utf-8") == table_text(fresh, origin), (
        "the table is stale: run `python scripts/scan_torchair_converters.py`"
    )


def test_the_shipped_ge_apis_names_are_a_fresh_scan_of_torchairs_sources(torchair_path):
    where = torchair_path
    if where is None:
        pytest.skip("the installed TorchAir is used")
    fresh = scan_ge_op_builders(Path(where))
    assert len(fresh) > 1500 and {"Cast", "Const", "Data", "NetOutput", "ForeachACos"} <= set(fresh)
    origin = load_table()["from"]
    assert GE_APIS_PATH.read_text(encoding="utf-8") == builders_text(fresh, origin), (
        "the ge_apis names are stale: run `python scripts/scan_torchair_converters.py`"
    )


def test_counts_of_torchair_2_13_converters():
    table = registrations()
    aten = [v for op, v in table.items() if op.split(".")[0] in ("aten", "prims")]
    assert len(aten) == 1911 and sum(v.verdict == CONVERTS for v in aten) == 327
    assert table["aten.roll.default"].verdict == REFUSES
    assert table["aten.add.Tensor"].verdict == CONVERTS
    assert table["aten.scatter_reduce.two"].reason == "NotImplementedError: torch.ops.aten.scatter_reduce.two ge_converter is not implemented!"


def test_a_converter_that_only_raises_refuses_and_one_that_sometimes_raises_converts(tmp_path):
    source = tmp_path / "ops.py"
    source.write_text(
        "@register_fx_node_ge_converter(torch.ops.aten.a.default)\n"
        "def a(x, meta_outputs=None):\n"
        '    """NB: aten::a(Tensor x) -> Tensor"""\n'
        '    raise NotImplementedError("a is not implemented!")\n'
        "\n"
        "@declare_supported([])\n"
        "@register_fx_node_ge_converter(getattr(torch.ops.aten.b, 'Tensor', None))\n"
        "def b(x, meta_outputs=None):\n"
        "    if x.rank > 4:\n"
        '        raise RuntimeError("too many dims")\n'
        "    return ge.Relu(x)\n"
    )
    found = scan_file(source, "ops.py")
    assert [(r.op, r.verdict, r.reason, r.where) for r in found] == [
        ("aten.a.default", REFUSES, "NotImplementedError: a is not implemented!", "ops.py:4"),
        ("aten.b.Tensor", CONVERTS, "", "ops.py:8"),
    ]


# fxlab's built-in converters cover TorchAir's real aten/prims converters (those that do
# more than raise); the count only goes up. `fxlab ops coverage` lists what is left.
COVERED_FLOOR = 327  # of 327: all of them


def test_builtin_covers_torchairs_real_converters():
    import torch

    from fxlab.passes import converters  # noqa: F401 - registers the shipped converters
    from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB

    real = {op for op, v in registrations().items() if op.split(".")[0] in ("aten", "prims") and v.verdict == CONVERTS}
    ours = {
        str(c.target) if isinstance(c.target, torch._ops.OpOverload) else c.target._qualified_op_name.replace("::", ".")
        for c in CONVERTERS
        if c.origin == ORIGIN_FXLAB and isinstance(c.target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket))
    }
    missing = sorted(real - ours)
    assert len(real) == 327 and len(real) - len(missing) >= COVERED_FLOOR, missing


def test_a_registration_written_as_a_call_counts_and_lite_converters_do_not(tmp_path):
    # TorchAir registers npu_grouped_matmul with register_fx_node_ge_converter(op)(fn); its
    # lite/ converters are imported only for its lite export, and then replace the others.
    root = tmp_path / "_ge_concrete_graph" / "ge_converter"
    (root / "custom").mkdir(parents=True)
    (root / "lite").mkdir()
    (root / "custom" / "gmm.py").write_text(
        "def convert_gmm(x, meta_outputs=None):\n"
        "    return ge.GroupedMatmul(x)\n"
        "gmm_reg = register_fx_node_ge_converter(torch.ops.npu.npu_grouped_matmul.default)(convert_gmm)\n"
        "\n"
        "@register_fx_node_ge_converter(torch.ops.npu.npu_quant_matmul.default)\n"
        "def quant(x, meta_outputs=None):\n"
        "    return ge.QuantBatchMatmulV3(x)\n"
    )
    (root / "lite" / "quant_lite.py").write_text(
        "@register_fx_node_ge_converter(torch.ops.npu.npu_quant_matmul.default)\n"
        "def quant(x, meta_outputs=None):\n"
        "    raise NotImplementedError('lite')\n"
    )
    assert [(r.op, r.verdict, r.where) for r in scan_converters(tmp_path)] == [
        ("npu.npu_grouped_matmul.default", CONVERTS, "custom/gmm.py:1"),
        ("npu.npu_quant_matmul.default", CONVERTS, "custom/gmm.py:6"),  # the def line
    ]


def test_the_table_knows_torch_npus_grouped_matmul_and_quant_matmul():
    table = registrations()
    assert table["npu.npu_grouped_matmul.default"].where == "custom/grouped_matmul.py:256"
    assert table["npu.npu_grouped_matmul.List"].verdict == CONVERTS
    assert table["npu.npu_quant_matmul.default"].where == "custom/quantmatmul.py:64"
