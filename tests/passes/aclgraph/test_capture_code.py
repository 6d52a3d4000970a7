from __future__ import annotations

import ast

import torch

import fxlab.scope as scope
from tests.functional_graphs import functional_graph
from fxlab.passes.aclgraph.pipeline import aclgraph_graph
from fxlab.passes.torchair_options import TorchAirOptions


def _code(fn, *inputs, mode="reduce-overhead"):
    return aclgraph_graph(functional_graph(fn, *inputs), TorchAirOptions(mode=mode)).capture_code


def test_the_module_checks_inputs_then_replays_and_is_valid_python():
    code = _code(lambda x, w: (x @ w,), torch.randn(2, 3), torch.randn(3, 4))
    ast.parse(code)
    assert "from torchair._acl_concrete_graph.acl_graph import AclGraph, AclGraphCacheInfo" in code
    assert "    arg0_1, arg1_1 = args" in code
    assert "        assert_size_stride(args[0], (2, 3), (3, 1))\n        assert_size_stride(args[1], (3, 4), (4, 1))\n    return acl_graph(*args, **kwargs)" in code
    assert 'compile_configs["remove_noop_ops"] = "1"' in code and 'fx_graph_name="graph_1"' in code
    assert "    arg0_1 = rand_strided((2, 3),(3, 1),device ='npu:0',dtype =torch.float32)" in code


def test_events_streams_and_core_limits_are_the_torch_npu_calls_of_the_capture():
    def f(x):
        with scope.limit_core_num(8, 16):
            a = x * 2
            with scope.npu_stream_switch("side", 0):
                b = torch.relu(x)
        return (a + b,)

    code = _code(f, torch.randn(3))
    ast.parse(code)
    assert "current_stream = torch.npu.current_stream()" in code
    assert "set_stream_limit = torch.npu.set_stream_limit(*(current_stream, 8, 16))" in code
    assert "    with torch.npu.stream(_GLOBAL_USER_TAG_TO_STREAM['side']):" in code
    assert "_update_tagged_event_dict()" in code and "_update_user_stream_label_dict()" in code
    assert "tagged_event_names=['graph_1_arg0_1', 'graph_1_scope_exit']" in code


def test_npugraph_ex_writes_its_own_package_and_boolean_options():
    code = _code(lambda x: (x * 2,), torch.randn(3), mode="npugraph_ex")
    assert "from npugraph_ex._acl_concrete_graph.acl_graph import AclGraph, AclGraphCacheInfo" in code
    assert 'compile_configs["force_eager"] = False' in code and 'compile_configs["capture_limit"] = "64"' in code
