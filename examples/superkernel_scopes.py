"""SuperKernel scopes and core-count limits, written against the TorchAir API.

Run ``fxlab scopes examples/superkernel_scopes.py --soc Ascend910B1`` to see which GE ops
each scope covers, where the scopes split, and which core limit every op runs with. On an
Ascend machine the same file runs under the real TorchAir (max-autotune / GE mode).
"""
import torch

import torchair

# Global core limit for the whole graph: 20 AI Cores, 40 Vector Cores (op-level wins).
compiler_config = torchair.CompilerConfig()
compiler_config.ge_config.aicore_num = "20|40"
npu_backend = torchair.get_npu_backend(compiler_config=compiler_config)


class Block(torch.nn.Module):
    """A small MLP-style block with its ops grouped into SuperKernel scopes."""

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.up = torch.nn.Linear(dim, 2 * dim)
        self.down = torch.nn.Linear(2 * dim, dim)
        self.scale = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        with torchair.scope.super_kernel("mlp", "stream-fusion=1:feed-sync-all=1"):
            h = self.up(x)
            # the activation gets at most 8 AI Cores / 16 Vector Cores, still inside "mlp"
            with torchair.scope.limit_core_num(8, 16):
                h = torch.nn.functional.silu(h)
            # a hole: these ops stay out of every SuperKernel, so "mlp" splits here
            with torchair.scope.super_kernel(None):
                h = h * 0.5
            h = self.down(h)
        # outside any scope: runs with the global 20|40 limit
        y = h + residual
        with torchair.scope.super_kernel("norm", "debug-aic-num=12:debug-aiv-num=24"):
            y = y * self.scale
            y = y + 1.0
        return y


model = Block()
example_inputs = (torch.randn(4, 16), torch.randn(4, 16))

if __name__ == "__main__":
    compiled = torch.compile(model, backend=npu_backend, dynamic=False)
    print(compiled(*example_inputs).shape)
