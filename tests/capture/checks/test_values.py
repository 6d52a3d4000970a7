"""Model outputs compared leaf by leaf: pytree nodes, named tuples, dataclasses and
objects keeping tensors in attributes (transformers' caches), each leaf named."""
from __future__ import annotations

import collections
import dataclasses

import pytest
import torch

from fxlab.capture.checks.values import Comparison, compare_outputs, output_leaves
from tests.sessions import trace_of


class LayerCache:
    """Like transformers' DynamicCache: no pytree node, tensors in attributes."""

    def __init__(self, keys: list[torch.Tensor], values: list[torch.Tensor]) -> None:
        self.keys = keys
        self.values = values
        self.seen_tokens = keys[0].shape[0]


@dataclasses.dataclass
class Result:
    logits: torch.Tensor
    cache: LayerCache
    note: str = "ok"


Pair = collections.namedtuple("Pair", ["first", "second"])


def _result(shift: float = 0.0) -> tuple:
    cache = LayerCache([torch.ones(2, 3), torch.zeros(2, 3) + shift], [torch.arange(6.0).reshape(2, 3)])
    return Result(torch.ones(4), cache), Pair(torch.ones(1), {"k": 3})


def test_leaves_are_named_by_their_path():
    leaves = output_leaves(_result())
    assert list(leaves) == [
        "output[0].logits",
        "output[0].cache.keys[0]",
        "output[0].cache.keys[1]",
        "output[0].cache.values[0]",
        "output[0].cache.seen_tokens",
        "output[0].note",
        "output[1].first",
        "output[1].second['k']",
    ]


def test_equal_objects_match_leaf_by_leaf():
    # Compared with != on the object, every cache output was a MISMATCH.
    cmp = Comparison()
    compare_outputs(cmp, _result(), _result())
    assert cmp.result().ok and cmp.compared == 5


def test_the_differing_leaf_is_named():
    cmp = Comparison()
    compare_outputs(cmp, _result(), _result(shift=0.5))
    assert cmp.mismatches == ["output[0].cache.keys[1]: max |diff| 0.5"]


def test_a_different_structure_is_a_mismatch():
    cmp = Comparison()
    other = _result()
    other[0].cache.keys.append(torch.ones(1))
    compare_outputs(cmp, _result(), other)
    assert cmp.mismatches[0] == "outputs differ in structure: eager has nothing more, compiled has output[0].cache.keys[2]"


def test_a_self_referencing_object_is_walked_once():
    cache = LayerCache([torch.ones(1)], [torch.ones(1)])
    cache.parent = cache
    assert list(output_leaves(cache)) == ["output.keys[0]", "output.values[0]", "output.seen_tokens", "output.parent"]
    assert output_leaves(cache)["output.parent"] == "<LayerCache>"


MODEL_RETURNING_A_CACHE = """
import torch
class Cache:
    def __init__(self):
        self.keys = []
    def update(self, k):
        self.keys.append(k)
        return k
class M(torch.nn.Module):
    def forward(self, x):
        cache = Cache()
        cache.update(x * 2)
        return x + 1, cache
model = M()
example_inputs = (torch.ones(3),)
"""


def test_a_model_returning_a_cache_object_matches(write_model):
    trace = trace_of(write_model(MODEL_RETURNING_A_CACHE), stages=("dynamo",))
    assert trace.check.verdict == "match (3 tensors, max |diff| 0)"


def test_leaves_without_a_truth_value_are_compared_not_assumed_equal():
    import numpy

    cmp = Comparison()
    compare_outputs(cmp, {"a": numpy.arange(3)}, {"a": numpy.arange(3) * 2})
    compare_outputs(cmp, {"b": numpy.arange(3)}, {"b": numpy.arange(3)})
    assert [m.split(":")[0] for m in cmp.mismatches] == ["output['a']"]


class KeylessNode:
    def __init__(self, a: torch.Tensor, b: torch.Tensor) -> None:
        self.a, self.b = a, b


def test_a_pytree_node_registered_without_key_names_is_walked_by_position():
    from torch.utils import _pytree as pytree

    pytree.register_pytree_node(KeylessNode, lambda n: ([n.a, n.b], None), lambda leaves, _: KeylessNode(*leaves))
    try:
        leaves = output_leaves(KeylessNode(torch.ones(1), torch.zeros(1)))
    finally:
        pytree._deregister_pytree_node(KeylessNode)
    assert list(leaves) == ["output<leaf 0>", "output<leaf 1>"]


def test_distributed_tensors_are_compared_by_this_ranks_shard():
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    from tests.conftest import process_group

    with process_group("fake", world_size=2):
        mesh = init_device_mesh("cpu", (2,))
        full = torch.arange(8.0).reshape(4, 2)
        cmp = Comparison()
        cmp.add("weight", distribute_tensor(full, mesh, [Shard(0)]), distribute_tensor(full, mesh, [Shard(0)]))
        cmp.add("weight changed", distribute_tensor(full, mesh, [Shard(0)]), distribute_tensor(full + 1, mesh, [Shard(0)]))
    assert cmp.compared == 2 and cmp.mismatches == ["weight changed: max |diff| 1"]


def test_a_check_that_compared_nothing_says_what_did_not_run_and_keeps_its_notes():
    not_run = ["graph 1: the compiled run did not record this graph's inputs"]
    cmp = Comparison(notes=["graph 0 output 0 (t): its value differs, but no one uses it"])
    cmp.add_form("graph 0 output 0", torch.ones(2), torch.zeros(2))
    result = cmp.result(not_run)
    assert result.ok and result.verdict == f"not run: {not_run[0]}" and result.notes == cmp.notes
    cmp.add("graph 0 input 0 after the call", torch.ones(2), torch.ones(2))
    result = cmp.result(not_run)
    assert result.ok and not result.skipped and result.compared == 1 and result.not_run == not_run
    assert result.verdict == f"match (1 tensors, max |diff| 0); not run: {not_run[0]}"


def test_tensors_sharing_memory_share_it_in_their_copies_and_others_do_not():
    from fxlab.capture.checks.values import clone_tree

    base, other = torch.arange(12.0).reshape(3, 4), torch.ones(2)
    args = (base, base[1:], base.t(), other, other)
    copied = clone_tree(args)
    for original, copy in zip(args, copied):
        assert torch.equal(original, copy) and copy.stride() == original.stride() or copy.is_contiguous()
    copied[0].mul_(10)  # a write into the copy of the buffer shows in the copies of its views
    assert copied[1][0, 0].item() == 40.0 and copied[2][0, 1].item() == 40.0
    assert base[1, 0].item() == 4.0  # and never in the originals
    copied[3].add_(1)
    assert copied[4].tolist() == [2.0, 2.0]  # one tensor passed twice is one tensor
    alone = clone_tree((torch.ones(2), torch.ones(2)))
    alone[0].add_(1)
    assert alone[1].tolist() == [1.0, 1.0]


ALIASED_INPUTS = """
import torch

class M(torch.nn.Module):
    def forward(self, a, b):
        a.mul_(2)
        return b + 1

base = torch.ones(4, 6)
model = M()
example_inputs = (base, base[1:])
"""


def test_a_model_on_inputs_that_overlap_is_traced_on_inputs_that_overlap(write_model):
    # torch.compile sees the two inputs share memory (aot_autograd gives them one base
    # input, written in place); copies that did not share it would trace another program.
    from fxlab.capture.request import TraceRequest
    from fxlab.session import capture

    captured = capture(TraceRequest(write_model(ALIASED_INPUTS), stages=("functional",)))
    trace = captured.trace
    functional = trace.graphs[0].stages["functional"]
    assert len([n for n in functional.nodes if n.op == "placeholder"]) == 1  # the two inputs' one base
    assert trace.status == "ok" and trace.check.ok and trace.check.compared == 3
