"""_embedding_bag converters."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.torchair_refusals import wrong_result
from tests.functional_graphs import functional_graph
from tests.passes.converters.lowering import execute_converted, lower, types


def test_embedding_bag_forward_only_casts_indices_and_offsets():
    graph = lower(lambda w, i, o: F.embedding_bag(i, w, o, mode="max"), torch.randn(10, 3), torch.tensor([1, 2, 4, 5]), torch.tensor([0, 2]))
    assert types(graph) == ["Cast", "Cast", "EmbeddingBag"]
    assert graph.ops_of_type("EmbeddingBag")[0].attr_value("mode") == "max"


def mode_given(node) -> bool:
    from fxlab.passes.torchair_refusals import given_arguments

    return "mode" in given_arguments(node)


def test_a_call_that_leaves_mode_out_gets_torchairs_default_mean_and_the_check_names_it():
    """TorchAir's graph averages where eager sums: the GE graph is TorchAir's, and the IR check names why."""
    weight, indices, offsets = torch.randn(10, 3), torch.tensor([1, 2, 4, 5]), torch.tensor([0, 2])
    gm = functional_graph(lambda w, i, o: F.embedding_bag(i, w, o, mode="sum"), weight, indices, offsets)
    (bag,) = [n for n in gm.graph.nodes if "embedding_bag" in str(n.target)]
    assert "defaults mode to 1 (mean)" in wrong_result(bag)
    graph = convert_to_ascend_ir(gm, "g").graph
    assert graph.ops_of_type("EmbeddingBag")[0].attr_value("mode") == "mean"  # Dynamo's graph drops mode=0, the schema's default
    (out,) = execute_converted(graph, [weight, indices, offsets])
    torch.testing.assert_close(out, F.embedding_bag(indices, weight, offsets, mode="mean"))
    # a call that passes its mode gets it from TorchAir too: nothing to blame
    gm = functional_graph(lambda w, i, o: F.embedding_bag(i, w, o, mode="max"), weight, indices, offsets)
    (bag,) = [n for n in gm.graph.nodes if "embedding_bag" in str(n.target)]
    assert mode_given(bag) and wrong_result(bag) is None
