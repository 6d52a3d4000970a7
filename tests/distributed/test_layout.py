"""Which ranks are alike, and how ranks are written."""
from __future__ import annotations

from fxlab.capture.trace import GraphTrace, Trace
from fxlab.distributed.environment import calls_init_process_group, launched_rank
from fxlab.distributed.layout import exact_key, rank_groups, ranks_text, structure_key
from fxlab.ir.model import IrGraph, IrOp, TensorDesc, attr_of, DataType
import torch


def _trace(offset: int, rows: int = 4) -> Trace:
    const = IrOp("Const", "Const", [], {"value": attr_of(torch.tensor(offset)), "_readable_value": attr_of(str(offset))}, (), (TensorDesc("y", DataType.DT_INT64, ()),))
    sub = IrOp("Sub", "Sub", ["x:0", "Const:0"], {}, (), (TensorDesc("y", DataType.DT_INT64, (rows,)),))
    trace = Trace(model="m.py", entry="e", fxlab_version="0", torch_version="0")
    trace.graphs.append(GraphTrace(index=0, ir=IrGraph("g", [const, sub])))
    return trace


def test_ranks_differing_only_in_constants_are_alike_in_structure():
    a, b, c = _trace(0), _trace(64), _trace(0, rows=5)
    assert structure_key(a) == structure_key(b) != structure_key(c)
    assert exact_key(a) != exact_key(b)
    assert rank_groups({0: structure_key(a), 1: structure_key(b), 2: structure_key(c), 3: structure_key(a)}) == [[0, 1, 3], [2]]


def _all_reduce_in(group: str, rows: int = 4) -> Trace:
    reduce = IrOp("HcomAllReduce", "HcomAllReduce", ["x:0"], {"group": attr_of(group), "reduction": attr_of("sum")}, (), (TensorDesc("y", DataType.DT_FLOAT, (rows,)),))
    trace = Trace(model="m.py", entry="e", fxlab_version="0", torch_version="0")
    trace.graphs.append(GraphTrace(index=0, ir=IrGraph("g", [reduce])))
    return trace


def test_ranks_in_different_process_groups_are_alike_in_structure():
    # Tensor parallel inside data parallel: ranks 0,2 reduce in one group, 1,3 in another.
    even, odd = _all_reduce_in("tag=ptd:3;rank_list=0,2"), _all_reduce_in("tag=ptd:4;rank_list=1,3")
    assert structure_key(even) == structure_key(odd) != structure_key(_all_reduce_in("tag=ptd:3;rank_list=0,2", rows=5))
    assert exact_key(even) != exact_key(odd)


def test_ranks_text():
    assert [ranks_text(r) for r in ([0, 1, 2, 3], [0, 1], [2], [0, 2, 3])] == ["0-3", "0-1", "2", "0, 2, 3"]


def test_launched_rank_and_the_model_files_own_init(tmp_path):
    assert launched_rank({}) is None
    assert launched_rank({"RANK": "1", "WORLD_SIZE": "4"}) is None  # no rendezvous address: not a launcher's worker
    env = launched_rank({"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1"})
    assert (env.rank, env.world_size, env.local_rank, env.local_world_size) == (1, 4, 1, 2)
    own, plain = tmp_path / "own.py", tmp_path / "plain.py"
    own.write_text("import torch.distributed as dist\ndist.init_process_group (backend='gloo')\n")
    plain.write_text("import torch.distributed as dist\nrank = dist.get_rank()\n")
    assert calls_init_process_group(own) and not calls_init_process_group(plain)
