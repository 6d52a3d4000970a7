"""torch_npu operators' converters: each sample converted, run by the reference executor
and compared with the operator's CPU kernel run eagerly, bit for bit (one definition of
each device operator serves both); the GE op types and attrs are TorchAir's. The operators are defined from the torch_npu files fxlab ships (or a preferred copy)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

from fxlab.ir.execute import ExecutionError, execute
from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE, Status
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.npu import NPU_CONVERTERS, npu_converters
from fxlab.passes.converters.registry import CONVERTERS, Sample
from tests.passes.converters.test_registry_walk import _bind, _clone, _flat_outputs, one_node_graph

# Operators without a CPU reference kernel for their samples (their kernel raises
# NotImplementedError saying why, which the trace's checks report as not run): expected to
# fail until one is written.
NO_CPU_KERNEL = {
    "npu_all_gather_quant_mm.default",  # TorchAir takes it only over 2 to 64 ranks
    "npu_kv_quant_sparse_flash_attention.default",
    "npu_fused_causal_conv1d.default",
    "npu_fused_causal_conv1d_v2.default",
    "npu_masked_causal_conv1d.default",
    # attention-FFN disaggregation: tokens move through a schedule context ranks share
    "npu_attention_to_ffn.default",
    "npu_ffn_to_attention.default",
    "attention_worker_scheduler.default",
    "ffn_worker_scheduler.default",
    "npu_attention_worker_combine.default",
    "npu_ffn_worker_batching.default",
    # block and MX quantisation forms whose layouts or math are not documented exactly enough
    "npu_grouped_dynamic_block_quant.default",
    "npu_grouped_dynamic_mx_quant.default",
    "npu_dynamic_block_mx_quant.default",
    "npu_dynamic_mx_quant_with_dual_axis.default",
    "npu_dynamic_dual_level_mx_quant.default",
    "npu_kronecker_quant.default",
    "npu_rotate_quant.default",
}
CASES = [(name, i) for name, (_, samples) in NPU_CONVERTERS.items() if samples is not None for i in range(len(samples()))]
PARAMS = [
    pytest.param(
        name, i, id=f"{name}-{i}", marks=[pytest.mark.xfail(strict=True, raises=NotImplementedError)] if name in NO_CPU_KERNEL else []
    )
    for name, i in CASES
]


@pytest.fixture(scope="module")
def npu_ops() -> Iterator[Any]:
    from fxlab.compat.torch_npu_ops import find_torch_npu_copy, torch_npu_definitions

    with torch_npu_definitions(find_torch_npu_copy()) as definitions:
        assert definitions.copy is not None and not definitions.failures, definitions.note
        yield definitions


def _target(name: str) -> Any:
    op, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.npu, op), overload)


def _run_or_skip(name: str, run: Callable[[], Any]) -> Any:
    """``run()``; a sample a reference kernel cannot compute on CPU (it raises
    NotImplementedError saying why, as the trace's checks report it) is skipped with that
    reason, except for the operators expected to have no CPU kernel at all."""
    try:
        return run()
    except (NotImplementedError, ExecutionError) as exc:
        gap = exc if isinstance(exc, NotImplementedError) else exc.__cause__
        if name in NO_CPU_KERNEL or not isinstance(gap, NotImplementedError):
            raise
        pytest.skip(f"not run: {exc}")


@pytest.mark.parametrize("name,index", PARAMS)
def test_npu_converter_matches_cpu_kernel(npu_ops: Any, name: str, index: int) -> None:
    target = _target(name)
    assert CONVERTERS.get(target) is not None and CONVERTERS.get(target).fn is NPU_CONVERTERS[name][0]
    torch.manual_seed(0)
    sample = NPU_CONVERTERS[name][1]()[index]
    gm, tensors = one_node_graph(target, sample)
    # Converters of ops TorchAir fails on are checked too (as --convert-refused runs them);
    # a sample of arguments TorchAir's converter raises on is refused as TorchAir refuses it.
    result = convert_to_ascend_ir(gm, name=f"npu_{index}", convert_refused=True)
    refused = [r for r in result.nodes if r.status is Status.REFUSED]
    if refused:
        assert [r.target for r in refused] == [str(target)]
        assert refused[0].message.startswith(f"TorchAir refuses {target} with these arguments")
        return
    assert not result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)
    eager_tensors = _clone(tensors)
    eager_args, eager_kwargs = _bind(sample, eager_tensors)
    expected = [
        e for e in _flat_outputs(_run_or_skip(name, lambda: target(*eager_args, **eager_kwargs))) if not isinstance(e, (int, float))
    ]
    actual = _run_or_skip(name, lambda: execute(result.graph, _clone(tensors)))
    # One definition per device operator: its eager CPU kernel and the kernels of the GE
    # ops TorchAir makes for it compute on the same reference math, so they agree bit for
    # bit. Statistics outputs (softmax max/sum/lse) are zeros on both sides: compared too;
    # an output the operator leaves out (None) has no value to compare.
    for i, (got, want) in enumerate(zip(actual, expected)):
        if want is not None:
            torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True, msg=lambda m: f"{name} output {i}: {m}")


def test_ge_ops_and_attrs_are_torchairs(npu_ops: Any) -> None:
    x, gamma = torch.randn(2, 8), torch.randn(8)
    gm, _ = one_node_graph(torch.ops.npu.npu_rms_norm.default, Sample((x, gamma, 0.01)))
    ops = [op for op in convert_to_ascend_ir(gm, name="g").graph.ops if op.type not in ("Data", "NetOutput")]
    assert [(op.type, op.attr_value("epsilon")) for op in ops] == [("RmsNorm", pytest.approx(0.01))]

    q, k = torch.randn(1, 2, 2, 8), torch.randn(1, 2, 2, 8)
    gm, _ = one_node_graph(
        torch.ops.npu.npu_apply_rotary_pos_emb.default, Sample((q, k, torch.randn(1, 2, 1, 8), torch.randn(1, 2, 1, 8), "BNSD"))
    )
    ops = [op for op in convert_to_ascend_ir(gm, name="r").graph.ops if op.type not in ("Data", "NetOutput")]
    assert [op.type for op in ops] == ["TensorMove", "TensorMove", "ApplyRotaryPosEmb"]
    assert dict(ops[-1].attrs)["layout"].value == 3 and "rotary_mode" not in dict(ops[-1].attrs)


def test_converters_are_registered_for_the_block_only(npu_ops: Any) -> None:
    target = torch.ops.npu.npu_swiglu.default
    shipped = CONVERTERS.get(target)
    CONVERTERS.unregister(target)
    try:
        with npu_converters() as registered:
            assert registered == ["npu.npu_swiglu.default"]
            assert CONVERTERS.get(target).fn is NPU_CONVERTERS["npu_swiglu.default"][0]
        assert CONVERTERS.get(target) is None
    finally:
        CONVERTERS.register(shipped)


@pytest.mark.parametrize(
    "name,reason",
    [
        ("npu_fusion_attention_grad.default", "The length of ge_outputs must be equal to meta_outputs"),
        ("npu_mla_prolog_v3.default", "The length of ge_outputs must be equal to meta_outputs"),
        ("npu_qkv_rms_norm_rope_cache.default", "The length of ge_outputs must be equal to meta_outputs"),
        ("npu_recurrent_gated_delta_rule.default", "meta_outputs must be list or a tuple"),
    ],
)
def test_ops_torchair_fails_on_are_refused_with_its_reason(npu_ops: Any, name: str, reason: str) -> None:
    gm, _ = one_node_graph(_target(name), NPU_CONVERTERS[name][1]()[0])
    result = convert_to_ascend_ir(gm, name="refused")
    (record,) = [n for n in result.nodes if n.target == f"npu.{name}"]
    assert record.status is Status.REFUSED
    assert record.message.startswith(f"TorchAir refuses npu.{name}: its converter only raises AssertionError: {reason}")


def test_chunk_gated_delta_rule_is_refused_from_torchairs_table(npu_ops: Any) -> None:
    bf16 = torch.bfloat16
    tensors = (torch.randn(4, 1, 8).to(bf16), torch.randn(4, 1, 8).to(bf16), torch.randn(4, 2, 8).to(bf16))
    sample = Sample(tensors, {"beta": torch.rand(4, 2).to(bf16), "initial_state": torch.zeros(1, 2, 8, 8).to(bf16), "scale": 0.3})
    gm, _ = one_node_graph(torch.ops.npu.npu_chunk_gated_delta_rule.default, sample)
    (record,) = [n for n in convert_to_ascend_ir(gm, name="chunk").nodes if n.target.startswith("npu.npu_chunk")]
    assert record.status is Status.REFUSED
    assert "Interface npu_chunk_gated_delta_rule is not supported in GE graph mode." in record.message
