from __future__ import annotations

import torch

from fxlab import npu_streams


def test_stream_limits_are_kept_per_stream_and_the_calls_carry_torch_npus_names():
    stream = npu_streams.current_stream()
    assert stream is npu_streams.current_stream() and npu_streams.get_stream_limit(stream) == {"cube_core_num": 0, "vector_core_num": 0}
    npu_streams.set_stream_limit(stream, 8, 16)
    try:
        assert npu_streams.get_stream_limit(stream) == {"cube_core_num": 8, "vector_core_num": 16}
    finally:
        npu_streams.set_stream_limit(stream, 0, 0)
    assert [f.__module__ for f in npu_streams.STREAM_CALLS] == ["torch_npu.npu.utils", "torch_npu.npu.npu_config", "torch_npu.npu.npu_config"]


def test_the_event_operators_do_nothing_on_cpu_and_record_gives_an_empty_tensor():
    assert torch.ops.air.tagged_event_record("t") is None and torch.ops.npugraph_ex.tagged_event_wait("t", True) is None
    record = torch.ops.air.record()
    assert record.shape == (0,) and torch.ops.air.wait([record]) is None
    level = npu_streams.get_deterministic_level()
    npu_streams.set_deterministic_level(2)
    assert npu_streams.get_deterministic_level() == 2
    npu_streams.set_deterministic_level(level)


def test_an_event_recorded_in_a_compiled_function_leaves_it_one_graph():
    graphs = []

    def count(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(x):
        y = x * 2
        npu_streams.Event().record()
        return y + 1

    torch._dynamo.reset()
    out = torch.compile(f, backend=count)(torch.ones(3))
    assert len(graphs) == 1 and out.tolist() == [3.0, 3.0, 3.0]
    start, end = npu_streams.Event(enable_timing=True), npu_streams.Event(enable_timing=True)
    start.record()
    end.record()
    assert start.elapsed_time(end) >= 0.0  # eager records still keep their time
