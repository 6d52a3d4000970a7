"""A serving warm-up: one model called at batch sizes 2, 4 and 8, in that order.

    fxlab trace examples/warmup_batches.py

Dynamo compiles graph 0 for the first call with every size fixed. The second call's batch
of 4 fails graph 0's guard on the batch dim, so Dynamo compiles again (graph 1), this time
with the batch dim symbolic (its automatic dynamic shapes); the third call, a batch of 8,
reuses graph 1. fxlab lists each call with the graphs it ran and why graph 1 was compiled
(the failed guard, in plain words and as Dynamo wrote it), checks every call against eager
and runs each graph's Ascend IR on the inputs of each call that ran it.

Several input sets are given as ``example_inputs_list`` (or an entry function returning
``(model, [inputs_1, inputs_2, ...])``); ``compile_options = {"dynamic": True}`` or
``fxlab trace --dynamic`` would compile one dynamic graph from the first call on.
"""
import torch


class FeedForward(torch.nn.Module):
    """A pre-norm feed-forward block, as in a decoder layer."""

    def __init__(self, hidden: int = 16, inner: int = 32) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(hidden)
        self.up = torch.nn.Linear(hidden, inner)
        self.down = torch.nn.Linear(inner, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.nn.functional.silu(self.up(self.norm(x))))


torch.manual_seed(0)
model = FeedForward().eval()
example_inputs_list = [(torch.randn(batch, 4, 16),) for batch in (2, 4, 8)]
