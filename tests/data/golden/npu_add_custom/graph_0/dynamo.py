class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_proj_parameters_weight_: "f32[16, 16]", L_self_modules_proj_parameters_bias_: "f32[16]", L_x_: "f32[4, 16]", L_y_: "f32[4, 16]"):
        l_self_modules_proj_parameters_weight_ = L_self_modules_proj_parameters_weight_
        l_self_modules_proj_parameters_bias_ = L_self_modules_proj_parameters_bias_
        l_x_ = L_x_
        l_y_ = L_y_

        # File: /tmp/fxlab-golden/examples/npu_add_custom.py:21 in forward, code: z = torch.ops.npu.npu_add_custom(self.proj(x), y)
        linear: "f32[4, 16]" = torch._C._nn.linear(l_x_, l_self_modules_proj_parameters_weight_, l_self_modules_proj_parameters_bias_);  l_x_ = l_self_modules_proj_parameters_weight_ = l_self_modules_proj_parameters_bias_ = None
        z: "f32[4, 16]" = torch.ops.npu.npu_add_custom(linear, l_y_);  linear = l_y_ = None

        # File: /tmp/fxlab-golden/examples/npu_add_custom.py:22 in forward, code: return torch.relu(z)
        relu: "f32[4, 16]" = torch.relu(z);  z = None
        return (relu,)
