"""Point-wise converters: TorchAir's op chains, checked against eager."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from tests.passes.converters.lowering import lower, types
from tests.passes.converters.node_lowering import lower_call

aten = torch.ops.aten


def test_logsumexp_shifts_by_the_max_and_zeroes_infinite_maxima():
    graph = lower(lambda x: torch.logsumexp(x, 1), torch.randn(2, 3))
    assert types(graph) == ["Const", "ReduceMax", "Abs", "Const", "Equal", "Const", "MaskedFill", "Squeeze", "Sub", "ReduceLogSumExp", "Add"]
    assert graph.ops_of_type("ReduceMax")[0].attr_value("keep_dims") is True


def test_addcmul_value_is_a_const_of_the_output_dtype():
    graph = lower(lambda x, a, b: torch.addcmul(x, a, b, value=0.5), torch.randn(3), torch.randn(3), torch.randn(3))
    assert types(graph) == ["Const", "Addcmul"]
    assert [i.split(":")[0] for i in graph.ops_of_type("Addcmul")[0].inputs][-1] == graph.ops_of_type("Const")[0].name


def test_prelu_glu_and_log_sigmoid_are_single_ops():
    assert types(lower(lambda x, w: F.prelu(x, w), torch.randn(2, 3, 4), torch.rand(3)))[-1] == "PRelu"
    assert types(lower(lambda x: F.glu(x, 0), torch.randn(4, 2))) == ["GLU"]
    assert types(lower(F.logsigmoid, torch.randn(3))) == ["LogSigmoid", "Identity"]


def test_asin_of_integers_casts_to_the_output_dtype_first():
    assert types(lower(torch.asin, torch.tensor([0, 1]))) == ["Cast", "Asin"]
    assert types(lower(torch.acos, torch.rand(3))) == ["Acos"]


def test_out_variant_returns_the_result_and_leaves_out_alone():
    out = torch.zeros(3)
    graph = lower_call(aten.erfinv.out, torch.rand(3) * 0.9, out=out)
    assert types(graph) == ["Erfinv"] and graph.ops_of_type("Erfinv")[0].output_desc[0].name == "output_y"


def test_nan_to_num_needs_every_replacement():
    graph = lower_call(aten.nan_to_num.default, torch.tensor([float("nan"), float("inf")]), 0.0, 5.0, -5.0)
    op = graph.ops_of_type("NanToNum")[0]
    assert (op.attr_value("nan"), op.attr_value("posinf"), op.attr_value("neginf")) == (0.0, 5.0, -5.0)



def test_nan_to_num_without_its_infinities_names_the_call_that_converts():
    from fxlab.passes.conversion_result import FAILED_STATUSES
    from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
    from tests.functional_graphs import functional_graph

    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 2.0])
    result = convert_to_ascend_ir(functional_graph(lambda t: (torch.nan_to_num(t, nan=0.0),), x), "g")
    (refused,) = [n for n in result.nodes if n.status in FAILED_STATUSES and "nan_to_num" in str(n.target)]
    assert "Fix: give all three, e.g. torch.nan_to_num(x, nan=0.0, posinf=torch.finfo(x.dtype).max" in refused.message
    big = torch.finfo(x.dtype)
    graph = lower_call(aten.nan_to_num.default, x, 0.0, big.max, big.min)  # the fix converts, and is what nan=0.0 alone computes
    assert types(graph) == ["NanToNum"] and torch.equal(torch.nan_to_num(x, nan=0.0), torch.nan_to_num(x, 0.0, big.max, big.min))
