class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_up_parameters_weight_: "f32[32, 16]", L_self_modules_up_parameters_bias_: "f32[32]", L_x_: "f32[4, 16]", L_self_modules_down_parameters_weight_: "f32[16, 32]", L_self_modules_down_parameters_bias_: "f32[16]", L_residual_: "f32[4, 16]", L_self_parameters_scale_: "f32[16]"):
        l_self_modules_up_parameters_weight_ = L_self_modules_up_parameters_weight_
        l_self_modules_up_parameters_bias_ = L_self_modules_up_parameters_bias_
        l_x_ = L_x_
        l_self_modules_down_parameters_weight_ = L_self_modules_down_parameters_weight_
        l_self_modules_down_parameters_bias_ = L_self_modules_down_parameters_bias_
        l_residual_ = L_residual_
        l_self_parameters_scale_ = L_self_parameters_scale_

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:27 in forward, code: with torchair.scope.super_kernel("mlp", "stream-fusion=1:feed-sync-all=1"):
        scope_enter = torch.ops.air.scope_enter(['_super_kernel_scope', '_super_kernel_options'], ['mlp', 'stream-fusion=1:feed-sync-all=1']);  scope_enter = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:28 in forward, code: h = self.up(x)
        h: "f32[4, 32]" = torch._C._nn.linear(l_x_, l_self_modules_up_parameters_weight_, l_self_modules_up_parameters_bias_);  l_x_ = l_self_modules_up_parameters_weight_ = l_self_modules_up_parameters_bias_ = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:30 in forward, code: with torchair.scope.limit_core_num(8, 16):
        scope_enter_1 = torch.ops.air.scope_enter(['_op_aicore_num', '_op_vectorcore_num'], ['8', '16']);  scope_enter_1 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:31 in forward, code: h = torch.nn.functional.silu(h)
        h_1: "f32[4, 32]" = torch.nn.functional.silu(h);  h = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:30 in forward, code: with torchair.scope.limit_core_num(8, 16):
        scope_exit = torch.ops.air.scope_exit();  scope_exit = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:33 in forward, code: with torchair.scope.super_kernel(None):
        scope_enter_2 = torch.ops.air.scope_enter(['_super_kernel_scope', '_super_kernel_options'], ['', '']);  scope_enter_2 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:34 in forward, code: h = h * 0.5
        h_2: "f32[4, 32]" = h_1 * 0.5;  h_1 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:33 in forward, code: with torchair.scope.super_kernel(None):
        scope_exit_1 = torch.ops.air.scope_exit();  scope_exit_1 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:35 in forward, code: h = self.down(h)
        h_3: "f32[4, 16]" = torch._C._nn.linear(h_2, l_self_modules_down_parameters_weight_, l_self_modules_down_parameters_bias_);  h_2 = l_self_modules_down_parameters_weight_ = l_self_modules_down_parameters_bias_ = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:27 in forward, code: with torchair.scope.super_kernel("mlp", "stream-fusion=1:feed-sync-all=1"):
        scope_exit_2 = torch.ops.air.scope_exit();  scope_exit_2 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:37 in forward, code: y = h + residual
        y: "f32[4, 16]" = h_3 + l_residual_;  h_3 = l_residual_ = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:38 in forward, code: with torchair.scope.super_kernel("norm", "debug-aic-num=12:debug-aiv-num=24"):
        scope_enter_3 = torch.ops.air.scope_enter(['_super_kernel_scope', '_super_kernel_options'], ['norm', 'debug-aic-num=12:debug-aiv-num=24']);  scope_enter_3 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:39 in forward, code: y = y * self.scale
        y_1: "f32[4, 16]" = y * l_self_parameters_scale_;  y = l_self_parameters_scale_ = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:40 in forward, code: y = y + 1.0
        y_2: "f32[4, 16]" = y_1 + 1.0;  y_1 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:38 in forward, code: with torchair.scope.super_kernel("norm", "debug-aic-num=12:debug-aiv-num=24"):
        scope_exit_3 = torch.ops.air.scope_exit();  scope_exit_3 = None
        return (y_2,)
