class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[2, 8]", L_y_: "f32[2, 8]", L_self_buffers_state_: "f32[4, 8]"):
        l_x_ = L_x_
        l_y_ = L_y_
        l_self_buffers_state_ = L_self_buffers_state_

        # File: /tmp/fxlab-golden/examples/my_inplace.py:23 in forward, code: h = x * 2
        h: "f32[2, 8]" = l_x_ * 2

        # File: /tmp/fxlab-golden/examples/my_inplace.py:24 in forward, code: z = torch.ops.npu.my_inplace(h, y)  # on an intermediate
        z: "f32[2, 8]" = torch.ops.npu.my_inplace(h, l_y_)

        # File: /tmp/fxlab-golden/examples/my_inplace.py:25 in forward, code: w = torch.ops.npu.my_inplace(x, y)  # on a graph input
        w: "f32[2, 8]" = torch.ops.npu.my_inplace(l_x_, l_y_);  l_x_ = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:26 in forward, code: torch.ops.npu.my_inplace(self.state[:2], y)  # on a view of a buffer
        getitem: "f32[2, 8]" = l_self_buffers_state_[slice(None, 2, None)];  l_self_buffers_state_ = None
        my_inplace_2: "f32[2, 8]" = torch.ops.npu.my_inplace(getitem, l_y_);  getitem = l_y_ = my_inplace_2 = None

        # File: /tmp/fxlab-golden/examples/my_inplace.py:27 in forward, code: return h + z + w
        add: "f32[2, 8]" = h + z;  h = z = None
        add_1: "f32[2, 8]" = add + w;  add = w = None
        return (add_1,)
