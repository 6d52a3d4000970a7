import threading
from collections import OrderedDict

import torch
from torch._dynamo.testing import rand_strided

import torch_npu
from torchair._acl_concrete_graph.acl_graph import AclGraph, AclGraphCacheInfo
from torchair._acl_concrete_graph.acl_graph_cache_utils import SerializableGraphModule
from torchair.ops._tagged_event import _npu_create_tagged_event

assert_size_stride = torch._C._dynamo.guards.assert_size_stride

from torch._dynamo.guards import _get_closure_vars
globals().update(_get_closure_vars())
globals().update({"nan": float("nan")})

def forward(*args, node_info=[], is_capturing: bool = False):
    arg0_1, arg1_1, arg2_1 = args
    global _GLOBAL_USER_TAG_TO_STREAM

    tagged_event_record_default = torch.ops.air.tagged_event_record.default('graph_1_arg0_1', True);  tagged_event_record_default = None
    current_stream = torch.npu.current_stream()
    get_stream_limit = torch.npu.get_stream_limit(*(current_stream,))
    getitem = get_stream_limit['cube_core_num']
    getitem_1 = get_stream_limit['vector_core_num'];  get_stream_limit = None
    set_stream_limit = torch.npu.set_stream_limit(*(current_stream, 16, 32))
    mm = torch.ops.aten.mm.default(arg1_1, arg0_1);  arg0_1 = None
    relu = torch.ops.aten.relu_.default(mm);  relu = None
    scope_enter_1 = torch.ops.air.scope_enter.default(['_user_stream_label', '_user_stream_priority', '_enable_inner_parallel'], ['side', '0', 'True'], need_execute = True);  scope_enter_1 = None
    with torch.npu.stream(_GLOBAL_USER_TAG_TO_STREAM['side']):
        current_stream_1 = torch.npu.current_stream()
        get_stream_limit_1 = torch.npu.get_stream_limit(*(current_stream_1,))
        getitem_3 = get_stream_limit_1['cube_core_num']
        getitem_2 = get_stream_limit_1['vector_core_num'];  get_stream_limit_1 = None
        set_stream_limit_1 = torch.npu.set_stream_limit(*(current_stream_1, 16, 32))
        tagged_event_wait_default = torch.ops.air.tagged_event_wait.default('graph_1_arg0_1', True);  tagged_event_wait_default = None
        mm_1 = torch.ops.aten.mm.default(arg1_1, arg2_1);  arg1_1 = arg2_1 = None
        sigmoid = torch.ops.aten.sigmoid_.default(mm_1);  sigmoid = None
        tagged_event_record_default_1 = torch.ops.air.tagged_event_record.default('graph_1_scope_exit', True);  tagged_event_record_default_1 = None
        scope_exit = torch.ops.air.scope_exit.default(need_execute = True);  scope_exit = None
    set_stream_limit_2 = torch.npu.set_stream_limit(*(current_stream_1, getitem_3, getitem_2))
    mul = torch.ops.aten.mul_.Tensor(mm, 2);  mul = None
    set_stream_limit_3 = torch.npu.set_stream_limit(*(current_stream, getitem, getitem_1))
    add = torch.ops.aten.add_.Tensor(mm, mm_1);  mm_1 = add = None
    tagged_event_wait_default_1 = torch.ops.air.tagged_event_wait.default('graph_1_scope_exit', True);  tagged_event_wait_default_1 = None
    return (mm,)



compile_configs = {}
compile_configs["disable_mempool_reuse_in_same_fx"] = "0"
compile_configs["enable_output_clone"] = "0"
compile_configs["static_capture_size_limit"] = "64"
compile_configs["clone_input"] = "1"
compile_configs["run_eagerly"] = "0"
compile_configs["deadlock_check"] = "0"
compile_configs["remove_noop_ops"] = "1"
compile_configs["pattern_fusion_pass"] = "1"
compile_configs["frozen_parameter"] = "0"

acl_graph = AclGraph(fx_forward=forward, config=compile_configs)

aclgraph_cache_info = AclGraphCacheInfo(
    pool=None,
    stream=torch.npu.Stream(),
    capture_error_mode="global",
    num_warmup_iters=0,
    fx_graph_name="graph_1",
    user_inputs_mapping=OrderedDict([('arg1_1', 1)]),
    unupdated_sym_input_index=[],
    updated_ops_param={},
    ops_update_rulers={},
    mutated_user_inputs=[],
    tagged_event_names=['graph_1_arg0_1', 'graph_1_scope_exit'],
    parameter_user_inputs=[0, 2],
    user_stream_label={'side'},
    user_stream_info={},
    userinput_ref_with_output={}
)
acl_graph.load(aclgraph_cache_info)

_GLOBAL_USER_TAG_TO_STREAM = {}
_GLOBAL_USER_TAGGED_STREAM_LOCK = threading.Lock()

def _update_user_stream_label_dict():
    if aclgraph_cache_info.user_stream_label:
        torch.npu.Stream() # init stream pool
    with _GLOBAL_USER_TAGGED_STREAM_LOCK:
        for i, tag in enumerate(aclgraph_cache_info.user_stream_label):
            if tag in aclgraph_cache_info.user_stream_info:
                stream_info = aclgraph_cache_info.user_stream_info[tag]
                stream = torch.npu.Stream(stream_id=stream_info["stream_id"],
                                          device_index=stream_info["device_index"],
                                          device_type=stream_info["device_type"])
            else:
                stream = torch.npu.Stream()
            _GLOBAL_USER_TAG_TO_STREAM[tag] = stream

def _update_tagged_event_dict():
    from torchair._acl_concrete_graph.graph_pass import _GLOBAL_SCOPE_TAG_TO_EVENT, _GLOBAL_EVENT_LOCK
    with _GLOBAL_EVENT_LOCK:
        for i, tag in enumerate(aclgraph_cache_info.tagged_event_names):
            tagged_event = torch.npu.Event()
            _GLOBAL_SCOPE_TAG_TO_EVENT[tag] = tagged_event


_is_first_run = True
def kernel(*args, **kwargs):

    global _is_first_run
    if _is_first_run:
        _is_first_run = False

        _update_tagged_event_dict()

        _update_user_stream_label_dict()

        assert_size_stride(args[0], (16, 16), (16, 1))
        assert_size_stride(args[1], (4, 16), (16, 1))
        assert_size_stride(args[2], (16, 16), (16, 1))
    return acl_graph(*args, **kwargs)

def main():
    arg0_1 = rand_strided((16, 16),(16, 1),device ='npu:0',dtype =torch.float32)
    arg1_1 = rand_strided((4, 16),(16, 1),device ='npu:0',dtype =torch.float32)
    arg2_1 = rand_strided((16, 16),(16, 1),device ='npu:0',dtype =torch.float32)
    return kernel(arg0_1, arg1_1, arg2_1)
