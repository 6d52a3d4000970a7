# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[16], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[16], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[2, 4, 16], node_name="arg2_1")
arg3_1_0 = ge.Data(index=3, dtype=0, shape=[32, 16], node_name="arg3_1")
arg4_1_0 = ge.Data(index=4, dtype=0, shape=[32], node_name="arg4_1")
arg5_1_0 = ge.Data(index=5, dtype=0, shape=[16, 32], node_name="arg5_1")
arg6_1_0 = ge.Data(index=6, dtype=0, shape=[16], node_name="arg6_1")

# File "/tmp/fxlab-golden/examples/warmup_batches.py", line 29, in forward    return x + self.down(torch.nn.functional.silu(self.up(self.norm(x))))                                                          ^^^^^^^^^^^^^^^
## FX Code: native_layer_norm = torch.ops.aten.native_layer_norm.default(arg2_1: torch.float32[2, 4, 16]cpu, [16], arg0_1: torch.float32[16]cpu, arg1_1: torch.float32[16]cpu, 1e-05)
LayerNormV4_0, LayerNormV4_1, LayerNormV4_2 = ge.LayerNormV4(arg2_1_0, ge.Const([16], dtype=9), arg0_1_0, arg1_1_0, epsilon=1e-05, node_name="LayerNormV4")

# File "/tmp/fxlab-golden/examples/warmup_batches.py", line 29, in forward    return x + self.down(torch.nn.functional.silu(self.up(self.norm(x))))                                                  ^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: addmm: torch.float32[8, 32]cpu = torch.ops.aten.addmm.default(arg4_1: torch.float32[32]cpu, reshape_default: torch.float32[8, 16]cpu, permute_default: torch.float32[16, 32]cpu)
Reshape_0 = ge.Reshape(LayerNormV4_0, ge.Const([8, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape")
Transpose_0 = ge.Transpose(arg3_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose")
MatMulV2_0 = ge.MatMulV2(Reshape_0, Transpose_0, None, None, transpose_x1=False, transpose_x2=False, offset_x=0, node_name="MatMulV2")
Mul_0 = ge.Mul(MatMulV2_0, ge.Const(1, dtype=0), node_name="Mul")
Add_0 = ge.Add(Mul_0, arg4_1_0, node_name="Add")

# File "/tmp/fxlab-golden/examples/warmup_batches.py", line 29, in forward    return x + self.down(torch.nn.functional.silu(self.up(self.norm(x))))                         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: silu: torch.float32[2, 4, 32]cpu = torch.ops.aten.silu.default(reshape_default_1: torch.float32[2, 4, 32]cpu)
Reshape_1_0 = ge.Reshape(Add_0, ge.Const([2, 4, 32], dtype=9), axis=0, num_axes=-1, node_name="Reshape_1")
Swish_0 = ge.Swish(Reshape_1_0, scale=1.0, node_name="Swish")

# File "/tmp/fxlab-golden/examples/warmup_batches.py", line 29, in forward    return x + self.down(torch.nn.functional.silu(self.up(self.norm(x))))               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: addmm_1: torch.float32[8, 16]cpu = torch.ops.aten.addmm.default(arg6_1: torch.float32[16]cpu, reshape_default_2: torch.float32[8, 32]cpu, permute_default_1: torch.float32[32, 16]cpu)
Reshape_2_0 = ge.Reshape(Swish_0, ge.Const([8, 32], dtype=9), axis=0, num_axes=-1, node_name="Reshape_2")
Transpose_1_0 = ge.Transpose(arg5_1_0, ge.Const([1, 0], dtype=9), node_name="Transpose_1")
MatMulV2_1_0 = ge.MatMulV2(Reshape_2_0, Transpose_1_0, None, None, transpose_x1=False, transpose_x2=False, offset_x=0, node_name="MatMulV2_1")
Mul_1_0 = ge.Mul(MatMulV2_1_0, ge.Const(1, dtype=0), node_name="Mul_1")
Add_1_0 = ge.Add(Mul_1_0, arg6_1_0, node_name="Add_1")

# File "/tmp/fxlab-golden/examples/warmup_batches.py", line 29, in forward    return x + self.down(torch.nn.functional.silu(self.up(self.norm(x))))           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: add: torch.float32[2, 4, 16]cpu = torch.ops.aten.add.Tensor(arg2_1: torch.float32[2, 4, 16]cpu, reshape_default_3: torch.float32[2, 4, 16]cpu)
Reshape_3_0 = ge.Reshape(Add_1_0, ge.Const([2, 4, 16], dtype=9), axis=0, num_axes=-1, node_name="Reshape_3")
Add_2_0 = ge.Add(arg2_1_0, Reshape_3_0, node_name="Add_2")

_ = ge.NetOutput([Add_2_0])
