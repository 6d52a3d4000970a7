"""``fxlab trace --converter torchair``: the ascend_ir stage from TorchAir's own code path,
through typer's CliRunner (each invocation loads TorchAir, a few seconds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.cli.cli_runner import run_cli
from tests.conftest import EXAMPLES

SEED_PLUGINS = Path(__file__).resolve().parents[1] / "data" / "seed_plugins"


@pytest.fixture(scope="module")
def torchair_path(torchair_path) -> str:
    """conftest's TorchAir copy, as a `--torchair-path` value."""
    return str(torchair_path)


def run(*args: str) -> tuple[int, str, str]:
    return run_cli(*args, width=200)


def trace_json(torchair_path: str, example: str, *extra: str) -> tuple[int, dict, str]:
    code, out, err = run(
        "trace", str(EXAMPLES / f"{example}.py"), "--converter", "torchair", "--torchair-path", torchair_path, "--json", *extra
    )
    return code, json.loads(out), err


def test_in_place_custom_op_through_torchair(torchair_path):
    code, summary, err = trace_json(torchair_path, "my_inplace")
    assert code == 0, err
    (graph,) = summary["graphs"]
    types = graph["ascend_ir"]["types"]
    # TorchAir's auto converter found MyInplace through the custom-op kit's prototype.
    assert types.count("TensorMove") == 3 and types.count("MyInplace") == 3
    assert "FxlabUnsupported" not in types and graph["ascend_ir"]["partial"] is False
    notes = " ".join(graph["ascend_ir"]["notes"])
    assert "native parts stood in" in notes and "GE compilation and fusion do not run" in notes
    # torch_npu is present while TorchAir converts, as on an NPU machine.
    options = graph["ascend_ir"]["ge_options"]
    assert options["pattern_fusion_pass"] == "1" and options["ge.deterministicLevel"] == "0"
    assert options["ge.exec.outputReuseInputMemIndexes"].count(",") == 2  # x and state written back
    # The load is announced in one line per kind, with the version said plainly.
    assert "TorchAir (" in err and "TorchAirVersion(" not in err
    assert err.count("converter(s) not loaded: they name ops this torch does not have") == 1
    assert "prims.slice.default, prims.slice_in_dim.default" in err


def test_scopes_come_from_torchair(torchair_path):
    code, summary, err = trace_json(torchair_path, "superkernel_scopes")
    assert code == 0, err
    assert summary["status"] == "ok" and summary["graphs"][0]["ascend_ir"]["partial"] is False


def _unsupported_ops_of_npu_add_custom(torchair_path: str, tmp_path: Path, *extra: str) -> tuple[int, list[dict]]:
    """``fxlab trace examples/npu_add_custom.py`` with TorchAir's conversion: the exit code
    and the saved IR's FxlabUnsupported ops."""
    out = tmp_path / "out"
    code, _, _ = run(
        "trace", str(EXAMPLES / "npu_add_custom.py"), "--converter", "torchair", "--torchair-path", torchair_path,
        *extra, "--stages", "functional,ascend_ir", "--out", str(out),
    )  # fmt: skip
    ir = json.loads((out / "graph_0" / "ascend_ir.json").read_text())
    return code, [op for op in ir["ops"] if op["type"] == "FxlabUnsupported"]


def test_custom_op_needing_a_converter_is_partial_with_the_reason_and_the_fix(torchair_path, tmp_path):
    code, placeholders = _unsupported_ops_of_npu_add_custom(torchair_path, tmp_path)
    assert code == 1  # partial: what TorchAir does on an NPU machine without the user's converter
    (placeholder,) = placeholders
    assert placeholder["fx_node"] == "npu_add_custom" and placeholder["source"].endswith("npu_add_custom.py:21")
    reason = placeholder["attrs"]["_fxlab_reason"]
    assert "No AscendIR NpuAddCustom was found to be registered" in reason
    assert 'torchair.ge.custom_op("AddCustom", ...)' in reason and "--plugin" in reason


def test_custom_op_with_the_seed_plugin_converts_to_add_custom(torchair_path):
    code, summary, err = trace_json(torchair_path, "npu_add_custom", "--plugin", str(SEED_PLUGINS / "npu_add_custom_plugin.py"))
    assert code == 0, err
    types = summary["graphs"][0]["ascend_ir"]["types"]
    assert "AddCustom" in types and "FxlabUnsupported" not in types


def test_a_path_that_is_not_torchair_exits_2(tmp_path):
    code, _, message = run("trace", str(EXAMPLES / "my_op.py"), "--converter", "torchair", "--torchair-path", str(tmp_path))
    assert code == 2
    assert "is not a TorchAir source tree" in message and "fxlab torchair fetch" in message


def test_an_unknown_converter_name_exits_2():
    code, _, message = run("trace", str(EXAMPLES / "my_op.py"), "--converter", "tvm")
    assert code == 2 and "choose builtin or torchair" in message


def test_a_converter_that_raises_names_its_message_node_and_source_line(torchair_path, tmp_path):
    plugin = Path(__file__).resolve().parents[1] / "data" / "plugins" / "raising_converter_plugin.py"
    code, placeholders = _unsupported_ops_of_npu_add_custom(torchair_path, tmp_path, "--plugin", str(plugin))
    assert code == 1
    (placeholder,) = placeholders
    reason = placeholder["attrs"]["_fxlab_reason"]
    assert "raised at node npu_add_custom" in reason and "npu_add_custom.py:21" in reason
    assert "ValueError: unsupported layout in broken converter" in reason


def _copy_claiming(tmp_path: Path, torchair_path: str, torch_npu: str, requires: str) -> Path:
    """The TorchAir at ``torchair_path``, labelled as coming from another torch_npu release."""
    root = tmp_path / torch_npu
    (root / "torch_npu" / "dynamo").mkdir(parents=True)
    (root / "torch_npu" / "dynamo" / "torchair").symlink_to(torchair_path)
    (root / "torchair-source.json").write_text(json.dumps({"torch_npu": torch_npu, "requires_torch": requires}))
    return root / "torch_npu" / "dynamo" / "torchair"


def test_a_torchair_for_another_torch_is_said_plainly(torchair_path, tmp_path):
    import torch

    older = _copy_claiming(tmp_path, torchair_path, "2.9.0.post2", "2.9.0.*")
    code, _, err = run("trace", str(EXAMPLES / "my_op.py"), "--converter", "torchair", "--torchair-path", str(older), "--summary")
    assert code == 0, err
    text = " ".join(err.split())
    assert "TorchAir (from torch_npu 2.9.0.post2, built for torch 2.9.0.*) loaded" in text
    installed = ".".join(torch.__version__.split("+")[0].split(".")[:3])
    assert "older than the installed torch" in text and f"for torch {installed} that is torch_npu {installed}" in text


def test_a_torchair_that_cannot_import_with_this_torch_exits_with_the_versions_that_work(tmp_path):
    root = tmp_path / "2.1.0" / "torch_npu" / "dynamo" / "torchair"
    (root / "_ge_concrete_graph").mkdir(parents=True)
    (root / "__init__.py").write_text("import torch\nfrom torch._dynamo import api_removed_since_2_2\n")
    (root / "npu_fx_compiler.py").write_text("")
    (root / "_ge_concrete_graph" / "fx2ge_converter.py").write_text("")
    (tmp_path / "2.1.0" / "torchair-source.json").write_text(json.dumps({"torch_npu": "2.1.0", "requires_torch": "2.1.0.*"}))
    code, _, message = run("trace", str(EXAMPLES / "my_op.py"), "--converter", "torchair", "--torchair-path", str(root))
    assert code == 2
    assert "could not be imported with torch" in message and "api_removed_since_2_2" in message
    assert "from torch_npu 2.1.0, built for torch 2.1.0, which is older than the installed torch" in message


W8A8_LINEAR = """
import torch
import torch_npu
class W8A8(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.register_buffer("weight", torch.randint(-128, 127, (32, 16), dtype=torch.int8, generator=g))
        self.register_buffer("scale", torch.rand(16, generator=g) * 0.01)
    def forward(self, x):
        q, pertoken = torch_npu.npu_dynamic_quant(x)
        return torch_npu.npu_quant_matmul(q, self.weight, self.scale, pertoken_scale=pertoken, output_dtype=torch.float16)
model = W8A8().eval()
example_inputs = (torch.randn(4, 32),)
"""


def test_torchairs_quant_matmul_converter_reads_torch_npus_dtypes_from_the_stand_in(torchair_path, write_model):
    # It compares dtypes with torch_npu.float4_e2m1fn_x2 ..., which the stand-in lacked.
    from fxlab.compat.torch_npu_ops import find_torch_npu_copy

    copy = find_torch_npu_copy()
    if copy is None or not copy.complete:
        pytest.skip("no torch_npu copy")
    code, out, err = run("trace", str(write_model(W8A8_LINEAR)), "--converter", "torchair", "--torchair-path", torchair_path, "--json")
    summary = json.loads(out)
    (graph,) = summary["graphs"]
    assert graph["ascend_ir"]["not_converted"] == [] and not graph["ascend_ir"]["partial"], graph["ascend_ir"]["not_converted"]
    assert {"DynamicQuant", "QuantBatchMatmulV3"} <= set(graph["ascend_ir"]["types"])
    assert code == 0 and summary["status"] in ("ok", "unverified"), err


REPEAT_ROWS = """
import torch

class RepeatRows(torch.nn.Module):
    def forward(self, x, counts):
        return torch.repeat_interleave(x * 2, counts, dim=0) + 1

model = RepeatRows()
example_inputs = (torch.randn(3, 4), torch.tensor([1, 2, 3]))
"""


def test_an_op_with_a_data_dependent_size_is_partial_with_either_converter(torchair_path, write_model):
    path = str(write_model(REPEAT_ROWS))
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        builtin = run("trace", path, "--summary")
        theirs = run("trace", path, "--summary", "--converter", "torchair", "--torchair-path", torchair_path)
    assert builtin[0] == theirs[0] == 1, (builtin, theirs)
    for _, out, _ in (builtin, theirs):
        assert "status: partial" in out and "graph 0: operator.ge (1 node): TorchAir does not convert a symbolic size comparison" in out
    assert "aten.repeat_interleave.Tensor (1 node): TorchAir's converter for aten.repeat_interleave.Tensor raised" in theirs[1]


def test_torchairs_own_warnings_in_the_reference_run_stay_off_stderr(torchair_path):
    """The aclgraph check runs TorchAir's backend end to end; what TorchAir warns of there
    (its config's mode, its sources compiled) is about fxlab's run, and is not printed.
    In a fresh process: pytest would catch Python's warnings itself."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fxlab",
            "trace",
            str(EXAMPLES / "inplace_ops.py"),
            "--mode",
            "reduce-overhead",
            "--summary",
            "--torchair-path",
            torchair_path,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "FXLAB_WIDTH": "200"},
    )
    assert done.returncode == 0, done.stderr
    assert "TorchAir's own backend" in done.stdout  # the reference did run
    assert "Warning:" not in done.stderr and "warnings.warn" not in done.stderr, done.stderr


TRANSPOSED_CONV = """
import torch

model = torch.nn.ConvTranspose2d(4, 8, 3, stride=2, padding=1, output_padding=1).eval()
example_inputs = (torch.randn(1, 4, 8, 8),)
"""


def test_an_ir_of_torchairs_the_reference_cannot_run_is_said_to_be_torchairs(torchair_path, write_model):
    # TorchAir's transposed convolution subtracts a python int (an int64 Const) from a
    # dim of an int32 Shape: the reference refuses the mixed types, in TorchAir's graph.
    code, out, err = run(
        "trace", str(write_model(TRANSPOSED_CONV)), "--stages", "ascend_ir", "--converter", "torchair", "--torchair-path", torchair_path
    )
    said = " ".join(out.split())
    assert code == 0, err
    assert "not run: graph 0: in TorchAir's own Ascend IR (--converter torchair): Sub op" in said and "status: unverified" in said
