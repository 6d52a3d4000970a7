# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[16, 16], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[16], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[4, 16], node_name="arg2_1")
arg3_1_0 = ge.Data(index=3, dtype=0, shape=[4, 16], node_name="arg3_1")

# File "/tmp/fxlab-golden/examples/npu_add_custom.py", line 21, in forward    z = torch.ops.npu.npu_add_custom(self.proj(x), y)                                     ^^^^^^^^^^^^^^^^
## FX Code: addmm: torch.float32[4, 16]cpu = torch.ops.aten.addmm.default(arg1_1: torch.float32[16]cpu, arg2_1: torch.float32[4, 16]cpu, permute_default: torch.float32[16, 16]cpu)
Transpose_0 = ge.Transpose(arg0_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose")
MatMulV2_0 = ge.MatMulV2(arg2_1_0, Transpose_0, None, None, transpose_x1=False, transpose_x2=False, offset_x=0, node_name="MatMulV2")
Mul_0 = ge.Mul(MatMulV2_0, ge.Const(1, dtype=0), node_name="Mul")
Add_0 = ge.Add(Mul_0, arg1_1_0, node_name="Add")

# File "/tmp/fxlab-golden/examples/npu_add_custom.py", line 21, in forward    z = torch.ops.npu.npu_add_custom(self.proj(x), y)        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: npu_add_custom: torch.float32[4, 16]cpu = torch.ops.npu.npu_add_custom.default(addmm: torch.float32[4, 16]cpu, arg3_1: torch.float32[4, 16]cpu)
AddCustom_0 = ge.AddCustom(Add_0, arg3_1_0, node_name="AddCustom")  # _inference_rule="{\n  \"shape\": {\n    \"inputs\": [\n      null,\n      null\n    ],\n    \"outputs\": [\n      [\n        \"4\",\n        \"16\"\n      ]\n    ]\n  },\n  \"dtype\": [\n    0\n  ]\n}"

# File "/tmp/fxlab-golden/examples/npu_add_custom.py", line 22, in forward    return torch.relu(z)           ^^^^^^^^^^^^^
## FX Code: relu: torch.float32[4, 16]cpu = torch.ops.aten.relu.default(npu_add_custom: torch.float32[4, 16]cpu)
Relu_0 = ge.Relu(AddCustom_0, node_name="Relu")

_ = ge.NetOutput([Relu_0])
