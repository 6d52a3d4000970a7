"""Scope markers point at the user's ``with`` line in every stage; a call through fxlab's npu-device mode, at the user's line."""
from __future__ import annotations

import fxlab.scope
from fxlab.capture.scope_frames import trimmed_stack_trace
from tests.sessions import trace_of

USER = '  File "/models/u/model.py", line 27, in forward\n    with torchair.scope.super_kernel("mlp"):\n'


def test_library_frames_at_the_end_are_dropped():
    fxlab_frame = f'  File "{fxlab.scope.__file__}", line 122, in __enter__\n    torch.ops.air.scope_enter(keys, values)\n'
    torchair_frame = '  File "/site/torchair/scope/_scope_attr.py", line 40, in __enter__\n    torch.ops.air.scope_enter(k, v)\n'
    assert trimmed_stack_trace(USER + fxlab_frame) == USER
    assert trimmed_stack_trace(USER + torchair_frame + fxlab_frame) == USER
    assert trimmed_stack_trace(USER) == USER
    assert trimmed_stack_trace(fxlab_frame) == fxlab_frame  # nothing of the user's to point at


SCOPED_MODEL = """
import torch
from fxlab import scope


def model(x):
    with scope.super_kernel("sk"):
        with scope.limit_core_num(8, 16):
            y = x.relu()
    return y * 2


example_inputs = (torch.randn(2, 3),)
"""


def test_every_stage_names_the_with_line(write_model):
    trace = trace_of(write_model(SCOPED_MODEL))
    for stage in trace.graphs[0].stages.values():
        markers = [n for n in stage.nodes if "scope_enter" in n.target or "scope_exit" in n.target]
        assert [(n.provenance.line, n.provenance.code) for n in markers] == [
            (7, 'with scope.super_kernel("sk"):'), (8, "with scope.limit_core_num(8, 16):"),
            (8, "with scope.limit_core_num(8, 16):"), (7, 'with scope.super_kernel("sk"):'),
        ], stage.name
        assert all(n.provenance.file.endswith("model.py") for n in markers)
        assert "fxlab/scope.py" not in stage.code


BROKEN_MODEL = """
import torch
from fxlab import scope


def model(x):
    with scope.super_kernel("sk"):
        with scope.limit_core_num(8, 16):
            y = x.relu()
        y = y * y.sum().item()
    return y


example_inputs = (torch.randn(2, 3),)
"""


def test_markers_compiled_alone_name_the_with_line(write_model):
    # The graph break inside the `with` makes Dynamo run `model` eagerly and compile the
    # scopes' __enter__ / __exit__ alone: their markers' own traces are all fxlab/scope.py.
    from tests.sessions import trace_of

    trace = trace_of(write_model(BROKEN_MODEL))
    markers = [(n.target, n.provenance.line, n.provenance.code) for g in trace.graphs for n in g.stages["dynamo"].nodes if "scope_" in n.target]
    assert markers == [
        ("air.scope_enter", 7, 'with scope.super_kernel("sk"):'),
        ("air.scope_enter", 8, "with scope.limit_core_num(8, 16):"),
        ("air.scope_exit", 8, "with scope.limit_core_num(8, 16):"),  # compiled once, for both exits
    ]
    assert all("fxlab/scope.py" not in g.stages["functional"].code for g in trace.graphs)


NAMES_A_DEVICE = """
import torch


class Embed(torch.nn.Module):
    def forward(self, x):
        positions = torch.arange(x.shape[-1], device=x.device)
        return x + positions.to(x.dtype)


torch.npu.set_device(0)  # a script for an NPU: the npu device runs on the CPU from here
model = Embed()
example_inputs = (torch.ones(2, 4),)
"""


def test_a_call_naming_a_device_names_the_users_line_not_fxlabs_npu_device_mode(write_model):
    # Dynamo steps through fxlab's npu-device mode for a call that names a device: its frame
    # is the innermost, and no stage may show it as the source.
    from fxlab.compat import npu_device

    trace = trace_of(write_model(NAMES_A_DEVICE))
    for stage in trace.graphs[0].stages.values():
        arange = [n for n in stage.nodes if "arange" in n.target]
        assert arange and all((n.provenance.line, n.provenance.file.endswith("model.py")) == (7, True) for n in arange), stage.name
        assert npu_device.__file__ not in stage.code and "npu_device.py" not in stage.code, stage.name
