"""Every converter's samples through fxlab's built-in conversion and TorchAir's own.

Each sample becomes a one-node functional graph; the built-in side converts its
``pre_ge`` graph, the bridge the functional graph (TorchAir runs its own passes), and
``diff_ir`` compares the two GE graphs: op types, attrs, wiring, output dtypes and order
of creation. A converter passes when every sample gives TorchAir's graph, up to the
differences docs/torchair-differences.md lists as impossible to remove on a CPU machine.

``STILL_DIFFERENT`` lists the converters whose graphs do not match TorchAir's yet (output
dtypes of helper ops, layout attrs, TorchAir's ``is_arch35`` and dead-input handling,
...). They are expected failures that must fail: when one starts to match, the test says
so, and the list only shrinks.
"""
from __future__ import annotations

from tests.conftest import torchair_session_or_skip

from typing import Any

import pytest
import torch

from fxlab.compat.bridge import TorchAirConversionError, run_torchair_conversion
from fxlab.diff.ir_diff import diff_ir
from fxlab.ops.fake_convert import one_node_graph
from fxlab.passes import converters  # noqa: F401 - registers the shipped converters
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.registry import CONVERTERS, ORIGIN_FXLAB
from fxlab.passes.output_reuse import map_assign_to_graph_output
from fxlab.passes.pre_ge import pre_ge_graph
from tests.compat.test_bridge_examples import Classifier, listed_differences

pytestmark = pytest.mark.filterwarnings("ignore:Failed to import torchair")

STILL_DIFFERENT = {
    "auto_functionalized_v2",
    "aten._native_batch_norm_legit_no_training.default",
    "aten._reshape_alias.default",
    "aten._safe_softmax.default",
    "aten._to_copy.default",
    "aten._unsafe_view.default",
    "aten.addmm.default",
    "aten.alias.default",
    "aten.all.default",
    "aten.any.default",
    "aten.any.dim",
    "aten.arange.default",
    "aten.arange.start",
    "aten.arange.start_step",
    "aten.argmax.default",
    "aten.argmin.default",
    "aten.as_strided.default",
    "aten.avg_pool2d.default",
    "aten.baddbmm.default",
    "aten.ceil.default",
    "aten.convolution.default",
    "aten.copy.default",
    "aten.cumsum.default",
    "aten.detach.default",
    "aten.empty.memory_format",
    "aten.empty_like.default",
    "aten.expand.default",
    "aten.fill.Scalar",
    "aten.fill.Tensor",
    "aten.floor.default",
    "aten.full_like.default",
    "aten.hardtanh.default",
    "aten.logical_and.default",
    "aten.logical_not.default",
    "aten.logical_or.default",
    "aten.max.dim",
    "aten.max_pool2d_with_indices.default",
    "aten.mean.default",
    "aten.minimum.default",
    "aten.mul.Tensor",
    "aten.native_group_norm.default",
    "aten.new_empty.default",
    "aten.new_full.default",
    "aten.new_ones.default",
    "aten.new_zeros.default",
    "aten.ones_like.default",
    "aten.permute.default",
    "aten.reflection_pad2d.default",
    "aten.reshape.default",
    "aten.scatter.value",
    "aten.select.int",
    "aten.select_scatter.default",
    "aten.slice.Tensor",
    "aten.slice_scatter.default",
    "aten.sort.default",
    "aten.split.Tensor",
    "aten.split_with_sizes.default",
    "aten.squeeze.default",
    "aten.squeeze.dim",
    "aten.squeeze.dims",
    "aten.std.correction",
    "aten.sum.default",
    "aten.sum.dim_IntList",
    "aten.sym_numel.default",
    "aten.sym_size.int",
    "aten.t.default",
    "aten.topk.default",
    "aten.transpose.int",
    "aten.unbind.int",
    "aten.unsqueeze.default",
    "aten.upsample_nearest2d.default",
    "aten.view.default",
    "aten.view.dtype",
    "aten.zeros.default",
    "aten.zeros_like.default",
}


def _shipped() -> list[Any]:
    return sorted((c for c in CONVERTERS if c.origin == ORIGIN_FXLAB and c.samples is not None), key=lambda c: str(c.target))


def _params() -> list[Any]:
    params = []
    for converter in _shipped():
        name = str(converter.target)
        marks = [pytest.mark.xfail(strict=True, reason="graph still differs from TorchAir's")] if name in STILL_DIFFERENT else []
        params.append(pytest.param(converter, id=name, marks=marks))
    return params


@pytest.fixture(scope="module")
def torchair():
    yield from torchair_session_or_skip()


def sample_differences(torchair: Any, converter: Any) -> list[str]:
    """The unlisted differences between both conversions over the converter's samples."""
    views = set(torchair.module("_ge_concrete_graph.continguous_utils").view_white_list)
    rows = listed_differences()
    found = []
    torch.manual_seed(0)
    for index, sample in enumerate(converter.samples()):
        gm = one_node_graph(converter.target, sample)
        builtin = convert_to_ascend_ir(pre_ge_graph(gm)[0], "sample").graph
        map_assign_to_graph_output(builtin)
        try:
            theirs = run_torchair_conversion(gm, "sample", torchair)
        except TorchAirConversionError as exc:
            found.append(f"sample {index}: TorchAir's conversion failed: {exc}")
            continue
        targets = {n.name: str(n.target) for g in (gm, theirs.fx_graph) for n in g.graph.nodes if n.op == "call_function"}
        issues = Classifier(builtin, theirs.graph, targets, views).issues(diff_ir(builtin, theirs.graph))
        found += [f"sample {index}: {i.kind} {i.op_type} [{i.detail}] at {i.where}" for i in issues if not any(r.explains(i) for r in rows)]
    return found


@pytest.mark.parametrize("converter", _params())
def test_samples_convert_to_torchairs_graph(torchair, converter):
    differences = sample_differences(torchair, converter)
    assert not differences, "\n".join(differences)


def test_still_different_names_only_shipped_converters():
    assert STILL_DIFFERENT <= {str(c.target) for c in _shipped()}
