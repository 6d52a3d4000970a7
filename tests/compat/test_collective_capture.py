"""TorchAir's collective pieces while fxlab captures: its npu_define operators (defined,
with CPU kernels), its remap table entries and its all-to-all decomposition, all undone
when the block closes."""
from __future__ import annotations

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

from fxlab.capture.stages import COLLECTIVE_DECOMPOSITIONS, torchair_decompositions
from fxlab.compat.collective_remaps import torchair_collective_remaps
from fxlab.compat.collective_capture import torchair_collectives
from fxlab.compat.npu_define_ops import SCHEMAS, all_to_all_counts, npu_define_operators, operator
from tests.conftest import process_group


def test_the_operators_exist_with_torchairs_schemas_only_inside_the_block():
    assert operator("broadcast") is None
    with npu_define_operators() as defined:
        assert sorted(defined) == sorted(SCHEMAS)
        schema = str(operator("all_to_all_single_npu")._schema)
        assert schema.startswith("npu_define::all_to_all_single_npu(Tensor input, SymInt[] send_counts, SymInt[] send_displacements")
        assert torch.fx.node._side_effectful_functions & {operator("_send"), operator("_recv"), operator("all_to_all_single_npu")}
    assert operator("broadcast") is None


def test_cpu_kernels_run_the_collective_on_the_named_group():
    x = torch.arange(6.0).reshape(3, 2)
    with process_group("gloo"), npu_define_operators():
        ops = torch.ops.npu_define
        assert torch.equal(ops.broadcast(x, 0, "ptd:0", [0], 1), x)
        assert torch.equal(ops._allgather_in_tensor_shape(x, [3, 2], "ptd:0", [0], 1), x)
        assert torch.equal(ops.allgather_in_tensor_uneven(x, 3, [3], "ptd:0", [0], 1, []), x)
        assert torch.equal(ops.reduce_scatter_tensor_uneven(x, [3], 3, "max", "ptd:0", [0], 1, []), x)
        out = ops.all_to_all_single_npu(x, [6], [0], [6], [0], "ptd:0", [0], 1)
        assert torch.equal(out, x)


def test_all_to_all_counts_are_elements_with_their_displacements():
    x = torch.zeros(6, 4)
    assert all_to_all_counts(x, [1, 5], [2, 4], 2) == ([8, 16], [0, 8], [4, 20], [0, 4])
    assert all_to_all_counts(x, None, None, 2) == ([12, 12], [0, 12], [12, 12], [0, 12])


def test_torchairs_remaps_are_made_and_undone():
    table = funcol.traceable_collective_remaps
    before = dict(table)
    with torchair_collective_remaps() as made:
        assert made
        assert table[dist.broadcast].__name__ == "npu_broadcast_patch_dist"
        assert table[dist.all_to_all].__name__ == "npu_all_to_all_patch_dist"
        assert {table[dist.send].__name__, table[dist.recv].__name__} == {"npu_send_patch_dist", "npu_recv_patch_dist"}
        assert funcol.npu_broadcast_patch_dist is table[dist.broadcast]  # Dynamo finds it by its name
        assert table[dist.all_reduce] is before[dist.all_reduce]  # torch's own stay
    assert table == before and not hasattr(funcol, "npu_broadcast_patch_dist")


def test_outside_tracing_a_remapped_collective_is_the_collective():
    x = torch.ones(3)
    with process_group("gloo"), torchair_collectives():
        funcol.traceable_collective_remaps[dist.broadcast](x, src=0)
    assert torch.equal(x, torch.ones(3))


def test_dist_broadcast_and_all_to_all_single_compile_to_the_npu_define_operators():
    def f(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        dist.all_to_all_single(out, x)
        dist.broadcast(out, src=0)
        return out + 1

    from torch._functorch.aot_autograd import aot_module_simplified

    graphs = []

    def backend(gm, inputs):
        def keep(fw, _):
            graphs.append(fw)
            return fw

        return aot_module_simplified(gm, inputs, fw_compiler=keep, decompositions=torchair_decompositions())

    x = torch.arange(4.0)
    with process_group("gloo"), torchair_collectives():
        assert set(COLLECTIVE_DECOMPOSITIONS) == {torch.ops._c10d_functional.all_to_all_single.default}
        torch._dynamo.reset()
        assert torch.equal(torch.compile(f, backend=backend, fullgraph=True)(x), x + 1)
    assert not COLLECTIVE_DECOMPOSITIONS
    targets = [str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"]
    assert "npu_define.all_to_all_single_npu.default" in targets and "npu_define.broadcast.default" in targets


def test_torch_npus_uneven_collectives_are_remapped_where_torch_npu_has_them():
    from fxlab.compat.layer import compat_layer

    table = funcol.traceable_collective_remaps
    with compat_layer():
        import torch_npu.distributed as npu_dist

        with torchair_collective_remaps():
            assert table[npu_dist.all_gather_into_tensor_uneven].__name__ == "npu_allgather_into_tensor_uneven_patch_dist"
            assert table[npu_dist.reduce_scatter_tensor_uneven].__name__ == "npu_reduce_scatter_tensor_uneven_patch_dist"


def test_the_stand_ins_uneven_collectives_move_the_rows():
    from fxlab.compat.layer import compat_layer

    x = torch.arange(6.0).reshape(3, 2)
    with compat_layer(), process_group("gloo"):
        import torch_npu.distributed as npu_dist

        gathered = torch.empty(2, 2)
        npu_dist.all_gather_into_tensor_uneven(gathered, x, [2])
        scattered = torch.empty(3, 2)
        npu_dist.reduce_scatter_tensor_uneven(scattered, x, [3], dist.ReduceOp.MAX)
    assert torch.equal(gathered, x[:2]) and torch.equal(scattered, x)
