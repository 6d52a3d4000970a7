class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[16, 16]", arg1_1: "f32[4, 16]", arg2_1: "f32[16, 16]"):
        # File: /tmp/fxlab-golden/examples/multi_stream.py:25 in forward, code: with torchair.scope.limit_core_num(16, 32):
        scope_enter = torch.ops.air.scope_enter.default(['_op_aicore_num', '_op_vectorcore_num'], ['16', '32']);  scope_enter = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:26 in forward, code: main = torch.relu(x @ self.w_main)
        mm: "f32[4, 16]" = torch.ops.aten.mm.default(arg1_1, arg0_1);  arg0_1 = None
        relu: "f32[4, 16]" = torch.ops.aten.relu.default(mm);  mm = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:27 in forward, code: with torchair.scope.npu_stream_switch("side", 0):
        scope_enter_1 = torch.ops.air.scope_enter.default(['_user_stream_label', '_user_stream_priority', '_enable_inner_parallel'], ['side', '0', 'True']);  scope_enter_1 = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:28 in forward, code: side = torch.sigmoid(x @ self.w_side)  # on the user stream "side"
        mm_1: "f32[4, 16]" = torch.ops.aten.mm.default(arg1_1, arg2_1);  arg1_1 = arg2_1 = None
        sigmoid: "f32[4, 16]" = torch.ops.aten.sigmoid.default(mm_1);  mm_1 = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:27 in forward, code: with torchair.scope.npu_stream_switch("side", 0):
        scope_exit = torch.ops.air.scope_exit.default();  scope_exit = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:29 in forward, code: main = main * 2
        mul: "f32[4, 16]" = torch.ops.aten.mul.Tensor(relu, 2);  relu = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:25 in forward, code: with torchair.scope.limit_core_num(16, 32):
        scope_exit_1 = torch.ops.air.scope_exit.default();  scope_exit_1 = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:30 in forward, code: return main + side
        add: "f32[4, 16]" = torch.ops.aten.add.Tensor(mul, sigmoid);  mul = sigmoid = None
        return (add,)
