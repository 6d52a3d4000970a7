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

    mul = torch.ops.aten.mul.Tensor(arg0_1, 2)
    my_inplace_default_2 = torch.ops.npu.my_inplace.default(mul, arg1_1)
    my_inplace_default_1 = torch.ops.npu.my_inplace.default(arg0_1, arg1_1)
    slice_tensor = torch.ops.aten.slice.Tensor(arg2_1, 0, 0, 2)
    my_inplace_default = torch.ops.npu.my_inplace.default(slice_tensor, arg1_1);  slice_tensor = arg1_1 = my_inplace_default = None
    add = torch.ops.aten.add_.Tensor(mul, my_inplace_default_2);  my_inplace_default_2 = add = None
    add_1 = torch.ops.aten.add_.Tensor(mul, my_inplace_default_1);  my_inplace_default_1 = add_1 = None
    copy_ = torch.ops.aten.copy_.default(arg0_1, arg0_1);  arg0_1 = copy_ = None
    copy__1 = torch.ops.aten.copy_.default(arg2_1, arg2_1);  arg2_1 = copy__1 = None
    return (mul,)



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
    user_inputs_mapping=OrderedDict([('arg0_1', 0), ('arg1_1', 1)]),
    unupdated_sym_input_index=[],
    updated_ops_param={},
    ops_update_rulers={},
    mutated_user_inputs=['arg0_1', 'arg2_1'],
    tagged_event_names=[],
    parameter_user_inputs=[2],
    user_stream_label=set(),
    user_stream_info={},
    userinput_ref_with_output={}
)
acl_graph.load(aclgraph_cache_info)


_is_first_run = True
def kernel(*args, **kwargs):

    global _is_first_run
    if _is_first_run:
        _is_first_run = False

        assert_size_stride(args[0], (2, 8), (8, 1))
        assert_size_stride(args[1], (2, 8), (8, 1))
        assert_size_stride(args[2], (4, 8), (8, 1))
    return acl_graph(*args, **kwargs)

def main():
    arg0_1 = rand_strided((2, 8),(8, 1),device ='npu:0',dtype =torch.float32)
    arg1_1 = rand_strided((2, 8),(8, 1),device ='npu:0',dtype =torch.float32)
    arg2_1 = rand_strided((4, 8),(8, 1),device ='npu:0',dtype =torch.float32)
    return kernel(arg0_1, arg1_1, arg2_1)
