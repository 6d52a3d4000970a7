"""A model whose TorchAir config carries the user's own FX pass.

    fxlab trace examples/user_passes.py
    fxlab trace examples/user_passes.py --mode reduce-overhead
    fxlab trace examples/user_passes.py --plugin examples/plugins/swish_fusion.py

``compiler_config`` (module level, as a model script builds it for
``torchair.get_npu_backend``) sets ``post_grad_custom_post_pass``: TorchAir runs it last
among its FX passes, in both modes, as ``fn(gm, example_inputs, config)``. This one
rewrites each division by a number into a multiplication by its inverse. The trace lists
it as the user's pass with the nodes it changed, and runs the graph before and after it
on the traced inputs: a pass that changes the results makes the trace partial, naming it.
The swish written by hand (``h * sigmoid(h)``) is what examples/plugins/swish_fusion.py
fuses.
"""
import torch
import torchair


def divide_by_multiplying(gm, example_inputs, config):
    for node in gm.graph.nodes:
        if node.target is torch.ops.aten.div.Tensor and isinstance(node.args[1], (int, float)):
            node.target = torch.ops.aten.mul.Tensor
            node.args = (node.args[0], 1.0 / node.args[1])


compiler_config = torchair.CompilerConfig()
compiler_config.post_grad_custom_post_pass = divide_by_multiplying


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(8, 16)
        self.down = torch.nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.up(x)
        h = h * torch.sigmoid(h)  # swish by hand
        return self.down(h) / 4


torch.manual_seed(0)
model = Mlp()
example_inputs = (torch.randn(4, 8),)
