class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[16, 8]", arg1_1: "f32[16]", arg2_1: "f32[4, 8]", arg3_1: "f32[8, 16]", arg4_1: "f32[8]"):
        # File: /tmp/fxlab-golden/examples/user_passes.py:38 in forward, code: h = self.up(x)
        permute_default: "f32[8, 16]" = torch.ops.aten.permute.default(arg0_1, [1, 0]);  arg0_1 = None
        addmm: "f32[4, 16]" = torch.ops.aten.addmm.default(arg1_1, arg2_1, permute_default);  arg1_1 = arg2_1 = permute_default = None

        # File: /tmp/fxlab-golden/examples/user_passes.py:39 in forward, code: h = h * torch.sigmoid(h)  # swish by hand
        sigmoid: "f32[4, 16]" = torch.ops.aten.sigmoid.default(addmm)
        mul: "f32[4, 16]" = torch.ops.aten.mul.Tensor(addmm, sigmoid);  addmm = sigmoid = None

        # File: /tmp/fxlab-golden/examples/user_passes.py:40 in forward, code: return self.down(h) / 4
        permute_default_1: "f32[16, 8]" = torch.ops.aten.permute.default(arg3_1, [1, 0]);  arg3_1 = None
        addmm_1: "f32[4, 8]" = torch.ops.aten.addmm.default(arg4_1, mul, permute_default_1);  arg4_1 = mul = permute_default_1 = None
        div: "f32[4, 8]" = torch.ops.aten.mul.Tensor(addmm_1, 0.25);  addmm_1 = None
        return (div,)
