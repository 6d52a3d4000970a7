"""FX stage diff: exact alignment on the in-place examples, value-level input comparison,
the fallback alignment, saved (JSON) stages, and whole-trace diffs."""
from __future__ import annotations

import copy
import json

import pytest

from fxlab.capture.serialize import node_from_json, stage_json_text
from fxlab.capture.trace import NodeRecord, Provenance, StageTrace, TensorMeta
from fxlab.diff.fx_diff import diff_stages
from tests.sessions import trace_of


def rows(diff) -> list[tuple[str | None, str | None, list[str]]]:
    """(left name, right name, change codes) of every entry, in order."""
    return [(e.left and e.left.name, e.right and e.right.name, e.codes) for e in diff.entries]


def by_right(diff, name: str):
    return next(e for e in diff.entries if e.right and e.right.name == name)


def test_inplace_ops_aten_to_functional_pairs_exactly(example_trace) -> None:
    graph = example_trace("inplace_ops").graphs[0]
    diff = diff_stages(graph.stages["aten"], graph.stages["functional"])
    assert rows(diff) == [
        ("view", "view", []),
        ("t", "t", []),
        ("addmm", "addmm", []),
        ("view_1", "view_1", []),
        ("mul_", "mul", ["functionalized"]),
        (None, "view_2", ["added"]),
        (None, "view_3", ["added"]),
        ("slice_1", "slice_1", []),
        ("copy_", "copy", ["functionalized", "inputs_changed"]),
        (None, "slice_scatter", ["added"]),
        (None, "copy__1", ["copy_epilogue_added"]),
        ("add_", "add", ["functionalized"]),
        (None, "copy_", ["copy_epilogue_added"]),
        ("sum_1", "sum_1", ["inputs_changed"]),  # reads the view of the result, not mul_
        # reads slice_scatter, the value written back into the cache: the same value as
        # the mutated input aten reads
        ("mean", "mean", []),
        ("add", "add_1", []),
    ]
    (mul,) = [e for e in diff.entries if e.left and e.left.name == "mul_"]
    assert mul.changes[0].detail == "in-place aten.mul_.Tensor became functional aten.mul.Tensor"
    assert (mul.left.target, mul.right.target) == ("aten.mul_.Tensor", "aten.mul.Tensor")
    assert by_right(diff, "copy_").changes[0].detail == "copy_ epilogue added: writes add back into graph input arg2_1"
    assert by_right(diff, "copy__1").changes[0].detail == "copy_ epilogue added: writes slice_scatter back into graph input arg3_1"
    assert by_right(diff, "sum_1").changes[0].detail == "inputs (mul_, [-1]) -> (view_3, [-1])"
    assert [g.location.rsplit(":", 1)[1] for g in diff.groups] == ["21", "22", "23", "24", "25"]
    assert [g.same for g in diff.groups] == [True, False, False, False, False]
    assert diff.outputs_same and not diff.identical
    assert diff.summary() == {"same": 7, "changed": 4, "added": 5, "removed": 0, "functionalized": 3, "inputs_changed": 2, "copy_epilogue_added": 2}


def test_custom_inplace_op_pairs_with_auto_functionalized_and_its_getitems(example_trace) -> None:
    graph = example_trace("my_inplace").graphs[0]
    diff = diff_stages(graph.stages["aten"], graph.stages["functional"])
    assert rows(diff) == [
        ("mul", "mul", []),
        ("my_inplace", "auto_functionalized_v2", ["auto_functionalized"]),
        ("my_inplace_1", "auto_functionalized_v2_1", ["auto_functionalized"]),
        (None, "copy_", ["copy_epilogue_added"]),
        ("slice_1", None, ["removed"]),  # the view is an argument of the wrapper now
        ("my_inplace_2", "auto_functionalized_v2_2", ["auto_functionalized"]),
        (None, "copy__1", ["copy_epilogue_added"]),
        # add reads (getitem_1, getitem) = (the rewritten base mul, the op's result): same values
        ("add", "add", []),
        ("add_1", "add_1", []),
    ]
    wrapped = by_right(diff, "auto_functionalized_v2")
    assert wrapped.right.attached == ["getitem", "getitem_1"]
    assert wrapped.left.target == "npu.my_inplace.default"
    assert wrapped.changes[0].detail == "in-place npu.my_inplace.default wrapped in auto_functionalized_v2"
    assert by_right(diff, "copy_").changes[0].detail == "copy_ epilogue added: writes getitem_3 back into graph input arg0_1"


def test_aclgraph_unwraps_auto_functionalized_and_keeps_the_self_copies(example_trace) -> None:
    # TorchAir's reduce-overhead keeps each copy-back as copy_(x, x) (npugraph_ex drops them).
    graph = example_trace("my_inplace", stages=("functional", "aclgraph"), mode="reduce-overhead").graphs[0]
    diff = diff_stages(graph.stages["functional"], graph.stages["aclgraph"])
    codes = {(l, r): c for l, r, c in rows(diff)}
    assert codes[("auto_functionalized_v2", "my_inplace_default_2")] == ["reinplaced"]
    assert codes[("auto_functionalized_v2_1", "my_inplace_default_1")] == ["reinplaced"]
    assert codes[("auto_functionalized_v2_2", "my_inplace_default")] == ["reinplaced"]
    assert codes[("copy_", "copy_")] == codes[("copy__1", "copy__1")] == []
    assert codes[(None, "slice_tensor")] == ["added"]
    assert codes[("add", "add")] == ["reinplaced"]
    assert by_right(diff, "my_inplace_default_2").changes[0].detail == (
        "auto_functionalized_v2 unwrapped: in-place npu.my_inplace.default again"
    )


def test_functional_add_becomes_inplace_again_on_the_aclgraph_path(example_trace) -> None:
    graph = example_trace("inplace_ops", stages=("functional", "aclgraph"), mode="reduce-overhead").graphs[0]
    diff = diff_stages(graph.stages["functional"], graph.stages["aclgraph"])
    entry = by_right(diff, "add")
    assert (entry.left.name, entry.codes) == ("add", ["reinplaced"])
    assert entry.changes[0].detail == "functional aten.add.Tensor became in-place aten.add_.Tensor"


def test_dynamo_to_aten_lowers_targets_without_claiming_rewrites(example_trace) -> None:
    graph = example_trace("my_inplace").graphs[0]
    diff = diff_stages(graph.stages["dynamo"], graph.stages["aten"])
    # Dynamo's call of the op packet has no schema: only the target changed.
    assert ("z", "my_inplace", ["target_changed"]) in rows(diff)
    assert all(not e.left or e.left.kind == "" for e in diff.entries)
    assert not [e for e in diff.inputs if e.kind != "same"]  # same inputs, named differently


@pytest.mark.parametrize("example", ["inplace_ops", "my_inplace"])
@pytest.mark.parametrize("stage", ["dynamo", "aten", "functional", "pre_ge"])
def test_a_stage_and_its_json_round_trip_have_no_differences(example_trace, example: str, stage: str) -> None:
    original = example_trace(example).graphs[0].stages[stage]
    data = json.loads(stage_json_text(original))
    reloaded = StageTrace(data["name"], data["code"], [node_from_json(n) for n in data["nodes"]])
    diff = diff_stages(original, reloaded)
    assert diff.identical and diff.summary()["same"] == len(diff.entries) > 0


# -- hand-made stages: the rules one at a time ----------------------------------------------
def node(name: str, target: str, args: str = "", line: int | None = 1, kind: str = "", op: str = "call_function", shape=(2,)) -> NodeRecord:
    return NodeRecord(
        name=name, op=op, target=target, args=args, kind=kind,
        outputs=[TensorMeta(shape=list(shape), dtype="float32")],
        provenance=Provenance(file="m.py", line=line, code=f"line {line}") if line else Provenance(),
    )


def stage(*nodes: NodeRecord, output: str = "[out]") -> StageTrace:
    inputs = [node("x", "x", op="placeholder", line=None), node("y", "y", op="placeholder", line=None)]
    return StageTrace("s", "", [*inputs, *nodes, node("output", "output", output, op="output", line=None)])


def test_inputs_compare_by_value_not_by_name() -> None:
    left = stage(node("a", "aten.mul.Tensor", "x, y"), node("out", "aten.relu.default", "a", line=2))
    renamed = stage(node("b", "aten.mul.Tensor", "x, y"), node("c", "aten.relu.default", "b", line=2), output="[c]")
    swapped = stage(node("a", "aten.mul.Tensor", "y, x"), node("out", "aten.relu.default", "a", line=2))
    assert diff_stages(left, renamed).identical
    diff = diff_stages(left, swapped)
    assert rows(diff) == [("a", "a", ["inputs_changed"]), ("out", "out", [])]


def test_nodes_whose_line_changed_pair_in_a_second_pass_and_say_so() -> None:
    left = stage(node("a", "aten.add.Tensor", "x, 1", line=3), node("b", "aten.neg.default", "a", line=4))
    right = stage(node("a", "aten.add.Tensor", "x, 1", line=9), node("b", "aten.neg.default", "a", line=4))
    diff = diff_stages(left, right)
    assert rows(diff) == [("a", "a", ["moved"]), ("b", "b", [])]
    assert diff.entries[0].changes[0].detail == "source line 3 -> 9"


def test_other_families_do_not_pair_and_output_changes_are_seen() -> None:
    left = stage(node("a", "aten.add.Tensor", "x, y"), node("out", "aten.neg.default", "a", line=2))
    right = stage(node("a", "aten.sub.Tensor", "x, y"), node("out", "aten.neg.default", "a", line=2, shape=(3,)))
    assert rows(diff_stages(left, right)) == [
        ("a", None, ["removed"]),
        (None, "a", ["added"]),
        ("out", "out", ["inputs_changed", "outputs_changed"]),
    ]
    assert diff_stages(left, right).entries[2].changes[1].detail == "float32[2] -> float32[3]"


def test_graph_inputs_and_outputs_are_compared() -> None:
    left = stage(node("out", "aten.neg.default", "x"))
    right = copy.deepcopy(left)
    right.nodes[1].outputs = [TensorMeta(shape=[5], dtype="float16")]
    right.nodes[-1].args = "[x]"
    diff = diff_stages(left, right)
    assert [e.kind for e in diff.inputs] == ["same", "changed"]
    assert diff.inputs[1].changes[0].detail == "float32[2] -> float16[5]"
    assert not diff.outputs_same and not diff.identical


def _inputs(*names_and_shapes) -> list[NodeRecord]:
    made = []
    for name, shape in names_and_shapes:
        record = node(name, name, op="placeholder", line=None, shape=shape or ())
        if shape is None:  # a symbolic size
            record.outputs = [TensorMeta(shape=[], dtype="symint")]
        made.append(record)
    return made


@pytest.mark.parametrize(
    "left_names, right_names",
    [
        (["l_w_", "l_b_", "l_x_"], ["l_w_", "l_b_", "s77", "l_x_"]),  # Dynamo's names: paired by name
        (["arg0_1", "arg1_1", "arg2_1"], ["arg0_1", "arg1_1", "arg2_1", "arg3_1"]),  # aot's: by kind, in order
    ],
)
def test_a_recompile_that_adds_a_symbolic_size_input_pairs_the_tensors_it_moved(left_names, right_names) -> None:
    w, b, x = ((4, 4), (4,), (1, 4))
    left = StageTrace("s", "", [*_inputs(*zip(left_names, (w, b, x))), node("output", "output", f"[{left_names[2]}]", op="output", line=None)])
    right_inputs = _inputs(*zip(right_names, (w, b, None, ("s77", 4))))
    right = StageTrace("s", "", [*right_inputs, node("output", "output", f"[{right_names[3]}]", op="output", line=None)])
    diff = diff_stages(left, right)
    assert [(e.left and e.left.name, e.right and e.right.name, e.kind) for e in diff.inputs] == [
        (left_names[0], right_names[0], "same"),
        (left_names[1], right_names[1], "same"),
        (None, right_names[2], "added"),
        (left_names[2], right_names[3], "changed"),
    ]
    assert diff.inputs[3].changes[0].detail == "float32[1, 4] -> float32[s77, 4]"
    assert diff.outputs_same  # the output is the same input in both


TWO_CACHES = """
import torch

class TwoCaches(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k0", torch.zeros(2, 8))
        self.register_buffer("k1", torch.zeros(2, 8))

    def forward(self, x):
        for cache in (self.k0, self.k1):
            cache[:, :4] = x
            x = cache[:, :4] * 2
        return x

model = TwoCaches()
example_inputs = (torch.randn(2, 4),)
"""


def test_reads_of_a_written_back_buffer_pair_with_reads_of_the_mutated_input(write_model) -> None:
    """Layer by layer, as in a decoder's KV caches: functional reads the scattered value
    where aten reads the buffer it mutated; those reads pair, nothing is removed."""
    trace = trace_of(write_model(TWO_CACHES), stages=("aten", "functional"), verify=False)
    graph = trace.graphs[0]
    diff = diff_stages(graph.stages["aten"], graph.stages["functional"])
    assert rows(diff) == [
        ("slice_1", "slice_1", []),
        ("copy_", "copy", ["functionalized"]),
        (None, "slice_scatter", ["added"]),
        ("slice_3", "slice_5", []),
        ("copy__1", "copy_1", ["functionalized"]),
        (None, "slice_scatter_1", ["added"]),
        (None, "copy_", ["copy_epilogue_added"]),
        (None, "copy__1", ["copy_epilogue_added"]),
        # aten reads the mutated buffer (arg0_1), functional the value written back
        ("slice_2", "slice_4", []),
        ("mul", "mul", []),
        ("slice_4", "slice_8", []),
        ("mul_1", "mul_1", []),
    ]
    assert [g.code for g in diff.groups] == ["cache[:, :4] = x", "x = cache[:, :4] * 2"]
