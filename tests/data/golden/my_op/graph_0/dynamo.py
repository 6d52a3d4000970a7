class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[2, 8]", L_y_: "f32[2, 8]", L_z0_: "f32[2, 8]", L_z1_: "f32[2, 8]"):
        l_x_ = L_x_
        l_y_ = L_y_
        l_z0_ = L_z0_
        l_z1_ = L_z1_

        # File: /tmp/fxlab-golden/examples/my_op.py:17 in forward, code: with_y = torch.ops.npu.my_op(x, y, [z0, z1], 0.5, 2)
        with_y: "f32[2, 8]" = torch.ops.npu.my_op(l_x_, l_y_, [l_z0_, l_z1_], 0.5, 2);  l_y_ = l_z1_ = None

        # File: /tmp/fxlab-golden/examples/my_op.py:18 in forward, code: without_y = torch.ops.npu.my_op(x, None, [z0], 1.5, 1)
        without_y: "f32[2, 8]" = torch.ops.npu.my_op(l_x_, None, [l_z0_], 1.5, 1);  l_x_ = l_z0_ = None

        # File: /tmp/fxlab-golden/examples/my_op.py:19 in forward, code: return with_y + without_y
        add: "f32[2, 8]" = with_y + without_y;  with_y = without_y = None
        return (add,)
