"""TorchAir's ``_inference_rule`` for custom ops: which ops get one, and what it says."""
from __future__ import annotations

import json

import torch

from tests.functional_graphs import functional_graph
from fxlab.ir import ge
from fxlab.ir.builder import GraphBuilder, Tensor, building
from fxlab.ir.model import DataType, IrOp, TensorDesc
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.inference_rule import RULE_ATTR, attach_inference_rules, ge_api_names
from tests.passes.converters.custom_ops import define_test_op as _define

SCALE_ROWS = _define(
    "rule_scale_rows(Tensor x, Tensor y) -> (Tensor, Tensor)",
    lambda x, y: (x * 2, y.to(torch.int32)),
    lambda x, y: (torch.empty_like(x), torch.empty(y.shape, dtype=torch.int32)),
)
UPDATE = _define("rule_update(Tensor(a!) x, Tensor y) -> Tensor z", lambda x, y: (x.add_(y), y * 2)[1], lambda x, y: torch.empty_like(y))


def _rule(op: IrOp) -> dict | None:
    value = op.attr_value(RULE_ATTR)
    return None if value is None else json.loads(value)


def test_the_ge_apis_names_are_torchairs_builders():
    names = ge_api_names()
    assert {"Add", "Cast", "Const", "Data", "NetOutput", "Shape", "ForeachACos"} <= names
    assert "ForeachAcos" not in names and "RuleScaleRows" not in names


def test_a_custom_op_gets_its_outputs_sizes_and_dtypes_builtin_ops_get_none():
    gm = functional_graph(lambda x, y: SCALE_ROWS(x + 1, y), torch.randn(2, 5), torch.randn(3, dtype=torch.float16))
    graph = convert_to_ascend_ir(gm).graph
    (custom,) = graph.ops_of_type("RuleScaleRows")
    assert _rule(custom) == {"shape": {"inputs": [None, None], "outputs": [["2", "5"], ["3"]]}, "dtype": [0, 3]}
    assert custom.attr_value(RULE_ATTR).startswith('{\n  "shape": {\n    "inputs": [\n      null,')  # TorchAir's indent=2
    assert all(_rule(op) is None for op in graph.ops if op is not custom)


def test_an_in_place_custom_op_reads_its_ref_output_from_the_moved_base():
    def fn(state, y):
        return UPDATE(state, y) + 1

    graph = convert_to_ascend_ir(functional_graph(fn, torch.randn(4, 3, dtype=torch.float16), torch.randn(4, 3, dtype=torch.float16))).graph
    (op,) = graph.ops_of_type("RuleUpdate")
    assert _rule(op) == {"shape": {"inputs": [None, None], "outputs": [["4", "3"], ["4", "3"]]}, "dtype": [1, 1]}


def test_symbolic_sizes_or_an_unknown_output_give_no_rule():
    builder = GraphBuilder("g")
    data = IrOp("x", "Data", output_desc=[TensorDesc("y", DataType.DT_FLOAT, (-1, 3))])
    builder.graph.ops.append(data)
    with building(builder), builder.converting("node", None):
        first = len(builder.graph.ops)
        ref = ge.op("Custom", {"x": Tensor(data, 0)}, outputs=("x", "z"))
        fresh = ge.op("Custom", {"x": ge.op1("Relu", {"x": Tensor(data, 0)})}, outputs=("y",))
        ops = builder.graph.ops[first:]
        attach_inference_rules(ops, ((Tensor(data, 0),), {}), [ref[1], fresh[0]], [torch.empty(2, 3), torch.empty(2, 3)], "node")
    # the ref output x stands for the input, whose size is symbolic; the other op's
    # output is known, its Relu input is not needed for static sizes
    assert _rule(ops[0]) is None
    assert _rule(ops[2]) == {"shape": {"inputs": [None], "outputs": [["2", "3"]]}, "dtype": [0]}
