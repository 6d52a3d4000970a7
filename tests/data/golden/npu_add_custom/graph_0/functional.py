class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[16, 16]", arg1_1: "f32[16]", arg2_1: "f32[4, 16]", arg3_1: "f32[4, 16]"):
        # File: /tmp/fxlab-golden/examples/npu_add_custom.py:21 in forward, code: z = torch.ops.npu.npu_add_custom(self.proj(x), y)
        t: "f32[16, 16]" = torch.ops.aten.t.default(arg0_1);  arg0_1 = None
        addmm: "f32[4, 16]" = torch.ops.aten.addmm.default(arg1_1, arg2_1, t);  arg1_1 = arg2_1 = t = None
        npu_add_custom: "f32[4, 16]" = torch.ops.npu.npu_add_custom.default(addmm, arg3_1);  addmm = arg3_1 = None

        # File: /tmp/fxlab-golden/examples/npu_add_custom.py:22 in forward, code: return torch.relu(z)
        relu: "f32[4, 16]" = torch.ops.aten.relu.default(npu_add_custom);  npu_add_custom = None
        return (relu,)
