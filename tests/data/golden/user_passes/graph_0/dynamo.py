class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_up_parameters_weight_: "f32[16, 8]", L_self_modules_up_parameters_bias_: "f32[16]", L_x_: "f32[4, 8]", L_self_modules_down_parameters_weight_: "f32[8, 16]", L_self_modules_down_parameters_bias_: "f32[8]"):
        l_self_modules_up_parameters_weight_ = L_self_modules_up_parameters_weight_
        l_self_modules_up_parameters_bias_ = L_self_modules_up_parameters_bias_
        l_x_ = L_x_
        l_self_modules_down_parameters_weight_ = L_self_modules_down_parameters_weight_
        l_self_modules_down_parameters_bias_ = L_self_modules_down_parameters_bias_

        # File: /tmp/fxlab-golden/examples/user_passes.py:38 in forward, code: h = self.up(x)
        h: "f32[4, 16]" = torch._C._nn.linear(l_x_, l_self_modules_up_parameters_weight_, l_self_modules_up_parameters_bias_);  l_x_ = l_self_modules_up_parameters_weight_ = l_self_modules_up_parameters_bias_ = None

        # File: /tmp/fxlab-golden/examples/user_passes.py:39 in forward, code: h = h * torch.sigmoid(h)  # swish by hand
        sigmoid: "f32[4, 16]" = torch.sigmoid(h)
        h_1: "f32[4, 16]" = h * sigmoid;  h = sigmoid = None

        # File: /tmp/fxlab-golden/examples/user_passes.py:40 in forward, code: return self.down(h) / 4
        linear_1: "f32[4, 8]" = torch._C._nn.linear(h_1, l_self_modules_down_parameters_weight_, l_self_modules_down_parameters_bias_);  h_1 = l_self_modules_down_parameters_weight_ = l_self_modules_down_parameters_bias_ = None
        truediv: "f32[4, 8]" = linear_1 / 4;  linear_1 = None
        return (truediv,)
