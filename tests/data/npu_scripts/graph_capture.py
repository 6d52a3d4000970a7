"""A script that captures an ACL graph, which only an NPU can do."""
import torch

torch.npu.set_device(0)
x = torch.ones(2, device="npu")
graph = torch.npu.NPUGraph()
