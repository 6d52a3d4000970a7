class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_norm_parameters_weight_: "f32[16]", L_self_modules_norm_parameters_bias_: "f32[16]", s77: "Sym(s77)", L_x_: "f32[s77, 4, 16]", L_self_modules_up_parameters_weight_: "f32[32, 16]", L_self_modules_up_parameters_bias_: "f32[32]", L_self_modules_down_parameters_weight_: "f32[16, 32]", L_self_modules_down_parameters_bias_: "f32[16]"):
        l_self_modules_norm_parameters_weight_ = L_self_modules_norm_parameters_weight_
        l_self_modules_norm_parameters_bias_ = L_self_modules_norm_parameters_bias_
        l_x_ = L_x_
        l_self_modules_up_parameters_weight_ = L_self_modules_up_parameters_weight_
        l_self_modules_up_parameters_bias_ = L_self_modules_up_parameters_bias_
        l_self_modules_down_parameters_weight_ = L_self_modules_down_parameters_weight_
        l_self_modules_down_parameters_bias_ = L_self_modules_down_parameters_bias_

        # File: /tmp/fxlab-golden/examples/warmup_batches.py:29 in forward, code: return x + self.down(torch.nn.functional.silu(self.up(self.norm(x))))
        layer_norm: "f32[s77, 4, 16]" = torch.nn.functional.layer_norm(l_x_, (16,), l_self_modules_norm_parameters_weight_, l_self_modules_norm_parameters_bias_, 1e-05);  l_self_modules_norm_parameters_weight_ = l_self_modules_norm_parameters_bias_ = None
        linear: "f32[s77, 4, 32]" = torch._C._nn.linear(layer_norm, l_self_modules_up_parameters_weight_, l_self_modules_up_parameters_bias_);  layer_norm = l_self_modules_up_parameters_weight_ = l_self_modules_up_parameters_bias_ = None
        silu: "f32[s77, 4, 32]" = torch.nn.functional.silu(linear);  linear = None
        linear_1: "f32[s77, 4, 16]" = torch._C._nn.linear(silu, l_self_modules_down_parameters_weight_, l_self_modules_down_parameters_bias_);  silu = l_self_modules_down_parameters_weight_ = l_self_modules_down_parameters_bias_ = None
        add: "f32[s77, 4, 16]" = l_x_ + linear_1;  l_x_ = linear_1 = None
        return (add,)
