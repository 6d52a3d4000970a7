"""Two streams and a core limit, as TorchAir's aclgraph path runs them.

    fxlab trace examples/multi_stream.py --mode reduce-overhead
    fxlab scopes examples/multi_stream.py --mode reduce-overhead

The projection ``x @ w_side`` runs on the user stream ``side`` (``npu_stream_switch``),
inside a ``limit_core_num(16, 32)`` scope: in max-autotune mode every GE op inside gets
``_op_aicore_num=16`` / ``_op_vectorcore_num=32`` (and the stream label); on the aclgraph
path the limit is a stream limit set and restored around the scope, the switched-to
stream gets it too, and the ``side`` region is closed by events with the default stream.
Both streams then ask for 16 AI cores at once: 32 > the 24 of an Atlas A2 part, which
the trace warns about.
"""
import torch
import torchair


class TwoStreams(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w_main = torch.nn.Parameter(torch.randn(16, 16) * 0.1)
        self.w_side = torch.nn.Parameter(torch.randn(16, 16) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torchair.scope.limit_core_num(16, 32):
            main = torch.relu(x @ self.w_main)
            with torchair.scope.npu_stream_switch("side", 0):
                side = torch.sigmoid(x @ self.w_side)  # on the user stream "side"
            main = main * 2
        return main + side


torch.manual_seed(0)
model = TwoStreams()
example_inputs = (torch.randn(4, 16),)
