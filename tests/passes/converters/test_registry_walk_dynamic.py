"""Every converter's samples with dynamic shapes, run on CPU against eager.

Each sample becomes the graph :mod:`tests.passes.converters.dynamic_graph` builds (its
tensors' dims and its size arguments symbolic, as in a model compiled with
``dynamic=True``), goes through the ``pre_ge`` passes and the conversion, and the Ascend IR
runs on the sample's own values (each size symbol fed its traced value) against the op run
eagerly, as the static walk checks it. A sample with nothing to mark dynamic, or whose op
has no fake kernel for symbolic sizes, is skipped with that reason.
"""
from __future__ import annotations

from typing import Any

import pytest
import torch

from fxlab.passes import converters  # noqa: F401 - registers the shipped converters
from fxlab.passes.conversion_result import UNSUPPORTED_OP_TYPE
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.registry import CONVERTERS
from fxlab.passes.pre_ge import pre_ge_graph
from tests.passes.converters.dynamic_graph import NotDynamic, dynamic_one_node_graph
from tests.passes.converters.test_registry_walk import COLLECTIVE_NAMESPACES, _cases, _clone, _samples_of, check_against_eager

# Converters whose dynamic samples cannot be converted, with why (TorchAir cannot either).
NOT_CONVERTED = {
    "aten._adaptive_avg_pool2d.default": "a symbolic output_size (TorchAir: not implemented with output_size in tensor)",
    "aten.embedding_dense_backward.default": "a symbolic num_weights (TorchAir: not supported when num_weights is a tensor)",
    "aten.upsample_nearest2d_backward.default": "a symbolic input_size (TorchAir: not implemented while input_size is a tensor)",
    "aten.reflection_pad2d.default": "symbolic padding (TorchAir: not implemented when padding is a tensor)",
    "aten.reflection_pad2d_backward.default": "symbolic padding (TorchAir's converter fails on it)",
    "aten.replication_pad1d.default": "symbolic padding (TorchAir: not implemented when padding is a tensor)",
    "aten.replication_pad1d_backward.default": "symbolic padding (TorchAir: not implemented when padding is a tensor)",
    "aten.nll_loss_forward.default": "a symbolic ignore_index (TorchAir's converter fails on it)",
    "aten.nll_loss_backward.default": "a symbolic ignore_index (TorchAir's converter fails on it)",
    "aten.randint.default": "a symbolic size (TorchAir: not supported when size is a tensor)",
    "aten.multinomial.default": "a symbolic num_samples (TorchAir writes it into an attr)",
    "auto_functionalized_v2": "a mutated view of a base with symbolic sizes (TorchAir's conversion fails on it)",
}

# Samples whose graph computes another result than eager, as TorchAir's graph does: with
# symbolic sizes TorchAir takes another path, and fxlab builds the same graph.
TORCHAIR_WRONG = {
    "aten.as_strided_scatter.default-0": "with a symbolic size TorchAir takes the rank of the size's Pack (1) for the view's, "
    "so ViewCopy gets source strides of one element for a 2-D source",
    "aten.std.correction-6": "with symbolic sizes TorchAir skips its check of the element count, so a correction above it "
    "gives ReduceStdWithMean's NaN where eager gives inf",
}


def _params() -> list[Any]:
    params = []
    for case in _cases():
        target, index = case.values
        if index is None:
            continue
        key = f"{target}-{index}"
        marks = [pytest.mark.xfail(strict=True, reason=TORCHAIR_WRONG[key])] if key in TORCHAIR_WRONG else []
        params.append(pytest.param(target, index, id=key, marks=marks))
    return params


@pytest.mark.parametrize("target,index", _params())
def test_dynamic_converter_matches_eager(target: Any, index: int) -> None:
    if getattr(target, "namespace", None) in COLLECTIVE_NAMESPACES:
        from tests.conftest import process_group

        with process_group("gloo"):
            _check_dynamic_converter(target, index)
    else:
        _check_dynamic_converter(target, index)


def _check_dynamic_converter(target: Any, index: int) -> None:
    sample = _samples_of(CONVERTERS.get(target))[index]
    try:
        dynamic = dynamic_one_node_graph(target, sample)
    except NotDynamic as exc:
        pytest.skip(str(exc))
    result = convert_to_ascend_ir(pre_ge_graph(dynamic.gm).gm, name=f"dynamic_{index}", convert_refused=True)
    placeholders = result.graph.ops_of_type(UNSUPPORTED_OP_TYPE)
    if placeholders and str(target) in NOT_CONVERTED:
        pytest.skip(f"not converted with {NOT_CONVERTED[str(target)]}")
    assert not placeholders, [op.attr_value("_fxlab_reason") for op in placeholders]
    inputs = [torch.tensor(v, dtype=torch.int64) if type(v) is int else v for v in _clone(dynamic.inputs)]
    check_against_eager(target, sample, result.graph, inputs, dynamic.positions)
