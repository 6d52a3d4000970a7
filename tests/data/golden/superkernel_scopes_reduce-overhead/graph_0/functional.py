class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[32, 16]", arg1_1: "f32[32]", arg2_1: "f32[4, 16]", arg3_1: "f32[16, 32]", arg4_1: "f32[16]", arg5_1: "f32[4, 16]", arg6_1: "f32[16]"):
        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:27 in forward, code: with torchair.scope.super_kernel("mlp", "stream-fusion=1:feed-sync-all=1"):
        scope_enter = torch.ops.air.scope_enter.default(['_super_kernel_scope', '_super_kernel_options'], ['mlp', 'stream-fusion=1:feed-sync-all=1']);  scope_enter = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:28 in forward, code: h = self.up(x)
        t: "f32[16, 32]" = torch.ops.aten.t.default(arg0_1);  arg0_1 = None
        addmm: "f32[4, 32]" = torch.ops.aten.addmm.default(arg1_1, arg2_1, t);  arg1_1 = arg2_1 = t = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:30 in forward, code: with torchair.scope.limit_core_num(8, 16):
        scope_enter_1 = torch.ops.air.scope_enter.default(['_op_aicore_num', '_op_vectorcore_num'], ['8', '16']);  scope_enter_1 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:31 in forward, code: h = torch.nn.functional.silu(h)
        silu: "f32[4, 32]" = torch.ops.aten.silu.default(addmm);  addmm = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:30 in forward, code: with torchair.scope.limit_core_num(8, 16):
        scope_exit = torch.ops.air.scope_exit.default();  scope_exit = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:33 in forward, code: with torchair.scope.super_kernel(None):
        scope_enter_2 = torch.ops.air.scope_enter.default(['_super_kernel_scope', '_super_kernel_options'], ['', '']);  scope_enter_2 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:34 in forward, code: h = h * 0.5
        mul: "f32[4, 32]" = torch.ops.aten.mul.Tensor(silu, 0.5);  silu = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:33 in forward, code: with torchair.scope.super_kernel(None):
        scope_exit_1 = torch.ops.air.scope_exit.default();  scope_exit_1 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:35 in forward, code: h = self.down(h)
        t_1: "f32[32, 16]" = torch.ops.aten.t.default(arg3_1);  arg3_1 = None
        addmm_1: "f32[4, 16]" = torch.ops.aten.addmm.default(arg4_1, mul, t_1);  arg4_1 = mul = t_1 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:27 in forward, code: with torchair.scope.super_kernel("mlp", "stream-fusion=1:feed-sync-all=1"):
        scope_exit_2 = torch.ops.air.scope_exit.default();  scope_exit_2 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:37 in forward, code: y = h + residual
        add: "f32[4, 16]" = torch.ops.aten.add.Tensor(addmm_1, arg5_1);  addmm_1 = arg5_1 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:38 in forward, code: with torchair.scope.super_kernel("norm", "debug-aic-num=12:debug-aiv-num=24"):
        scope_enter_3 = torch.ops.air.scope_enter.default(['_super_kernel_scope', '_super_kernel_options'], ['norm', 'debug-aic-num=12:debug-aiv-num=24']);  scope_enter_3 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:39 in forward, code: y = y * self.scale
        mul_1: "f32[4, 16]" = torch.ops.aten.mul.Tensor(add, arg6_1);  add = arg6_1 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:40 in forward, code: y = y + 1.0
        add_1: "f32[4, 16]" = torch.ops.aten.add.Tensor(mul_1, 1.0);  mul_1 = None

        # File: /tmp/fxlab-golden/examples/superkernel_scopes.py:38 in forward, code: with torchair.scope.super_kernel("norm", "debug-aic-num=12:debug-aiv-num=24"):
        scope_exit_3 = torch.ops.air.scope_exit.default();  scope_exit_3 = None
        return (add_1,)
