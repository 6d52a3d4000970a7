"""Inference in TorchAir's quick-start style, written for an NPU machine.

    fxlab run -- python examples/programs/quickstart.py --batch 4

On a machine without an NPU, fxlab runs the npu device on the CPU.
"""

import argparse

import torch
import torch_npu  # noqa: F401 - registers the npu device and TorchAir's backends
import torchair
from torchair.configs.compiler_config import CompilerConfig


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 32)
        self.norm = torch.nn.LayerNorm(32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(self.proj(x))
        return torch.nn.functional.silu(y) + x.sum(dim=-1, keepdim=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=2)
    args = parser.parse_args()

    torch.npu.set_device(0)
    torch.manual_seed(0)
    model = Model().npu().eval()

    config = CompilerConfig()
    config.mode = "max-autotune"
    npu_backend = torchair.get_npu_backend(compiler_config=config)
    model = torch.compile(model, backend=npu_backend, dynamic=False)

    x = torch.randn(args.batch, 16).npu()
    with torch.no_grad():
        out = model(x)
    torch.npu.synchronize()
    print(f"batch {args.batch}: output {tuple(out.shape)}, sum {out.sum().item():.4f}")


if __name__ == "__main__":
    main()
