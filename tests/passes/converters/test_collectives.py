"""Collective converters: the Hcom ops, attrs and wiring TorchAir builds, on a process
group of this process (gloo with one rank, where the reference run equals eager; the
fake group of four ranks, where only the graph is compared)."""
from __future__ import annotations

from typing import Any

import pytest
import torch

from fxlab.compat.collective_capture import torchair_collectives
from fxlab.ir.execute import execute
from fxlab.passes.conversion_result import Status
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.converters.collectives import NPU_DEFINE_CONVERTERS, reduction_name
from fxlab.passes.converters.registry import Sample
from tests.conftest import process_group
from tests.passes.converters.test_registry_walk import _bind, _clone, one_node_graph

c10d = torch.ops._c10d_functional
GROUP_OF_4 = "tag=ptd:0;rank_list=0,1,2,3"


def _plain(op: Any) -> dict[str, Any]:
    return {k: v.to_json() for k, v in op.attrs.items()}


def _typed(target: Any, sample: Sample) -> tuple[list[tuple[str, dict[str, Any]]], Any]:
    gm, _ = one_node_graph(target, sample)
    result = convert_to_ascend_ir(gm, name="g")
    return [(op.type, _plain(op)) for op in result.graph.ops if op.type not in ("Data", "NetOutput", "Const")], result


def test_functional_collectives_become_torchairs_hcom_ops_with_its_group_name():
    x = torch.randn(4, 3)
    with process_group("fake", world_size=4):
        assert _typed(c10d.all_reduce.default, Sample((x, "sum", "0")))[0] == [
            ("HcomAllReduce", {"reduction": "sum", "group": GROUP_OF_4, "fusion": 0, "fusion_id": -1})
        ]
        assert _typed(c10d.all_gather_into_tensor.default, Sample((x, 4, "0")))[0] == [
            ("HcomAllGather", {"rank_size": 4, "group": GROUP_OF_4, "fusion": 0, "fusion_id": -1})
        ]
        assert _typed(c10d.reduce_scatter_tensor.default, Sample((x, "max", 4, "0")))[0] == [
            ("HcomReduceScatter", {"reduction": "max", "group": GROUP_OF_4, "rank_size": 4, "fusion": 0, "fusion_id": -1})
        ]
        assert _typed(c10d.broadcast.default, Sample((x, 2, "0")))[0] == [
            ("HcomBroadcast", {"root_rank": 2, "group": GROUP_OF_4, "fusion": 0, "fusion_id": -1})
        ]
        assert _typed(c10d.wait_tensor.default, Sample((x,)))[0] == [("Identity", {})]
        # The older namespace names the group by tag and ranks: TorchAir writes the tag as given.
        legacy = torch.ops.c10d_functional.all_reduce.default
        assert _typed(legacy, Sample((x, "sum", "", [0, 1, 2, 3], 4)))[0] == [
            ("HcomAllReduce", {"reduction": "sum", "group": "tag=;rank_list=0,1,2,3", "fusion": 0, "fusion_id": -1})
        ]


def test_reductions_are_named_as_ge_names_them_and_the_others_refused():
    assert [reduction_name(r) for r in ("sum", "MIN", "max", "product")] == ["sum", "min", "max", "prod"]
    with pytest.raises(ValueError, match="ge unsupported reduce type AVG"):
        reduction_name("avg")
    with process_group("fake", world_size=2):
        _, result = _typed(c10d.all_reduce.default, Sample((torch.randn(2), "avg", "0")))
    assert [n.status for n in result.nodes if n.target == "_c10d_functional.all_reduce.default"] == [Status.RAISED]


def test_all_to_all_even_and_uneven_and_the_ops_kept_to_the_end():
    x = torch.randn(8, 2)
    with process_group("fake", world_size=2), torchair_collectives():
        target = torch.ops.npu_define.all_to_all_single_npu.default
        even, _ = _typed(target, Sample((x, [8, 8], [0, 8], [8, 8], [0, 8], "ptd:0", [0, 1], 2)))
        uneven, result = _typed(target, Sample((x, [4, 12], [0, 4], [6, 10], [0, 6], "ptd:0", [0, 1], 2)))
    assert even == [("HcomAllToAll", {"group": "tag=ptd:0;rank_list=0,1"})]
    assert uneven == [("HcomAllToAllV", {"group": "tag=ptd:0;rank_list=0,1"})]
    a2a = result.graph.ops_of_type("HcomAllToAllV")[0]
    counts = [result.graph.op_by_name()[i.split(":")[0]].attr_value("value").to_torch().tolist() for i in a2a.inputs[1:]]
    assert counts == [[4, 12], [0, 4], [6, 10], [0, 6]]
    assert [d.name for d in a2a.input_desc] == ["send_data", "send_counts", "send_displacements", "recv_counts", "recv_displacements"]
    assert f"{a2a.name}:-1" in result.graph.op_by_name()["NetOutput"].inputs  # kept although nothing may read it


def test_send_and_receive_name_their_peer_by_its_group_rank():
    with process_group("fake", world_size=4), torchair_collectives():
        send, _ = _typed(torch.ops.npu_define._send.default, Sample((torch.randn(2, 3), 3, [0, 1, 2, 3], "ptd:0", 7, None, [2, 3])))
        recv, result = _typed(torch.ops.npu_define._recv.default, Sample((torch.zeros(2, 3), 2, [0, 1, 2, 3], "ptd:0", 7, None, [2, 3])))
    assert send == [("HcomSend", {"group": GROUP_OF_4, "sr_tag": 7, "dest_rank": 3, "_force_skip_prune": True})]
    assert recv == [("HcomReceive", {"group": GROUP_OF_4, "sr_tag": 7, "src_rank": 2, "shape": [2, 3], "dtype": "DT_FLOAT"})]
    assert not result.graph.ops_of_type("HcomReceive")[0].inputs


# Sends and receives need a peer: one process has none, the multi-rank tests run them.
NUMERIC = sorted(name for name in NPU_DEFINE_CONVERTERS if name not in ("_send.default", "_recv.default"))


@pytest.mark.parametrize("name", NUMERIC)
def test_npu_define_converters_compute_what_the_operator_computes(name: str) -> None:
    with process_group("gloo"), torchair_collectives():
        target = getattr(torch.ops.npu_define, name.split(".")[0]).default
        for sample in NPU_DEFINE_CONVERTERS[name][1]():
            gm, tensors = one_node_graph(target, sample)
            graph = convert_to_ascend_ir(gm, name="g").graph
            args, kwargs = _bind(sample, _clone(tensors))
            torch.testing.assert_close(execute(graph, _clone(tensors))[0], target(*args, **kwargs))
