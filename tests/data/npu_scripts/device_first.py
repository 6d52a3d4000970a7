"""A model file that names the npu device before it uses torch.npu."""
import torch

x = torch.ones(2, device="npu")
