"""The Ascend IR check (fxlab.capture.checks.ascend_ir): the IR run on CPU against the compiled run,
judging only the values the runtime uses."""
from __future__ import annotations

import torch

from fxlab.capture.checks.runs import uninitialised_outputs
from tests.sessions import capture_of, trace_of


RANDOM_AND_PLAIN = """
import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = torch.nn.Dropout(0.3)
    def forward(self, x):
        return self.drop(x) + torch.rand(4, 8), x * 2
model = M().train()
example_inputs = (torch.randn(4, 8),)
"""


def test_a_model_drawing_random_numbers_is_compared_from_one_seed_and_its_ir_by_shape(write_model):
    from fxlab.capture.request import TraceRequest
    from fxlab.session import CaptureSession

    before = []  # the random state once the model file ran (its inputs drew from it)
    with CaptureSession(TraceRequest(write_model(RANDOM_AND_PLAIN))) as session:
        trace = session.capture(after_load=lambda: before.append(torch.random.get_rng_state())).trace
    assert torch.equal(torch.random.get_rng_state(), before[0])  # the caller's random state is kept
    # Eager and the compiled run draw the same numbers from one seed: a real match.
    assert trace.check.ok and not trace.check.skipped and trace.check.compared == 3, trace.check.verdict
    ir = trace.ir_check
    # The plain output is compared by value; the drawn one by shape and dtype, and said so.
    assert ir.ok and ir.compared == 1 and not ir.mismatches, ir.verdict
    assert ir.not_run == [
        "graph 0: values of 1 output(s) not compared, only their shapes and dtypes: StatelessDropOutGenMask, StatelessRandomUniformV2 "
        "draw(s) random numbers on the device, which the CPU reference cannot reproduce"
    ]


HOST_OUTPUTS_MODEL = """
import torch
def f(x, y):
    s = y + y
    return x.t(), x.shape[0] * 2, s, x[1:], s
x = torch.randn(6, 4)
torch._dynamo.mark_dynamic(x, 0)
model = f
example_inputs = (x, torch.randn(4, 6))
"""


def _host_outputs_trace(write_model):
    return trace_of(write_model(HOST_OUTPUTS_MODEL), stages=("functional", "ascend_ir"))


def test_outputs_made_on_the_host_are_checked_against_the_compiled_run(write_model):
    trace = _host_outputs_trace(write_model)
    (graph,) = trace.graphs
    assert len(graph.ir.outputs) == 1  # y + y: the views and the size are made on the host
    # Dynamo returns s once: s and 2 inputs are compared by value, the size as a value
    # (twice: on the host and as computed in GE). The two views of x are re-made by
    # aot_autograd's runtime from x: compared by shape and dtype only (aot checks the shape).
    assert trace.ir_check.ok and trace.ir_check.verdict.startswith("match (3 tensors"), trace.ir_check.verdict
    assert trace.ir_check.notes == [] and trace.status == "ok"


def test_a_wrongly_remade_view_fails_the_ir_check(write_model, monkeypatch):
    from fxlab.ir import host_outputs

    real = host_outputs._value_of

    def base_instead_of_view(out, inputs, ge_outputs, symbols):
        return inputs[out.input_index] if out.kind == host_outputs.VIEW else real(out, inputs, ge_outputs, symbols)

    monkeypatch.setattr(host_outputs, "_value_of", base_instead_of_view)
    trace = _host_outputs_trace(write_model)
    assert not trace.ir_check.ok
    # The view is re-made by aot_autograd from x, so its values do not count; its shape does
    # (aot checks it as it re-makes the output).
    assert any(m.startswith("graph 0 output 0: torch.float32[6, 4] vs torch.float32[4, 6]") for m in trace.ir_check.mismatches), trace.ir_check.mismatches


def test_the_converters_value_of_an_output_no_one_uses_is_noted_not_judged(write_model, monkeypatch):
    # x.t() is a view of input x: aot_autograd's runtime re-makes it from x, so the
    # Transpose its converter emitted computes a value no one uses. A wrong one is said,
    # not counted.
    from fxlab.ir.kernels.registry import KERNELS

    real = KERNELS["Transpose"]
    monkeypatch.setitem(KERNELS, "Transpose", lambda op, inputs, attrs: [r + 1 for r in real(op, inputs, attrs)])
    trace = _host_outputs_trace(write_model)
    assert trace.ir_check.ok and trace.status == "ok", trace.ir_check.verdict
    assert trace.ir_check.notes == [
        "graph 0 output 0 (t) as its converter computed it (in GE): the Ascend IR's value differs from the compiled run's "
        "(max |diff| 1), but no one uses it: it is graph input 2 (arg2_1) or a view of it, which aot_autograd's runtime "
        "re-makes from the input the graph wrote back"
    ]


# GE's Gelu is the tanh form; the model asks for the exact (erf) GELU.
GELU_MODEL = """
import torch
def f(x):
    return torch.nn.functional.gelu(x) * 3
model = f
example_inputs = (torch.linspace(-4, 4, 101),)
"""


def _gelu_forms_diff() -> float:
    x = torch.linspace(-4, 4, 101)
    exact, tanh = torch.nn.functional.gelu(x), torch.nn.functional.gelu(x, approximate="tanh")
    return ((exact - tanh) * 3).abs().max().item()


def test_a_graph_differing_only_by_ges_gelu_matches_with_a_note_of_the_difference(write_model):
    trace = trace_of(write_model(GELU_MODEL))
    types = [op.type for op in trace.graphs[0].ir.ops]
    assert types.count("Gelu") == 1 and types.count("Mul") == 1
    check = trace.ir_check
    assert check.ok and check.compared == 2 and not check.mismatches  # the output and the input after the call and check.max_abs_diff < 1e-6
    (note,) = check.approximations
    assert note == (
        "graph 0: GE's Gelu (1 op) is the tanh approximation of gelu(approximate='none'), the erf form: "
        f"with GE's semantics the IR differs from the compiled run by max |diff| {_gelu_forms_diff():.3g}, with the exact form it matches"
    )
    assert 1e-4 < _gelu_forms_diff() < 1e-2  # a real difference, above the check's tolerance
    assert note in check.verdict and trace.status == "ok"


def test_gelu_beside_a_wrong_conversion_stays_a_mismatch(write_model, monkeypatch):
    from fxlab.ir.kernels import registry  # the package registers every kernel

    # Mul's kernel adds instead: a wrong conversion the exact Gelu cannot explain away.
    monkeypatch.setitem(registry.KERNELS, "Mul", lambda op, inputs, attrs: [inputs[0] + inputs[1]])
    trace = trace_of(write_model(GELU_MODEL))
    check = trace.ir_check
    assert check.failed and check.approximations == []
    assert check.mismatches == [f"graph 0 output 0: max |diff| {check.max_abs_diff:.3g}"] and check.max_abs_diff > 1
    assert trace.status == "partial"


def test_tanh_gelu_matches_ges_gelu_without_a_note(write_model):
    trace = trace_of(write_model(GELU_MODEL.replace("gelu(x)", "gelu(x, approximate='tanh')")))
    assert trace.ir_check.ok and trace.ir_check.approximations == [] and trace.ir_check.max_abs_diff < 1e-6


BUFFER_FILLED_AFTER_A_BREAK = """
import torch

def fill(x):
    buffer = torch.empty_like(x)
    y = x * 2
    torch._dynamo.graph_break()  # e.g. an in-place collective Dynamo cannot trace fills it
    buffer.copy_(y)
    return buffer + 1

model = fill
example_inputs = (torch.randn(4, 3),)
"""


def test_a_buffer_a_graph_returns_unwritten_is_compared_by_shape_only(write_model):
    captured = capture_of(write_model(BUFFER_FILLED_AFTER_A_BREAK), stages=("functional", "ascend_ir"))
    trace = captured.trace
    assert [str(n.target) for n in captured.graphs[0].modules["functional"].graph.output_node().args[0]][:1] == ["aten.empty_like.default"]
    # Whatever the uninitialised memory held, in the compiled run and in the IR run:
    # output 0 of graph 0 is compared by shape and dtype only.
    assert uninitialised_outputs(captured.graphs[0].modules["functional"]) == {0}
    assert uninitialised_outputs(captured.graphs[1].modules["functional"]) == set()
    assert trace.status == "ok" and trace.ir_check.ok and not trace.ir_check.mismatches
    assert trace.ir_check.compared >= 2  # the second graph's values, the first's y


STD_OF_ROWS = """
import torch
def f(x):
    return x.std(DIM) * 2
model = f
example_inputs = (torch.randn(SHAPE, generator=torch.Generator().manual_seed(0)),)
"""


def _std_model(write_model, shape: str, dim: str = "-1") -> object:
    return write_model(STD_OF_ROWS.replace("SHAPE", shape).replace("DIM", dim))


def test_std_over_the_last_dim_is_named_as_torchairs_fault_whether_its_ir_cannot_run_or_differs(write_model, torchair_path):
    # TorchAir's std converter leaves dim=[-1] without keepdim out of its unsqueeze: the
    # mean [4] is Expanded to [4, 128] (it cannot run) or [8] to [8, 8] (each row's
    # deviation from other rows' means). TorchAir's own converter, run as --converter torchair, does so too.
    for converter in ("builtin", "torchair"):
        refused = trace_of(_std_model(write_model, "4, 128"), converter=converter, torchair_path=torchair_path).ir_check
        (line,) = refused.refused
        assert line.startswith("graph 0: std: TorchAir's converter (but on Ascend 910_95/950, where it builds ReduceStdV2)")
        assert "its Ascend IR cannot run (" + ("in TorchAir's own Ascend IR (--converter torchair): " if converter == "torchair" else "") in line
        assert "Expand op Expand (from FX node std) failed" in line
        assert refused.failed and refused.not_run == [] and refused.verdict.startswith("REFUSED: graph 0: std: ")
        square = trace_of(_std_model(write_model, "8, 8"), converter=converter, torchair_path=torchair_path)
        assert square.status == "partial" and square.ir_check.mismatches[0].startswith("graph 0: std: TorchAir's converter")
        assert square.ir_check.mismatches[1].startswith("graph 0 output 0: max |diff| ")
    # the fix the message gives, and a 1-d input (nothing to put back), are TorchAir's right graphs
    assert trace_of(_std_model(write_model, "4, 128", "x.dim() - 1")).status == "ok"
    assert trace_of(_std_model(write_model, "6")).status == "ok"
