class GraphModule(torch.nn.Module):
    def forward(self, L_self_parameters_w_main_: "f32[16, 16]", L_x_: "f32[4, 16]", L_self_parameters_w_side_: "f32[16, 16]"):
        l_self_parameters_w_main_ = L_self_parameters_w_main_
        l_x_ = L_x_
        l_self_parameters_w_side_ = L_self_parameters_w_side_

        # File: /tmp/fxlab-golden/examples/multi_stream.py:25 in forward, code: with torchair.scope.limit_core_num(16, 32):
        scope_enter = torch.ops.air.scope_enter(['_op_aicore_num', '_op_vectorcore_num'], ['16', '32']);  scope_enter = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:26 in forward, code: main = torch.relu(x @ self.w_main)
        matmul: "f32[4, 16]" = l_x_ @ l_self_parameters_w_main_;  l_self_parameters_w_main_ = None
        main: "f32[4, 16]" = torch.relu(matmul);  matmul = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:27 in forward, code: with torchair.scope.npu_stream_switch("side", 0):
        scope_enter_1 = torch.ops.air.scope_enter(['_user_stream_label', '_user_stream_priority', '_enable_inner_parallel'], ['side', '0', 'True']);  scope_enter_1 = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:28 in forward, code: side = torch.sigmoid(x @ self.w_side)  # on the user stream "side"
        matmul_1: "f32[4, 16]" = l_x_ @ l_self_parameters_w_side_;  l_x_ = l_self_parameters_w_side_ = None
        side: "f32[4, 16]" = torch.sigmoid(matmul_1);  matmul_1 = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:27 in forward, code: with torchair.scope.npu_stream_switch("side", 0):
        scope_exit = torch.ops.air.scope_exit();  scope_exit = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:29 in forward, code: main = main * 2
        main_1: "f32[4, 16]" = main * 2;  main = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:25 in forward, code: with torchair.scope.limit_core_num(16, 32):
        scope_exit_1 = torch.ops.air.scope_exit();  scope_exit_1 = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:30 in forward, code: return main + side
        add: "f32[4, 16]" = main_1 + side;  main_1 = side = None
        return (add,)
