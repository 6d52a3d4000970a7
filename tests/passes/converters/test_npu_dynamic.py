"""torch_npu operators' converters with dynamic shapes: each sample's dynamic variant
(:mod:`tests.passes.converters.dynamic_graph`: its dims and size arguments symbolic, as in a
model compiled with ``dynamic=True``) converted, run by the reference executor on the
sample's own values and compared with the operator's CPU kernel, as
``test_npu.py`` checks the static samples. A sample TorchAir's converter refuses with
symbolic sizes is refused as TorchAir refuses it."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from fxlab.ir.execute import execute
from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE, Status
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.npu import NPU_CONVERTERS
from fxlab.passes.pre_ge import pre_ge_graph
from tests.passes.converters.dynamic_graph import NotDynamic, dynamic_one_node_graph
from tests.passes.converters.test_npu import NO_CPU_KERNEL, PARAMS, _run_or_skip, _target, npu_ops  # noqa: F401 - the fixture
from tests.passes.converters.test_registry_walk import _bind, _clone, _flat_outputs


@pytest.mark.parametrize("name,index", PARAMS)
def test_npu_converter_with_dynamic_shapes_matches_cpu_kernel(npu_ops: Any, name: str, index: int) -> None:
    target = _target(name)
    torch.manual_seed(0)
    sample = NPU_CONVERTERS[name][1]()[index]
    try:
        dynamic = dynamic_one_node_graph(target, sample)
    except NotDynamic as exc:
        if name in NO_CPU_KERNEL:
            raise NotImplementedError(f"no CPU kernel, and no dynamic variant: {exc}") from exc
        pytest.skip(str(exc))
    result = convert_to_ascend_ir(pre_ge_graph(dynamic.gm).gm, name=f"npu_dynamic_{index}", convert_refused=True)
    refused = [r for r in result.nodes if r.status is Status.REFUSED]
    if refused:
        assert [r.target for r in refused] == [str(target)]
        assert refused[0].message.startswith(f"TorchAir refuses {target} with these arguments")
        if name in NO_CPU_KERNEL:
            raise NotImplementedError("refused here; its CPU kernel is missing anyway")
        return
    assert not result.graph.ops_of_type(UNSUPPORTED_OP_TYPE), [op.attr_value("_fxlab_reason") for op in result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)]
    inputs = [torch.tensor(v, dtype=torch.int64) if type(v) is int else v for v in _clone(dynamic.inputs)]
    tensors = [inputs[i] for i in dynamic.positions]
    eager_args, eager_kwargs = _bind(sample, _clone(tensors))
    expected = [
        e for e in _flat_outputs(_run_or_skip(name, lambda: target(*eager_args, **eager_kwargs))) if not isinstance(e, (int, float))
    ]
    actual = _run_or_skip(name, lambda: execute(result.graph, inputs))
    for i, (got, want) in enumerate(zip(actual, expected)):
        if want is not None:
            torch.testing.assert_close(got, want, msg=lambda m: f"{name} output {i}: {m}")
