import torch
import torch_npu
import torchair
from torch.library import Library
m = Library("npu", "IMPL", "Meta")  # 获取my_op算子所在的算子库

# 实现PyTorch算子的Meta推导
@torch.library.impl(m, "my_op")
def my_op_meta(x, y, z, attr1, attr2):
    return torch.empty_like(x)
# 仅当需要使用max-autotune模式，且对应Ascend C算子以算子工程开发时需要
@torchair.register_fx_node_ge_converter(torch.ops.npu.my_op.default)
def convert_npu_my_op(x, y, z, attr1, attr2):
    return torchair.ge.custom_op("MyOp", x, y, z, attr1, attr2)    
