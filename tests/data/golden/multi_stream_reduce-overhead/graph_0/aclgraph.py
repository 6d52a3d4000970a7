class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[16, 16]", arg1_1: "f32[4, 16]", arg2_1: "f32[16, 16]"):
        # No stacktrace found for following nodes
        tagged_event_record_default = torch.ops.air.tagged_event_record.default('graph_1_arg0_1', True);  tagged_event_record_default = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:25 in forward, code: with torchair.scope.limit_core_num(16, 32):
        current_stream = torch_npu_npu_utils_current_stream()
        get_stream_limit = torch_npu_npu_npu_config_get_stream_limit(current_stream)
        getitem = get_stream_limit['cube_core_num']
        getitem_1 = get_stream_limit['vector_core_num'];  get_stream_limit = None
        set_stream_limit = torch_npu_npu_npu_config_set_stream_limit(current_stream, 16, 32);  set_stream_limit = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:26 in forward, code: main = torch.relu(x @ self.w_main)
        mm: "f32[4, 16]" = torch.ops.aten.mm.default(arg1_1, arg0_1);  arg0_1 = None
        relu: "f32[4, 16]" = torch.ops.aten.relu_.default(mm);  relu = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:27 in forward, code: with torchair.scope.npu_stream_switch("side", 0):
        scope_enter_1 = torch.ops.air.scope_enter.default(['_user_stream_label', '_user_stream_priority', '_enable_inner_parallel'], ['side', '0', 'True'], need_execute = True);  scope_enter_1 = None
        current_stream_1 = torch_npu_npu_utils_current_stream()
        get_stream_limit_1 = torch_npu_npu_npu_config_get_stream_limit(current_stream_1)
        getitem_3 = get_stream_limit_1['cube_core_num']
        getitem_2 = get_stream_limit_1['vector_core_num'];  get_stream_limit_1 = None
        set_stream_limit_1 = torch_npu_npu_npu_config_set_stream_limit(current_stream_1, 16, 32);  set_stream_limit_1 = None

        # No stacktrace found for following nodes
        tagged_event_wait_default = torch.ops.air.tagged_event_wait.default('graph_1_arg0_1', True);  tagged_event_wait_default = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:28 in forward, code: side = torch.sigmoid(x @ self.w_side)  # on the user stream "side"
        mm_1: "f32[4, 16]" = torch.ops.aten.mm.default(arg1_1, arg2_1);  arg1_1 = arg2_1 = None
        sigmoid: "f32[4, 16]" = torch.ops.aten.sigmoid_.default(mm_1);  sigmoid = None

        # No stacktrace found for following nodes
        tagged_event_record_default_1 = torch.ops.air.tagged_event_record.default('graph_1_scope_exit', True);  tagged_event_record_default_1 = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:27 in forward, code: with torchair.scope.npu_stream_switch("side", 0):
        scope_exit = torch.ops.air.scope_exit.default(need_execute = True);  scope_exit = None
        set_stream_limit_2 = torch_npu_npu_npu_config_set_stream_limit(current_stream_1, getitem_3, getitem_2);  current_stream_1 = getitem_3 = getitem_2 = set_stream_limit_2 = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:29 in forward, code: main = main * 2
        mul: "f32[4, 16]" = torch.ops.aten.mul_.Tensor(mm, 2);  mul = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:25 in forward, code: with torchair.scope.limit_core_num(16, 32):
        set_stream_limit_3 = torch_npu_npu_npu_config_set_stream_limit(current_stream, getitem, getitem_1);  current_stream = getitem = getitem_1 = set_stream_limit_3 = None

        # File: /tmp/fxlab-golden/examples/multi_stream.py:30 in forward, code: return main + side
        add: "f32[4, 16]" = torch.ops.aten.add_.Tensor(mm, mm_1);  mm_1 = add = None

        # No stacktrace found for following nodes
        tagged_event_wait_default_1 = torch.ops.air.tagged_event_wait.default('graph_1_scope_exit', True);  tagged_event_wait_default_1 = None
        return (mm,)
