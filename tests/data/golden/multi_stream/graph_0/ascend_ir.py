# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[16, 16], node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[4, 16], node_name="arg1_1")
arg2_1_0 = ge.Data(index=2, dtype=0, shape=[16, 16], node_name="arg2_1")

# File "/tmp/fxlab-golden/examples/multi_stream.py", line 26, in forward    main = torch.relu(x @ self.w_main)                      ^^^^^^^^^^^^^^^^
## FX Code: mm: torch.float32[4, 16]cpu = torch.ops.aten.mm.default(arg1_1: torch.float32[4, 16]cpu, arg0_1: torch.float32[16, 16]cpu)
MatMul_0 = ge.MatMul(arg1_1_0, arg0_1_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul")  # _op_aicore_num="16", _op_vectorcore_num="32"

# File "/tmp/fxlab-golden/examples/multi_stream.py", line 26, in forward    main = torch.relu(x @ self.w_main)           ^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: relu: torch.float32[4, 16]cpu = torch.ops.aten.relu.default(mm: torch.float32[4, 16]cpu)
Relu_0 = ge.Relu(MatMul_0, node_name="Relu")  # _op_aicore_num="16", _op_vectorcore_num="32"

# File "/tmp/fxlab-golden/examples/multi_stream.py", line 28, in forward    side = torch.sigmoid(x @ self.w_side)  # on the user stream "side"                         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: mm_1: torch.float32[4, 16]cpu = torch.ops.aten.mm.default(arg1_1: torch.float32[4, 16]cpu, arg2_1: torch.float32[16, 16]cpu)
MatMul_1_0 = ge.MatMul(arg1_1_0, arg2_1_0, None, transpose_x1=False, transpose_x2=False, node_name="MatMul_1")  # _op_aicore_num="16", _op_vectorcore_num="32", _user_stream_label="side", _user_stream_priority="0", _enable_inner_parallel=True

# File "/tmp/fxlab-golden/examples/multi_stream.py", line 28, in forward    side = torch.sigmoid(x @ self.w_side)  # on the user stream "side"           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
## FX Code: sigmoid: torch.float32[4, 16]cpu = torch.ops.aten.sigmoid.default(mm_1: torch.float32[4, 16]cpu)
Sigmoid_0 = ge.Sigmoid(MatMul_1_0, node_name="Sigmoid")  # _op_aicore_num="16", _op_vectorcore_num="32", _user_stream_label="side", _user_stream_priority="0", _enable_inner_parallel=True

# File "/tmp/fxlab-golden/examples/multi_stream.py", line 29, in forward    main = main * 2           ^^^^^^^^
## FX Code: mul: torch.float32[4, 16]cpu = torch.ops.aten.mul.Tensor(relu: torch.float32[4, 16]cpu, 2)
Mul_0 = ge.Mul(Relu_0, ge.Const(2, dtype=0), node_name="Mul")  # _op_aicore_num="16", _op_vectorcore_num="32"
Cast_0 = ge.Cast(Mul_0, dst_type=0, node_name="Cast")  # _op_aicore_num="16", _op_vectorcore_num="32"

# File "/tmp/fxlab-golden/examples/multi_stream.py", line 30, in forward    return main + side           ^^^^^^^^^^^
## FX Code: add: torch.float32[4, 16]cpu = torch.ops.aten.add.Tensor(mul: torch.float32[4, 16]cpu, sigmoid: torch.float32[4, 16]cpu)
Add_0 = ge.Add(Cast_0, Sigmoid_0, node_name="Add")

_ = ge.NetOutput([Add_0])
