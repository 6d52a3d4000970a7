"""The pass manager: runs passes in order, records what each did, lints after each that changed the graph."""

from __future__ import annotations

import operator

import pytest
import torch
import torch.fx as fx

from fxlab.passes.infra import NamedPass, PassFailedError, PassManager, PassRecord, PassResult


def _graph() -> fx.GraphModule:
    def f(x: torch.Tensor) -> torch.Tensor:
        y = x + 1
        z = y * 2
        return z - 0

    return fx.symbolic_trace(f)


def _drop_sub_zero(gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
    changed = False
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target is operator.sub and node.args[1] == 0:
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
            changed = True
    gm.recompile()
    return PassResult(gm, changed)


def _mul_to_add(gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
    touched = []
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is operator.mul:
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(operator.add, (node.args[0], node.args[0]))
            node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
            touched.append(new.name)
    gm.recompile()
    return PassResult(gm, bool(touched), notes=[f"{len(touched)} mul rewritten"])


def test_records_each_pass_in_order_with_removed_and_added_nodes() -> None:
    gm, records = PassManager([NamedPass("drop_sub_zero", _drop_sub_zero), NamedPass("mul_to_add", _mul_to_add)]).run(_graph())
    assert [r.name for r in records] == ["drop_sub_zero", "mul_to_add"]
    assert records[0].removed == ["sub"] and records[0].added == [] and records[0].changed
    assert records[1].removed == ["mul"] and records[1].added == ["add_1"] and records[1].notes == ["1 mul rewritten"]
    assert gm(torch.tensor([1.0, 2.0])).tolist() == [4.0, 6.0]


def test_a_pass_that_changes_nothing_is_recorded_unchanged() -> None:
    _, records = PassManager([NamedPass("noop", lambda gm: PassResult(gm, False))]).run(_graph())
    assert records == [PassRecord("noop", False)]


def test_the_graph_is_linted_after_each_pass_that_changed_it_only() -> None:
    linted: list[int] = []
    passes = [
        NamedPass("noop", lambda gm: PassResult(gm, False)),
        NamedPass("drop_sub_zero", _drop_sub_zero),
        NamedPass("noop_again", lambda gm: PassResult(gm, False)),
        NamedPass("mul_to_add", _mul_to_add),
    ]
    PassManager(passes, lint=lambda gm: linted.append(len(gm.graph.nodes))).run(_graph())
    assert linted == [4, 4]  # after drop_sub_zero (x, add, mul, output) and after mul_to_add


def test_a_pass_leaving_a_broken_graph_is_named() -> None:
    def breaks(gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
        add = next(n for n in gm.graph.nodes if n.target is operator.add)
        mul = next(n for n in gm.graph.nodes if n.target is operator.mul)
        add.args = (mul, 1)  # a use before its definition
        return PassResult(gm, True)

    with pytest.raises(PassFailedError, match="the user's pass breaks failed"):
        PassManager([NamedPass("breaks", breaks, origin="user")]).run(_graph())


def test_a_pass_must_return_a_pass_result() -> None:
    with pytest.raises(PassFailedError, match="not a PassResult"):
        PassManager([NamedPass("old_style", lambda gm: True)]).run(_graph())  # type: ignore[arg-type, return-value]


def test_records_round_trip_through_json() -> None:
    record = PassRecord("p", True, ["a"], ["b"], ["c"], ["note"], origin="user")
    assert PassRecord.from_json(record.to_json()) == record


def test_a_pass_rewriting_a_node_leaves_it_its_own_source() -> None:
    gm = _graph()
    add = next(n for n in gm.graph.nodes if n.target is operator.add)
    add.meta.update(stack_trace='File "model.py", line 3, in f\n    y = x + 1\n', nn_module_stack={"L__self__": ("", "M")})

    def retarget(gm: fx.GraphModule) -> PassResult[fx.GraphModule]:
        for node in gm.graph.nodes:
            if node.target is operator.add:  # what Inductor's pattern replacement does to a matched base
                node.target = operator.iadd
                node.meta["stack_trace"] = 'File "model.py", line 4, in f\n    z = y * 2\n'
                node.meta.pop("nn_module_stack")
                node.meta["stack_trace_of_nothing"] = "kept: not an origin key"
        gm.recompile()
        return PassResult(gm, True)

    gm, _ = PassManager([NamedPass("retarget", retarget)]).run(gm)
    assert add.target is operator.iadd
    assert add.meta["stack_trace"].endswith("y = x + 1\n") and add.meta["nn_module_stack"] == {"L__self__": ("", "M")}
    assert add.meta["stack_trace_of_nothing"] == "kept: not an origin key"
