# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[16, 16], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[16], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[3, 16], node_name="arg2_1")

# File "/tmp/fxlab-golden/examples/graph_break.py", line 18, in forward    h = torch.relu(self.fc1(x))                   ^^^^^^^^^^^^
## FX Code: addmm: torch.float32[3, 16]cpu = torch.ops.aten.addmm.default(arg1_1: torch.float32[16]cpu, arg2_1: torch.float32[3, 16]cpu, permute_default: torch.float32[16, 16]cpu)
Transpose_0 = ge.Transpose(arg0_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose")
MatMulV2_0 = ge.MatMulV2(arg2_1_0, Transpose_0, None, None, transpose_x1=False, transpose_x2=False, offset_x=0, node_name="MatMulV2")
Mul_0 = ge.Mul(MatMulV2_0, ge.Const(1, dtype=0), node_name="Mul")
Add_0 = ge.Add(Mul_0, arg1_1_0, node_name="Add")

# File "/tmp/fxlab-golden/examples/graph_break.py", line 18, in forward    h = torch.relu(self.fc1(x))        ^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: relu: torch.float32[3, 16]cpu = torch.ops.aten.relu.default(addmm: torch.float32[3, 16]cpu)
Relu_0 = ge.Relu(Add_0, node_name="Relu")

# File "/tmp/fxlab-golden/examples/graph_break.py", line 19, in forward    scale = h.abs().max().item()  # graph break: data-dependent Python value            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: abs_1: torch.float32[3, 16]cpu = torch.ops.aten.abs.default(relu: torch.float32[3, 16]cpu)
Abs_0 = ge.Abs(Relu_0, node_name="Abs")
## FX Code: max_1: torch.float32[]cpu = torch.ops.aten.max.default(abs_1: torch.float32[3, 16]cpu)
ReduceMax_0 = ge.ReduceMax(Abs_0, ge.Const([0, 1], dtype=9), keep_dims=False, node_name="ReduceMax")

_ = ge.NetOutput([ReduceMax_0, Relu_0])
