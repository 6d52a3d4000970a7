class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[2, 8]", arg1_1: "f32[2, 8]", arg2_1: "f32[2, 8]", arg3_1: "f32[2, 8]"):
        # File: /tmp/fxlab-golden/examples/my_op.py:17 in forward, code: with_y = torch.ops.npu.my_op(x, y, [z0, z1], 0.5, 2)
        my_op: "f32[2, 8]" = torch.ops.npu.my_op.default(arg0_1, arg1_1, [arg2_1, arg3_1], 0.5, 2);  arg1_1 = arg3_1 = None

        # File: /tmp/fxlab-golden/examples/my_op.py:18 in forward, code: without_y = torch.ops.npu.my_op(x, None, [z0], 1.5, 1)
        my_op_1: "f32[2, 8]" = torch.ops.npu.my_op.default(arg0_1, None, [arg2_1], 1.5, 1);  arg0_1 = arg2_1 = None

        # File: /tmp/fxlab-golden/examples/my_op.py:19 in forward, code: return with_y + without_y
        add: "f32[2, 8]" = torch.ops.aten.add.Tensor(my_op, my_op_1);  my_op = my_op_1 = None
        return (add,)
