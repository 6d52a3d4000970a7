import torch
import torchair


@torchair.register_fx_node_ge_converter(torch.ops.npu.my_op.default)
def first(x, y, z, attr1, attr2):
    return torchair.ge.custom_op("MyOp", x, y, z, attr1, attr2)


@torchair.register_fx_node_ge_converter(torch.ops.npu.my_op.default)
def second(x, y, z, attr1, attr2):
    return torchair.ge.custom_op("MyOp", x, y, z, attr1, attr2)
