import torch


class Residual(torch.nn.Module):
    def forward(self, x, y):
        return torch.ops.mylib.scale_add(x, y, 0.5).relu()


model = Residual().eval()
example_inputs = (torch.randn(4, 8), torch.randn(4, 8))
