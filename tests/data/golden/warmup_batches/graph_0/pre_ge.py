class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[16]", arg1_1: "f32[16]", arg2_1: "f32[2, 4, 16]", arg3_1: "f32[32, 16]", arg4_1: "f32[32]", arg5_1: "f32[16, 32]", arg6_1: "f32[16]"):
        # File: /tmp/fxlab-golden/examples/warmup_batches.py:29 in forward, code: return x + self.down(torch.nn.functional.silu(self.up(self.norm(x))))
        native_layer_norm = torch.ops.aten.native_layer_norm.default(arg2_1, [16], arg0_1, arg1_1, 1e-05);  arg0_1 = arg1_1 = None
        getitem: "f32[2, 4, 16]" = native_layer_norm[0];  native_layer_norm = None
        reshape_default: "f32[8, 16]" = torch.ops.aten.reshape.default(getitem, [8, 16]);  getitem = None
        permute_default: "f32[16, 32]" = torch.ops.aten.permute.default(arg3_1, [1, 0]);  arg3_1 = None
        addmm: "f32[8, 32]" = torch.ops.aten.addmm.default(arg4_1, reshape_default, permute_default);  arg4_1 = reshape_default = permute_default = None
        reshape_default_1: "f32[2, 4, 32]" = torch.ops.aten.reshape.default(addmm, [2, 4, 32]);  addmm = None
        silu: "f32[2, 4, 32]" = torch.ops.aten.silu.default(reshape_default_1);  reshape_default_1 = None
        reshape_default_2: "f32[8, 32]" = torch.ops.aten.reshape.default(silu, [8, 32]);  silu = None
        permute_default_1: "f32[32, 16]" = torch.ops.aten.permute.default(arg5_1, [1, 0]);  arg5_1 = None
        addmm_1: "f32[8, 16]" = torch.ops.aten.addmm.default(arg6_1, reshape_default_2, permute_default_1);  arg6_1 = reshape_default_2 = permute_default_1 = None
        reshape_default_3: "f32[2, 4, 16]" = torch.ops.aten.reshape.default(addmm_1, [2, 4, 16]);  addmm_1 = None
        add: "f32[2, 4, 16]" = torch.ops.aten.add.Tensor(arg2_1, reshape_default_3);  arg2_1 = reshape_default_3 = None
        return (add,)
