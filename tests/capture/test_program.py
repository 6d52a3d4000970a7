"""A program run as a whole: every compile with TorchAir's backends traced as the program
calls it (the program session, as ``fxlab run`` opens it), the program left as it would
be without fxlab."""

from __future__ import annotations

import functools
import runpy
from pathlib import Path
from typing import Any

import pytest
import torch

from fxlab.capture.program import ProgramTrace
from fxlab.capture.request import TraceRequest
from fxlab.session.program_session import ProgramSession


def run_program(path: Path, **request: Any) -> tuple[list[ProgramTrace], dict[str, Any]]:
    """Run the program at ``path`` as ``__main__`` in a program session: its traces, in the
    order they were made, and the program's globals at its end."""
    traces: list[ProgramTrace] = []
    with ProgramSession(TraceRequest(path, **request), traces.append):
        scope = runpy.run_path(str(path), run_name="__main__")
    return traces, scope


def line_of(path: Path, text: str) -> int:
    """The number of the line of ``path`` holding ``text``."""
    return next(number for number, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


QUICK_START = """
import torch
import torch_npu
import torchair


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2


torch.npu.set_device(0)
torch.manual_seed(0)
net = Net().npu()
model = torch.compile(net, backend=torchair.get_npu_backend())  # compile here
x = torch.randn(2, 8).npu()
with torch.no_grad():
    out = model(x)  # first call
    again = model(torch.randn(2, 8).npu())
"""


def test_a_compile_is_one_trace_with_every_stage_the_lines_and_the_checks(tmp_path):
    path = tmp_path / "quick.py"
    path.write_text(QUICK_START)
    (built,), scope = run_program(path)
    origin, trace = built.program, built.capture.trace
    assert (built.folder, built.error) == ("trace_0", None)
    assert origin.function == "Net" and origin.backend == "torchair.get_npu_backend(...)"
    assert origin.compiled_at == f"{path}:{line_of(path, '# compile here')}"
    assert origin.called_at == f"{path}:{line_of(path, '# first call')}"
    assert (origin.compile_index, origin.previous, origin.reasons) == (0, None, [])
    assert trace.mode == "max-autotune" and trace.stages == ["dynamo", "aten", "functional", "pre_ge", "ascend_ir"]
    assert [n.target for n in trace.graphs[0].stages["functional"].call_nodes()] == ["aten.t.default", "aten.addmm.default", "aten.relu.default", "aten.mul.Tensor"]
    assert trace.check.verdict == "match (2 tensors, max |diff| 0)"  # the output and x, eager against the program's compiled call
    assert trace.ir_check.ok and trace.ir_check.compared > 0 and trace.status == "ok"
    (call,) = trace.calls
    assert (call.inputs, call.graphs, call.compiled) == ("x: f32[2, 8]", [0], [0])
    with torch.no_grad():
        assert torch.equal(scope["out"], scope["net"](scope["x"]))  # the program got the compiled result
    assert torch.compile is not None and torch.compile.__module__ == "torch"  # put back with the session


RECOMPILE = """
import torch
import torch_npu


def step(x):
    return torch.tanh(x) + 1

decode = torch.compile(step, backend="npu", dynamic=False)
for batch in (2, 3, 3):
    decode(torch.ones(batch, 4, device="npu"))
"""


def test_a_recompile_is_a_trace_of_its_own_with_dynamos_reason(tmp_path):
    path = tmp_path / "warm.py"
    path.write_text(RECOMPILE)
    traces, _ = run_program(path, stages=("dynamo", "functional", "ascend_ir"))
    first, second = (built.program for built in traces)
    assert [built.folder for built in traces] == ["trace_0", "trace_1"]
    assert (first.function, first.backend, first.compile_index) == ("step", "'npu'", 0)
    assert (second.compile_index, second.previous) == (1, "trace_0")
    assert second.reasons == ["input x: dim 0 is 3, graph 0 of trace_0 has it fixed at 2"]
    (recompile,) = traces[1].capture.trace.calls[0].recompiles
    (reason,) = recompile.reasons  # Dynamo's own, tagged with the compile id of trace_0's graph
    assert reason.endswith("/0: tensor 'x' size mismatch at index 0. expected 2, actual 3")
    assert [built.capture.trace.status for built in traces] == ["ok", "ok"]


STATEFUL = """
import torch
import torch_npu
import torchair

CALLS = 0


class Cache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(4, 8))
        self.calls = 0

    def forward(self, x, slot):
        global CALLS
        CALLS += 1
        self.calls += 1
        self.cache[slot].add_(x.sum(0))
        return self.cache * x.mean()


torch.manual_seed(0)
module = Cache()
model = torch.compile(module, backend=torchair.get_npu_backend())
inputs = [(torch.randn(3, 8), 1), (torch.randn(3, 8), 2), (torch.randn(5, 8), 1)]
with torch.no_grad():
    outs = [model(x, slot) for x, slot in inputs]
"""


def test_the_program_ends_as_it_would_without_fxlab(tmp_path):
    """The eager check runs the module again on each compiling call: its buffer writes,
    attribute counts and the counter among its module's globals must not show in the program."""
    path = tmp_path / "stateful.py"
    path.write_text(STATEFUL)
    traces, scope = run_program(path, stages=("dynamo", "functional", "ascend_ir"))
    assert scope["CALLS"] == 3
    plain = type(scope["module"])()
    with torch.no_grad():
        expected = [plain(x, slot) for x, slot in scope["inputs"]]
    assert scope["module"].calls == plain.calls == 3
    assert torch.equal(scope["module"].cache, plain.cache)
    assert all(torch.equal(a, b) for a, b in zip(scope["outs"], expected))
    checks = [built.capture.trace.check for built in traces]
    assert all(check.ok and check.skipped is None for check in checks)
    assert checks[0].compared == 3  # the output, x, and the cache the call writes


def test_other_backends_are_left_alone(tmp_path):
    path = tmp_path / "other.py"
    path.write_text("import torch\nf = torch.compile(lambda x: x * 3, backend='aot_eager')\nresult = f(torch.ones(2))\n")
    traces, scope = run_program(path)
    assert traces == [] and torch.equal(scope["result"], torch.full((2,), 3.0))


NPUGRAPH_EX = """
import torch
import torch_npu


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.zeros(4))

    def forward(self, x):
        self.state.add_(x)
        return self.state * 2

block = torch.compile(Block(), backend="npugraph_ex", options={"inplace_pass": False})
with torch.no_grad():
    block(torch.ones(4))
"""


def test_the_npugraph_ex_backend_follows_its_options(tmp_path):
    path = tmp_path / "acl.py"
    path.write_text(NPUGRAPH_EX)
    (built,), _ = run_program(path)
    trace = built.capture.trace
    assert built.program.backend == "'npugraph_ex'" and trace.mode == "npugraph_ex"
    assert trace.options_set == ["mode=npugraph_ex (the config of 'npugraph_ex')", "inplace_pass=False (the config of 'npugraph_ex')"]
    assert [r.name for r in trace.graphs[0].passes["aclgraph"] if r.name == "reinplace_inplaceable_ops"] == []  # the option turned it off
    assert trace.aclgraph_check.ok and trace.status == "ok"


GRAPH_BREAK = """
import torch
import torch_npu
import torchair


def forward(x):
    y = torch.sin(x)
    print("between the graphs")
    return torch.cos(y)

compiled = torch.compile(forward, backend=torchair.get_npu_backend())
result = compiled(torch.ones(3))
"""


def test_a_graph_break_gives_one_trace_with_two_graphs(tmp_path, capsys):
    path = tmp_path / "brk.py"
    path.write_text(GRAPH_BREAK)
    (built,), scope = run_program(path, stages=("dynamo", "functional", "ascend_ir"))
    trace = built.capture.trace
    assert len(trace.graphs) == 2 and trace.calls[0].graphs == [0, 1]
    assert trace.graphs[0].break_reason is not None and trace.status == "ok"
    assert capsys.readouterr().out == "between the graphs\n"  # once: the eager check's own run prints nothing
    assert torch.equal(scope["result"], torch.cos(torch.sin(torch.ones(3))))


def test_a_compile_no_watched_call_made_is_still_traced(tmp_path):
    path = tmp_path / "direct.py"
    path.write_text("import torch, torch_npu\nm = torch.compile(torch.nn.Linear(2, 2), backend='npu')\nwith torch.no_grad():\n    m.forward(torch.ones(1, 2))\n")
    (built,), _ = run_program(path, stages=("dynamo", "functional"))
    check = built.capture.trace.check
    assert check.skipped.startswith("Dynamo compiled during a call fxlab does not watch")
    assert built.program.called_at == f"{path}:4"


@pytest.mark.parametrize("verify", [False])
def test_no_verify_keeps_no_graph_runs(tmp_path, verify):
    path = tmp_path / "quick.py"
    path.write_text(QUICK_START)
    (built,), _ = run_program(path, verify=verify)
    assert built.capture.trace.ir_check.skipped == "--no-verify was given"


NO_FAKE_FIRST = """
import torch
import torch_npu

lib = torch.library.Library("fxlabprognofake", "DEF")
lib.define("scale_add(Tensor x, Tensor y, float alpha) -> Tensor")
lib.impl("scale_add", lambda x, y, alpha: x + alpha * y, "CPU")


def step(x, y):
    return torch.ops.fxlabprognofake.scale_add(x, y, 0.5).relu()


decode = torch.compile(step, backend="npu")
out = decode(torch.ones(2, 4, device="npu"), torch.ones(2, 4, device="npu"))
"""


def test_a_custom_op_without_a_fake_function_before_any_graph_makes_the_programs_trace_partial(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(NO_FAKE_FIRST)
    (built,), scope = run_program(path, stages=("dynamo", "functional", "ascend_ir"))
    trace = built.capture.trace
    assert trace.status == "partial" and len(trace.problems) == 1
    assert trace.problems[0].startswith("custom op fxlabprognofake::scale_add ran outside the graph")
    assert torch.equal(scope["out"], torch.full((2, 4), 1.5))  # the program got its result


RESET = """
import torch
import torchair

step = torch.compile(lambda x: x.sin() + 1, backend=torchair.get_npu_backend())
step(torch.ones(2))
torch._dynamo.reset()
step(torch.ones(2))
"""


def test_a_compile_after_torch_dynamo_reset_says_so_not_a_guard_that_failed(tmp_path):
    path = tmp_path / "reset.py"
    path.write_text(RESET)
    traces, _ = run_program(path, stages=("dynamo", "functional"))
    first, second = (built.capture.trace.program for built in traces)
    assert (first.compile_index, second.compile_index, second.previous) == (0, 1, "trace_0")
    assert second.reasons == ["the program called torch._dynamo.reset() after trace_0, so Dynamo compiled the function afresh"]


def test_what_a_program_compiles_is_named_as_the_program_names_it():
    from fxlab.capture.input_sets import argument_names
    from fxlab.capture.program import function_name

    class Block(torch.nn.Module):
        def forward(self, x, mask=None):
            return x

    block = Block()
    assert [function_name(torch.sin), function_name(block), function_name(block._call_impl)] == ["torch.sin", "Block", "Block"]
    assert argument_names(block._call_impl) == argument_names(block) == ["x", "mask"]  # nn.Module.compile() compiles _call_impl
    assert function_name(functools.partial(torch.add, alpha=2)) == "partial(torch.add)"  # not the word "partial", a status


HALF_PRECISION_ATTENTION = """
import torch
import torch_npu
import torchair


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True) * 3


torch.manual_seed(0)
q, k, v = (torch.randn(1, 4, 64, 32).{dtype}() * 4 for _ in range(3))
model = torch.compile(Attention(), backend=torchair.get_npu_backend())
with torch.no_grad():
    out = model(q, k, v)
"""


def test_a_programs_half_precision_attention_is_checked_against_eager_with_the_npus_kernel(tmp_path):
    # The compiled graph runs SDPA as torch_npu's fused kernel (as on an NPU); CPU's own SDPA
    # rounds float16 otherwise: the program's eager check says so and matches, as fxlab trace's does.
    path = tmp_path / "attention.py"
    path.write_text(HALF_PRECISION_ATTENTION.replace("{dtype}", "half"))
    (built,), _ = run_program(path, stages=("dynamo", "functional"))
    check = built.capture.trace.check
    assert check.ok and check.max_abs_diff == 0, check.mismatches
    (said,) = check.approximations
    assert said.startswith("F.scaled_dot_product_attention (1 call(s)) is torch_npu's fused kernel in the compiled graph")
    assert "against CPU's own SDPA the outputs differ by rounding (output: max |diff| " in said
    path.write_text(HALF_PRECISION_ATTENTION.replace("{dtype}", "float"))  # float32: CPU's own SDPA, nothing to explain
    (built,), _ = run_program(path, stages=("dynamo", "functional"))
    assert built.capture.trace.check.ok and built.capture.trace.check.approximations == []
