# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[3, 16], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[4, 16], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[4], node_name="arg2_1")

# File "/tmp/fxlab-golden/examples/graph_break.py", line 20, in torch_dynamo_resume_in_forward_at_19    return self.fc2(h / (scale + 1.0))                    ^^^^^^^^^^^^^^^^^^
## FX Code: div: torch.float32[3, 16]cpu = torch.ops.aten.div.Tensor(arg0_1: torch.float32[3, 16]cpu, 2.475034475326538)
RealDiv_0 = ge.RealDiv(arg0_1_0, ge.Const(2.475034475326538, dtype=0), node_name="RealDiv")

# File "/tmp/fxlab-golden/examples/graph_break.py", line 20, in torch_dynamo_resume_in_forward_at_19    return self.fc2(h / (scale + 1.0))           ^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: addmm: torch.float32[3, 4]cpu = torch.ops.aten.addmm.default(arg2_1: torch.float32[4]cpu, div: torch.float32[3, 16]cpu, permute_default: torch.float32[16, 4]cpu)
Transpose_0 = ge.Transpose(arg1_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose")
MatMulV2_0 = ge.MatMulV2(RealDiv_0, Transpose_0, None, None, transpose_x1=False, transpose_x2=False, offset_x=0, node_name="MatMulV2")
Mul_0 = ge.Mul(MatMulV2_0, ge.Const(1, dtype=0), node_name="Mul")
Add_0 = ge.Add(Mul_0, arg2_1_0, node_name="Add")

_ = ge.NetOutput([Add_0])
