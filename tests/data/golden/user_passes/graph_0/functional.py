class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[16, 8]", arg1_1: "f32[16]", arg2_1: "f32[4, 8]", arg3_1: "f32[8, 16]", arg4_1: "f32[8]"):
        # File: /tmp/fxlab-golden/examples/user_passes.py:38 in forward, code: h = self.up(x)
        t: "f32[8, 16]" = torch.ops.aten.t.default(arg0_1);  arg0_1 = None
        addmm: "f32[4, 16]" = torch.ops.aten.addmm.default(arg1_1, arg2_1, t);  arg1_1 = arg2_1 = t = None

        # File: /tmp/fxlab-golden/examples/user_passes.py:39 in forward, code: h = h * torch.sigmoid(h)  # swish by hand
        sigmoid: "f32[4, 16]" = torch.ops.aten.sigmoid.default(addmm)
        mul: "f32[4, 16]" = torch.ops.aten.mul.Tensor(addmm, sigmoid);  addmm = sigmoid = None

        # File: /tmp/fxlab-golden/examples/user_passes.py:40 in forward, code: return self.down(h) / 4
        t_1: "f32[16, 8]" = torch.ops.aten.t.default(arg3_1);  arg3_1 = None
        addmm_1: "f32[4, 8]" = torch.ops.aten.addmm.default(arg4_1, mul, t_1);  arg4_1 = mul = t_1 = None
        div: "f32[4, 8]" = torch.ops.aten.div.Tensor(addmm_1, 4);  addmm_1 = None
        return (div,)
