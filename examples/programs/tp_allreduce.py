"""A tensor-parallel MLP on HCCL, one rank per NPU, started by torchrun:

    torchrun --nproc-per-node 2 examples/programs/tp_allreduce.py
    fxlab run -- torchrun --nproc-per-node 2 examples/programs/tp_allreduce.py

Each rank keeps its slice of the weights (column-parallel up, row-parallel down); the
down projection's partial sums meet in ``dist.all_reduce``, which Dynamo traces as the
functional collective and TorchAir converts to ``HcomAllReduce``. Without an NPU, fxlab
runs each rank on the CPU and makes the HCCL process group with gloo.
"""

import os
import sys

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401 - the npu device and HCCL
import torchair

DIM, FFN = 16, 64


class ParallelMLP(torch.nn.Module):
    def __init__(self, rank: int, world: int) -> None:
        super().__init__()
        torch.manual_seed(0)  # the same full weights on every rank; each keeps its slice
        up, down = torch.randn(FFN, DIM) / DIM**0.5, torch.randn(DIM, FFN) / FFN**0.5
        self.up = torch.nn.Parameter(up.chunk(world, dim=0)[rank].clone())
        self.down = torch.nn.Parameter(down.chunk(world, dim=1)[rank].clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        partial = torch.nn.functional.linear(torch.relu(torch.nn.functional.linear(x, self.up)), self.down)
        dist.all_reduce(partial)
        return partial


def main() -> None:
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.npu.set_device(local_rank)
    dist.init_process_group("hccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    model = ParallelMLP(rank, world).npu().eval()
    compiled = torch.compile(model, backend=torchair.get_npu_backend(compiler_config=torchair.CompilerConfig()))
    x = torch.randn(4, DIM, generator=torch.Generator().manual_seed(1)).npu()
    with torch.no_grad():
        out = compiled(x)
    # One write per line: the ranks print at the same time into one pipe.
    sys.stdout.write(f"rank {rank}/{world}: sum {out.sum().item():.4f}\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
