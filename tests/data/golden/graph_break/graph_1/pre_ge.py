class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[3, 16]", arg1_1: "f32[4, 16]", arg2_1: "f32[4]"):
        # File: /tmp/fxlab-golden/examples/graph_break.py:20 in torch_dynamo_resume_in_forward_at_19, code: return self.fc2(h / (scale + 1.0))
        div: "f32[3, 16]" = torch.ops.aten.div.Tensor(arg0_1, 2.475034475326538);  arg0_1 = None
        permute_default: "f32[16, 4]" = torch.ops.aten.permute.default(arg1_1, [1, 0]);  arg1_1 = None
        addmm: "f32[3, 4]" = torch.ops.aten.addmm.default(arg2_1, div, permute_default);  arg2_1 = div = permute_default = None
        return (addmm,)
