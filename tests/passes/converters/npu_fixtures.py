"""Shared by the tests of torch_npu operators' converters: the operators defined from a
torch_npu copy for a module's tests, and one sample converted."""
from __future__ import annotations

from typing import Any, Iterator

import pytest
import torch

from fxlab.passes.convert_to_ascend_ir import ConversionResult, convert_to_ascend_ir
from fxlab.passes.converters.registry import Sample
from tests.passes.converters.test_registry_walk import one_node_graph


@pytest.fixture(scope="module")
def npu_ops() -> Iterator[Any]:
    from fxlab.compat.torch_npu_ops import find_torch_npu_copy, torch_npu_definitions

    copy = find_torch_npu_copy()
    if copy is None:
        pytest.skip("no torch_npu copy (`fxlab torchair fetch` extracts one)")
    with torch_npu_definitions(copy) as definitions:
        yield definitions


def convert(name: str, *args: Any, **kwargs: Any) -> ConversionResult:
    """``torch.ops.npu.<name>`` called on the arguments, as a one-node graph, converted."""
    op, _, overload = name.partition(".")
    target = getattr(getattr(torch.ops.npu, op), overload or "default")
    gm, _ = one_node_graph(target, Sample(args, kwargs))
    return convert_to_ascend_ir(gm, name="g")


def op_types(result: ConversionResult) -> list[str]:
    return [op.type for op in result.graph.ops if op.type not in ("Data", "NetOutput")]
