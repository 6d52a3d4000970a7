"""Two ranks started with ``torch.multiprocessing.spawn``, each joining an HCCL process
group and compiling its slice of a column-parallel layer with the ``"npu"`` backend; the
ranks' outputs meet in an all_gather.

    python examples/programs/spawn_ranks.py
    fxlab run -- python examples/programs/spawn_ranks.py

Without an NPU, fxlab runs each rank on the CPU and makes the HCCL group with gloo.
"""

import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch_npu  # noqa: F401 - the npu device, HCCL, the "npu" backend

WORLD, DIM = 2, 8


class ColumnParallel(torch.nn.Module):
    def __init__(self, rank: int) -> None:
        super().__init__()
        torch.manual_seed(0)
        full = torch.randn(2 * DIM, DIM)
        self.weight = torch.nn.Parameter(full.chunk(WORLD, dim=0)[rank].clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        local = torch.nn.functional.linear(x, self.weight)
        gathered = [torch.empty_like(local) for _ in range(WORLD)]
        dist.all_gather(gathered, local)
        return torch.cat(gathered, dim=-1)


def rank_main(rank: int, port: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    torch.npu.set_device(rank)
    dist.init_process_group("hccl", rank=rank, world_size=WORLD)
    model = torch.compile(ColumnParallel(rank).npu(), backend="npu")
    with torch.no_grad():
        out = model(torch.ones(2, DIM).npu())
    # One write per line: the ranks print at the same time into one pipe.
    sys.stdout.write(f"rank {rank}: {tuple(out.shape)}\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    from torch.distributed.elastic.utils.distributed import get_free_port

    mp.spawn(rank_main, args=(str(get_free_port()),), nprocs=WORLD)
