# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[16, 8], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[16], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[4, 8], node_name="arg2_1")
arg3_1_0 = ge.Data(index=3, dtype=0, shape=[8, 16], node_name="arg3_1")
arg4_1_0 = ge.Data(index=4, dtype=0, shape=[8], node_name="arg4_1")

# File "/tmp/fxlab-golden/examples/user_passes.py", line 38, in forward    h = self.up(x)        ^^^^^^^^^^
## FX Code: addmm: torch.float32[4, 16]cpu = torch.ops.aten.addmm.default(arg1_1: torch.float32[16]cpu, arg2_1: torch.float32[4, 8]cpu, permute_default: torch.float32[8, 16]cpu)
Transpose_0 = ge.Transpose(arg0_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose")
MatMulV2_0 = ge.MatMulV2(arg2_1_0, Transpose_0, None, None, transpose_x1=False, transpose_x2=False, offset_x=0, node_name="MatMulV2")
Mul_0 = ge.Mul(MatMulV2_0, ge.Const(1, dtype=0), node_name="Mul")
Add_0 = ge.Add(Mul_0, arg1_1_0, node_name="Add")

# File "/tmp/fxlab-golden/examples/user_passes.py", line 39, in forward    h = h * torch.sigmoid(h)  # swish by hand            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: sigmoid: torch.float32[4, 16]cpu = torch.ops.aten.sigmoid.default(addmm: torch.float32[4, 16]cpu)
Sigmoid_0 = ge.Sigmoid(Add_0, node_name="Sigmoid")

# File "/tmp/fxlab-golden/examples/user_passes.py", line 39, in forward    h = h * torch.sigmoid(h)  # swish by hand        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mul: torch.float32[4, 16]cpu = torch.ops.aten.mul.Tensor(addmm: torch.float32[4, 16]cpu, sigmoid: torch.float32[4, 16]cpu)
Mul_1_0 = ge.Mul(Add_0, Sigmoid_0, node_name="Mul_1")
Cast_0 = ge.Cast(Mul_1_0, dst_type=0, node_name="Cast")

# File "/tmp/fxlab-golden/examples/user_passes.py", line 40, in forward    return self.down(h) / 4           ^^^^^^^^^^^^^^^^
## FX Code: addmm_1: torch.float32[4, 8]cpu = torch.ops.aten.addmm.default(arg4_1: torch.float32[8]cpu, mul: torch.float32[4, 16]cpu, permute_default_1: torch.float32[16, 8]cpu)
Transpose_1_0 = ge.Transpose(arg3_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_1")
MatMulV2_1_0 = ge.MatMulV2(Cast_0, Transpose_1_0, None, None, transpose_x1=False, transpose_x2=False, offset_x=0, node_name="MatMulV2_1")
Mul_2_0 = ge.Mul(MatMulV2_1_0, ge.Const(1, dtype=0), node_name="Mul_2")
Add_1_0 = ge.Add(Mul_2_0, arg4_1_0, node_name="Add_1")
## FX Code: div: torch.float32[4, 8]cpu = torch.ops.aten.mul.Tensor(addmm_1: torch.float32[4, 8]cpu, 0.25)
Mul_3_0 = ge.Mul(Add_1_0, ge.Const(0.25, dtype=0), node_name="Mul_3")
Cast_1_0 = ge.Cast(Mul_3_0, dst_type=0, node_name="Cast_1")

_ = ge.NetOutput([Cast_1_0])
