"""fxlab.compat.torchair_nodes: what a node whose TorchAir converter raised is recorded with."""
from __future__ import annotations

import torch
import torch.fx as fx

from fxlab.compat.torchair_nodes import _raised_message


def _node(target) -> fx.Node:
    graph = fx.Graph()
    x = graph.placeholder("x")
    return graph.call_function(target, (x,))


def test_a_refused_op_with_a_known_rewrite_names_it():
    message = _raised_message(_node(torch.ops.aten.index_copy.default), NotImplementedError("ge_converter is not implemented!"))
    assert message.startswith("TorchAir's converter for aten.index_copy.default raised at node index_copy_default: NotImplementedError: ge_converter is not implemented!")
    assert message.endswith(". Fix: on Ascend, write the KV cache with torch_npu.scatter_update_(cache, positions, new, axis), "
                            "torch_npu.npu_scatter_nd_update_(cache, indices, new) or a slice assignment (cache[:, :, start:end] = new), which TorchAir converts")


def test_another_error_of_that_op_gets_no_rewrite():
    message = _raised_message(_node(torch.ops.aten.index_copy.default), ValueError("bad shape"))
    assert message == "TorchAir's converter for aten.index_copy.default raised at node index_copy_default: ValueError: bad shape"
