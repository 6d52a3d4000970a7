"""torch_npu's operators defined from a torch_npu copy's schemas and Meta functions."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from fxlab.compat.torch_npu_ops import TorchNpuCopy, find_torch_npu_copy, read_schemas, torch_npu_definitions


@pytest.fixture(scope="module")
def copy() -> TorchNpuCopy:
    found = find_torch_npu_copy()
    if found is None:
        pytest.skip("no torch_npu copy (`fxlab torchair fetch` extracts one)")
    return found


def test_reads_only_torch_npus_own_operators(tmp_path: Path):
    yaml = tmp_path / "f.yaml"
    yaml.write_text(
        "custom:\n- func: npu_a(Tensor x) -> Tensor\n  impl_ns: op_api\n"
        "supported:\n- func: add.Tensor(Tensor self, Tensor other) -> Tensor\n"
        "symint:\n- func: npu_a(Tensor x, SymInt n=0) -> Tensor\n"
    )
    assert read_schemas(yaml) == {"npu_a": "npu_a(Tensor x, SymInt n=0) -> Tensor"}


def test_defines_schemas_and_meta_functions_then_removes_them(copy: TorchNpuCopy):
    with torch_npu_definitions(copy) as defined:
        assert len(defined.defined) > 300 and not defined.failures
        assert {"npu_rms_norm", "npu_fusion_attention", "npu_grouped_matmul"} <= defined.with_meta
        x = torch.empty(2, 5, 8, device="meta")
        y, rstd = torch.ops.npu.npu_rms_norm(x, torch.empty(8, device="meta"))
        assert y.shape == (2, 5, 8) and rstd.shape == (2, 5, 1) and rstd.dtype == torch.float32
        out = torch.ops.npu.npu_fused_infer_attention_score(
            torch.empty(1, 2, 32, device="meta"), torch.empty(1, 6, 16, device="meta"), torch.empty(1, 6, 16, device="meta"),
            num_heads=4, num_key_value_heads=2,
        )
        assert out[0].shape == (1, 2, 32)
        # ATen's Meta kernels are untouched by the file's aten registrations.
        assert torch.ops.aten.matmul(torch.empty(2, 3, device="meta"), torch.empty(3, 4, device="meta")).shape == (2, 4)
    with pytest.raises((AttributeError, RuntimeError)):
        torch.ops.npu.npu_fusion_attention.default


def test_cpu_kernels_run_eagerly(copy: TorchNpuCopy):
    with torch_npu_definitions(copy):
        x = torch.randn(4, 8)
        torch.testing.assert_close(torch.ops.npu.npu_swiglu(x), torch.nn.functional.silu(x[:, :4]) * x[:, 4:])
        with pytest.raises(NotImplementedError, match="Could not run"):
            torch.ops.npu.npu_rotary_mul(torch.randn(1, 1, 2, 4), torch.randn(1, 1, 2, 4), torch.randn(1, 1, 2, 4))


def test_in_place_operators_functionalize_to_their_functional_twin(copy: TorchNpuCopy):
    def write(cache: torch.Tensor, idx: torch.Tensor, upd: torch.Tensor) -> torch.Tensor:
        torch.ops.npu.npu_scatter_nd_update_(cache, idx, upd)
        return cache * 2

    graphs = []

    def keep(gm: torch.fx.GraphModule, inputs: object) -> torch.fx.GraphModule:
        graphs.append(gm)
        return gm

    with torch_npu_definitions(copy):
        from functorch.compile import aot_function

        args = (torch.zeros(2, 4, 3), torch.tensor([[[0, 1]], [[1, 3]]]), torch.randn(2, 1, 3))
        aot_function(write, fw_compiler=keep)(*[a.clone() for a in args])
        targets = [str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"]
        # The write-back is functionalized like any copy_: a functional copy read by later ops.
        assert targets == ["npu.npu_scatter_nd_update.default", "aten.copy.default", "aten.mul.Tensor"]
        expected = args[0].clone()
        expected[0, 1], expected[1, 3] = args[2][0, 0], args[2][1, 0]
        torch.testing.assert_close(write(*args), expected * 2)


ROTARY_MUL_MODEL = """
import torch
import torch_npu


class M(torch.nn.Module):
    def forward(self, x, c, s):
        return torch_npu.npu_rotary_mul(x, c, s) * 2


def get_model_and_inputs():
    return M(), (torch.randn(1, 2, 3, 8), torch.randn(1, 2, 1, 8), torch.randn(1, 2, 1, 8))
"""


def test_an_operator_without_cpu_kernel_is_named_and_every_stage_recorded(copy: TorchNpuCopy, write_model):
    from fxlab.capture import capture_trace, load_model
    from fxlab.compat.layer import compat_layer

    with compat_layer():
        trace = capture_trace(load_model(write_model(ROTARY_MUL_MODEL)))
    assert trace.check.skipped and "npu::npu_rotary_mul has no CPU kernel" in trace.check.skipped
    assert set(trace.graphs[0].stages) == {"dynamo", "aten", "functional", "pre_ge"}
    assert "npu.npu_rotary_mul.default" in trace.graphs[0].stages["functional"].targets()
    # No built-in converter: the auto converter names the GE op after the operator.
    assert [op.type for op in trace.graphs[0].ir.ops if op.type not in ("Data", "NetOutput", "Const")][:1] == ["NpuRotaryMul"]
