# Seed 003 (PytorchInvocation sample): its two code blocks, "注册自定义算子的meta实现" and
# "注册自定义算子converter", verbatim below. The first four lines are the imports the
# sample's full script (test_ops_custom_register_in_graph.py) has and the blocks rely on.
from typing import Any
import torch
import torch_npu
import torchair

from torch_npu.meta._meta_registrations import m
from torch.library import impl
@impl(m, "npu_add_custom")
def npu_add_custom_meta(x, y):
    return torch.empty_like(x)

from torchair import register_fx_node_ge_converter
from torchair.ge import Tensor
@register_fx_node_ge_converter(torch.ops.npu.npu_add_custom.default)
def convert_npu_add_custom(x: Tensor, y: Tensor, z: Tensor = None, meta_outputs: Any = None):
    return torchair.ge.custom_op(
        "AddCustom",
        inputs={
            "x": x,
            "y": y,
        },
        outputs=['z']
    )
