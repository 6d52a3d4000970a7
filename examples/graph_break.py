"""A model with a graph break: Dynamo captures two graphs.

    fxlab trace examples/graph_break.py

``.item()`` turns a tensor into a Python number, which Dynamo cannot keep in the graph
(by default), so it compiles the code before it as graph 0 and the rest as graph 1.
"""
import torch


class BreakingModel(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        scale = h.abs().max().item()  # graph break: data-dependent Python value
        return self.fc2(h / (scale + 1.0))


torch.manual_seed(0)
model = BreakingModel()
example_inputs = (torch.randn(3, 16),)
