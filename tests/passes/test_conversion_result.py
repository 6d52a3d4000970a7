"""The one result of a conversion (fxlab's converters or TorchAir's) and the bookkeeping
both walks share."""
from __future__ import annotations

import math
import operator

import torch
import torch.fx as fx

from fxlab.ir.model import IrGraph, IrOp
from fxlab.passes.conversion_result import (
    SCOPE_ENTER,
    SCOPE_EXIT,
    UNSUPPORTED_OP_TYPE,
    ConversionResult,
    NodeConversion,
    Status,
    flatten,
    is_scope_marker,
    mark_placeholder,
    output_names,
    scope_enter_items,
    target_text,
)
from fxlab.passes.infra import PassRecord


def test_partial_when_any_node_failed_and_the_assigns_made_outputs_come_from_the_reuse_pass() -> None:
    nodes = [NodeConversion("add", "aten.add.Tensor", Status.CONVERTED, ["Add"]), NodeConversion("x", "aten.x", Status.MARKER)]
    result = ConversionResult(IrGraph("g"), nodes)
    assert not result.partial and result.assigns_to_outputs == [] and result.fx_graph is None
    result.nodes.append(NodeConversion("y", "aten.y.default", Status.REFUSED, [], "TorchAir refuses it"))
    result.ge_passes = [PassRecord("remove_dead_data", True, ["arg1_1"]), PassRecord("output_reuse", True, ["Assign", "Assign_1"])]
    assert result.partial and result.assigns_to_outputs == ["Assign", "Assign_1"]


def test_scope_markers_and_their_arguments_by_position_or_keyword() -> None:
    assert is_scope_marker(SCOPE_ENTER) and is_scope_marker(SCOPE_EXIT) and not is_scope_marker("aten.add.Tensor")
    assert scope_enter_items((["_super_kernel_scope"], ["s1"]), {}) == (["_super_kernel_scope"], ["s1"])
    assert scope_enter_items((), {"keys": ("k",), "values": ("v",)}) == (["k"], ["v"])


def test_a_placeholder_says_which_target_and_why() -> None:
    op = IrOp("Mul", "Mul")
    mark_placeholder(op, "aten.mul.Tensor", "converter raised")
    assert op.type == UNSUPPORTED_OP_TYPE
    assert (op.attr_value("_fxlab_unsupported"), op.attr_value("_fxlab_reason")) == ("aten.mul.Tensor", "converter raised")


def test_flatten_keeps_none_and_the_output_names_follow_it() -> None:
    assert flatten([1, (None, [2, (3,)]), None]) == [1, None, 2, 3, None]
    graph = fx.Graph()
    x = graph.placeholder("x")
    y = graph.call_function(torch.relu, (x,))
    graph.output((y, None, [x, 3]))
    assert output_names(fx.GraphModule(torch.nn.Module(), graph)) == ["relu", "", "x", ""]


def test_targets_are_named_as_the_user_reads_them():
    assert target_text(operator.ge) == "operator.ge"
    assert target_text(math.floor) == "math.floor"
    assert target_text(torch.ops.aten.add.Tensor) == "aten.add.Tensor"
    assert target_text(len) == "len"
