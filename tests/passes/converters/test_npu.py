"""torch_npu operators' converters: each sample converted, run by the reference executor
and compared with the operator's CPU kernel run eagerly; the GE op types and attrs are
TorchAir's. The operators are defined from a torch_npu copy (skipped without one)."""
from __future__ import annotations

from typing import Any, Iterator

import pytest
import torch

from fxlab.ir.execute import execute
from fxlab.passes.convert_to_ascend_ir import UNSUPPORTED_OP_TYPE, convert_to_ascend_ir
from fxlab.passes.converters.npu import NPU_CONVERTERS, npu_converters
from fxlab.passes.converters.registry import CONVERTERS, Sample
from tests.passes.converters.test_registry_walk import _bind, _clone, _flat_outputs, one_node_graph

CASES = [(name, i) for name, (_, samples) in NPU_CONVERTERS.items() if samples is not None for i in range(len(samples()))]


@pytest.fixture(scope="module")
def npu_ops() -> Iterator[Any]:
    from fxlab.compat.torch_npu_ops import find_torch_npu_copy, torch_npu_definitions

    copy = find_torch_npu_copy()
    if copy is None or not copy.complete:
        pytest.skip("no torch_npu copy (`fxlab torchair fetch` extracts one)")
    with torch_npu_definitions(copy) as definitions:
        yield definitions


def _target(name: str) -> Any:
    op, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.npu, op), overload)


@pytest.mark.parametrize("name,index", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_npu_converter_matches_cpu_kernel(npu_ops: Any, name: str, index: int) -> None:
    target = _target(name)
    assert CONVERTERS.get(target) is not None and CONVERTERS.get(target).fn is NPU_CONVERTERS[name][0]
    torch.manual_seed(0)
    sample = NPU_CONVERTERS[name][1]()[index]
    gm, tensors = one_node_graph(target, sample)
    result = convert_to_ascend_ir(gm, name=f"npu_{index}")
    assert not result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)
    eager_tensors = _clone(tensors)
    eager_args, eager_kwargs = _bind(sample, eager_tensors)
    expected = [e for e in _flat_outputs(target(*eager_args, **eager_kwargs)) if isinstance(e, torch.Tensor)]
    actual = execute(result.graph, _clone(tensors))
    # Statistics outputs (softmax max/sum/lse) are zeros on both sides: compared too.
    for i, (got, want) in enumerate(zip(actual, expected)):
        torch.testing.assert_close(got, want, msg=lambda m: f"{name} output {i}: {m}")


def test_ge_ops_and_attrs_are_torchairs(npu_ops: Any) -> None:
    x, gamma = torch.randn(2, 8), torch.randn(8)
    gm, _ = one_node_graph(torch.ops.npu.npu_rms_norm.default, Sample((x, gamma, 0.01)))
    ops = [op for op in convert_to_ascend_ir(gm, name="g").graph.ops if op.type not in ("Data", "NetOutput")]
    assert [(op.type, op.attr_value("epsilon")) for op in ops] == [("RmsNorm", pytest.approx(0.01))]

    q, k = torch.randn(1, 2, 2, 8), torch.randn(1, 2, 2, 8)
    gm, _ = one_node_graph(torch.ops.npu.npu_apply_rotary_pos_emb.default, Sample((q, k, torch.randn(1, 2, 1, 8), torch.randn(1, 2, 1, 8), "BNSD")))
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
