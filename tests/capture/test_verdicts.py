"""Every verdict a trace prints is true: regression tests for the false verdicts of
issue 18, each named for the bug it keeps fixed."""
from __future__ import annotations

import json

import pytest
import torch

from tests.sessions import capture_of, trace_of
from tests.cli.cli_runner import run_cli


def _trace(write_model, source: str, **kwargs):
    return trace_of(write_model(source), **kwargs)


# An IR that disagrees with the compiled run: Mul's reference kernel is swapped for one
# that adds, so the IR check must fail while eager vs compiled still matches.
MUL_MODEL = """
import torch
def f(x):
    return x * 3
model = f
example_inputs = (torch.arange(4.0),)
"""


@pytest.fixture
def wrong_mul_kernel(monkeypatch):
    from fxlab.ir.kernels import registry  # the package registers every kernel

    monkeypatch.setitem(registry.KERNELS, "Mul", lambda op, inputs, attrs: [inputs[0] + inputs[1]])


@pytest.fixture
def no_mul_kernel(monkeypatch):
    from fxlab.ir.kernels import registry  # the package registers every kernel

    monkeypatch.delitem(registry.KERNELS, "Mul")


def test_ir_check_mismatch_makes_the_status_partial(write_model, wrong_mul_kernel):
    trace = _trace(write_model, MUL_MODEL)
    assert trace.check.ok
    assert trace.ir_check.failed and "graph 0 output 0: max |diff| 3" in trace.ir_check.verdict
    assert trace.status == "partial"


def test_ir_check_mismatch_exits_1_and_the_manifest_says_partial(write_model, wrong_mul_kernel, tmp_path):
    code, out, _ = run_cli("trace", str(write_model(MUL_MODEL)), "--summary", "--out", str(tmp_path / "out"))
    assert code == 1
    assert "Ascend IR on CPU vs compiled: MISMATCH" in out and "status: partial" in out
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] == "partial"


def test_ir_check_without_a_kernel_says_not_run_not_mismatch(write_model, no_mul_kernel):
    trace = _trace(write_model, MUL_MODEL)
    verdict = trace.ir_check.verdict
    assert verdict.startswith("not run: graph 0: no reference kernel for GE op type Mul"), verdict
    assert "MISMATCH" not in verdict and not trace.ir_check.failed
    assert trace.status == "unverified"  # a check that could not run: neither ok nor partial


def test_no_verify_says_the_ir_check_was_not_run(write_model):
    trace = _trace(write_model, MUL_MODEL, verify=False)
    assert trace.ir_check.verdict == "not run: --no-verify was given"


def test_ir_check_of_an_unconverted_op_says_not_run(write_model, monkeypatch):
    from fxlab.passes.converters import registry

    monkeypatch.delitem(registry.CONVERTERS._by_target, torch.ops.aten.mul.Tensor)
    trace = _trace(write_model, MUL_MODEL)
    assert trace.status == "partial"
    assert trace.ir_check.verdict == "not run: graph 0: not every op converted (aten.mul.Tensor)"


def test_ir_check_line_stays_under_converter_torchair(torchair_path):
    from tests.conftest import EXAMPLES

    path = str(torchair_path)
    code, out, err = run_cli("trace", str(EXAMPLES / "inplace_ops.py"), "--summary", "--converter", "torchair", "--torchair-path", path)
    assert code == 0, err
    assert "Ascend IR on CPU vs compiled: match (5 tensors" in out


DYNAMIC_MODEL = """
import torch
def f(x, y):
    half = x.view(x.shape[0] // 2, -1)
    y.add_(1)
    return (x * 2).sum(0) + y[: x.shape[0] - 1].sum(), half * (x.shape[0] * 3 + 1)
x = torch.randn(6, 4)
torch._dynamo.mark_dynamic(x, 0)
model = f
example_inputs = (x, torch.randn(8))
"""


def test_dynamic_marks_are_kept_and_the_ir_check_runs_with_the_real_sizes(write_model):
    # The inputs were cloned without the mark (static graph); with it, the IR check
    # failed inside ("list index out of range") and the trace still said ok.
    captured = capture_of(write_model(DYNAMIC_MODEL))
    trace = captured.trace
    functional = captured.graphs[0].modules["functional"]
    symbols = [n for n in functional.graph.nodes if n.op == "placeholder" and isinstance(n.meta.get("val"), torch.SymInt)]
    assert len(symbols) == 1, "the user's mark_dynamic made dim 0 a symbol"
    assert not trace.graphs[0].conversion.partial and not trace.graphs[0].partial
    assert trace.ir_check.verdict.startswith("match (4 tensors"), trace.ir_check.verdict
    assert trace.status == "ok"


@pytest.mark.parametrize(
    "body",
    [
        # one value written into two graph inputs: one of them was never written
        "def f(x0, x1):\n    x1.add_(1)\n    x0.copy_(x1)",
        # clone, then mutate the input: the clone was overwritten through the Identity
        "def f(x):\n    y = x.clone()\n    x.add_(1)\n    return y",
        # two in-place writes into two graph inputs, one reading the other
        "def f(x, b):\n    x.sub_(b)\n    b.relu_()",
    ],
    ids=["one-value-two-inputs", "clone-then-mutate", "two-inputs-written"],
)
def test_in_place_programs_trace_ok_with_a_matching_ir(write_model, body):
    arity = body.split("(")[1].split(")")[0].count(",") + 1
    source = f"import torch\n{body}\nmodel = f\nexample_inputs = tuple(torch.randn(5) for _ in range({arity}))\n"
    trace = _trace(write_model, source)
    assert [g.error for g in trace.graphs] == [None]
    assert trace.check.ok and trace.ir_check.ok and trace.ir_check.compared > 0, trace.ir_check.verdict
    assert trace.status == "ok"


# Batch norm in training with running statistics: the graph TorchAir builds writes the
# batch statistics into the running ones (fxlab.passes.torchair_refusals.WRONG_RESULTS).
BATCH_NORM_TRAINING_MODEL = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4)).train()
example_inputs = (torch.randn(2, 2, 4, 4),)
"""


def test_ir_check_names_torchair_s_batch_norm_fault_beside_the_running_statistics_it_breaks(write_model):
    trace = _trace(write_model, BATCH_NORM_TRAINING_MODEL)
    check = trace.ir_check
    assert check.failed and trace.status == "partial"
    assert trace.check.ok  # eager and compiled agree: the fault is in the IR
    written = [m for m in check.mismatches if "after the call" in m]
    assert len(written) == 2 and all(m.startswith("graph 0 input ") for m in written)  # running mean and var
    (fault,) = [m for m in check.mismatches if m not in written]
    assert fault.startswith("graph 0: _native_batch_norm_legit_functional: TorchAir's converter returns BatchNormV3's outputs in GE's order")
    assert "writes the batch statistics into the running statistics" in check.verdict


def test_ir_check_of_batch_norm_in_eval_mode_matches_without_a_fault_note(write_model):
    trace = _trace(write_model, BATCH_NORM_TRAINING_MODEL.replace(".train()", ".eval()"))
    assert trace.ir_check.ok and not trace.ir_check.mismatches


# -- Ascend-written models: a check that could not run is `unverified`, never `ok` ----------

# An output that is a view of a graph input written in place: aot_autograd's runtime
# re-makes it from the input, so the Ascend IR's own value for it (here a reshape of the
# transposed scatter, which differs) is never used. Found by the random programs.
ALIASED_OUTPUT_MODEL = """
import torch
def f(x):
    x.transpose(0, 1)[0].mul_(0.5)
    return x.view(40, -1)
model = f
example_inputs = (torch.randn(8, 10, generator=torch.Generator().manual_seed(0)),)
"""


def test_an_output_aot_re_makes_from_its_input_is_not_judged_by_the_ir_value(write_model):
    trace = _trace(write_model, ALIASED_OUTPUT_MODEL)
    check = trace.ir_check
    assert trace.check.ok and check.ok and not check.not_run and trace.status == "ok", check.verdict
    assert check.compared == 1  # x after the call, by value; the view's shape and dtype still count
    (note,) = check.notes
    assert note.startswith("graph 0 output 0 (view_1): the Ascend IR's value differs from the compiled run's (max |diff| ")
    assert note.endswith(
        "), but no one uses it: it is graph input 0 (arg0_1) or a view of it, which aot_autograd's runtime re-makes from the input the graph wrote back"
    )


# A custom op with a Meta function and no CPU kernel: neither eager nor the compiled run can
# run it here, yet every stage is recorded and the trace is unverified, not ok.
NO_KERNEL_MODEL = """
import torch
lib = torch.library.Library("fxlabnokernel", "DEF")
lib.define("twice(Tensor x) -> Tensor")
lib.impl("twice", lambda x: torch.empty_like(x), "Meta")
def f(x):
    return torch.ops.fxlabnokernel.twice(x + 1) * 3
model = f
example_inputs = (torch.randn(3),)
"""


def test_a_custom_op_without_a_cpu_kernel_leaves_the_trace_unverified_with_the_reason_once(write_model):
    path = write_model(NO_KERNEL_MODEL)
    trace = trace_of(path)
    (graph,) = trace.graphs
    assert list(graph.stages) == ["dynamo", "aten", "functional", "pre_ge"] and graph.ir is not None
    assert [op.type for op in graph.ir.ops if op.type not in ("Data", "Const", "NetOutput", "Cast")] == ["Add", "Twice", "Mul"]
    assert trace.check.verdict == "not run: fxlabnokernel.twice has no CPU kernel"
    assert trace.ir_check.verdict == "not run: graph 0: the compiled run stopped in this graph: fxlabnokernel.twice has no CPU kernel"
    assert graph.error is None and trace.status == "unverified"
    assert graph.conversion.auto_converted == [
        {"op": "fxlabnokernel.twice.default", "nodes": 1, "ge_type": "Twice", "prototype": False, "defined_by": "user", "defined_at": f"{path}:3"}
    ]


# A kernel that does not implement an option (fxlab's CPU reference kernels raise a
# KernelGap naming it): the trace goes on, and both checks say which op and option.
KERNEL_GAP_MODEL = """
import torch
from fxlab.ir.kernels.registry import KernelGap
lib = torch.library.Library("fxlabgap", "DEF")
lib.define("attend(Tensor q, Tensor? block_table=None) -> Tensor")
def attend(q, block_table=None):
    if block_table is not None:
        raise KernelGap("fxlabgap.attend", "block_table has no CPU reference kernel")
    return q * 2
lib.impl("attend", attend, "CPU")
lib.impl("attend", lambda q, block_table=None: torch.empty_like(q), "Meta")
def f(q, table):
    return torch.ops.fxlabgap.attend(q + 1, table) - 1
model = f
example_inputs = (torch.randn(2, 4), torch.tensor([[0, 1]], dtype=torch.int32))
"""


def test_a_kernel_that_does_not_implement_an_option_never_stops_the_trace(write_model):
    trace = _trace(write_model, KERNEL_GAP_MODEL)
    (graph,) = trace.graphs
    assert set(graph.stages) == {"dynamo", "aten", "functional", "pre_ge"} and graph.ir is not None
    said = "fxlabgap.attend: fxlab's CPU reference kernel does not implement this call (block_table has no CPU reference kernel)"
    assert trace.check.verdict == f"not run: {said}"
    assert trace.ir_check.verdict == f"not run: graph 0: the compiled run stopped in this graph: {said}"
    assert trace.status == "unverified"


def test_an_op_of_torchs_namespace_without_a_converter_is_named_with_torchairs_verdict(write_model, monkeypatch):
    from fxlab.passes.converters import registry

    monkeypatch.delitem(registry.CONVERTERS._by_target, torch.ops.aten.mul.Tensor)
    trace = _trace(write_model, MUL_MODEL)
    (failed,) = trace.graphs[0].conversion.not_converted
    assert failed["op"] == "aten.mul.Tensor" and failed["nodes"] == 1 and failed["status"] == "unsupported"
    assert failed["reason"].startswith("not converted by the built-in conversion; TorchAir converts it (ge_converter/aten/mul.py:")
    assert failed["reason"].endswith("); use --converter torchair")
    assert [op.type for op in trace.graphs[0].ir.ops if op.fx_node == "mul"] == ["FxlabUnsupported"]  # no GE op made up
    assert trace.status == "partial"


# A collective: torch's _c10d_functional ops become TorchAir's Hcom ops, never a GE op made
# up from their names; their source is the user's line, not torch.distributed's. Under the
# fake process group nothing is executed, so the checks say they could not run.
COLLECTIVE_MODEL = """
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as fc
from torch.testing._internal.distributed.fake_pg import FakeStore
if not dist.is_initialized():
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
def f(x):
    return fc.all_reduce(x * 2, "sum", dist.group.WORLD) + 1
model = f
example_inputs = (torch.randn(4),)
"""


@pytest.fixture
def fake_process_group():
    import torch.distributed as dist

    yield
    if dist.is_initialized():
        dist.destroy_process_group()


def test_a_collective_becomes_torchairs_hcom_op_and_points_at_the_users_line(write_model, fake_process_group):
    trace = _trace(write_model, COLLECTIVE_MODEL)
    (graph,) = trace.graphs
    assert graph.ir.types == ["Data", "Const", "Mul", "Cast", "HcomAllReduce", "Identity", "Const", "Add", "NetOutput"]
    assert "AllReduce" not in graph.ir.types and graph.conversion.not_converted == graph.conversion.auto_converted == []
    sources = {op.fx_node: op.source for op in graph.ir.ops if op.fx_node in ("all_reduce", "wait_tensor")}
    assert {node: source.rsplit("/", 1)[-1] for node, source in sources.items()} == {"all_reduce": "model.py:9", "wait_tensor": "model.py:9"}
    node = next(n for n in graph.stages["functional"].nodes if n.name == "all_reduce")
    assert node.provenance.line == 9 and node.provenance.library_location.endswith("torch/distributed/_functional_collectives.py:179")
    assert trace.check.verdict == trace.ir_check.verdict == "not run: collectives not executed under the fake process group"
    assert trace.status == "unverified"


SERVING_INPUTS_MODEL = """
import torch
def f(x, seq_lens, scale, flag, nothing, cache, *, layout="BSH"):
    y = x * scale
    if flag and nothing is None and layout == "BSH":
        y = y + 1
    cache["k"][0].add_(1)
    return y[: sum(seq_lens)] + cache["v"]
model = f
example_inputs = ((torch.randn(6, 4), [2, 3], 0.5, True, None, {"k": [torch.zeros(4)], "v": torch.randn(4)}), {"layout": "BSH"})
"""


def test_inputs_as_serving_code_passes_them_are_compared_leaf_by_leaf(write_model):
    trace = _trace(write_model, SERVING_INPUTS_MODEL)
    # the output, x, the cache's k (written in place) and v
    assert trace.check.ok and trace.check.compared == 4, trace.check.verdict
    assert trace.ir_check.ok and not trace.ir_check.not_run, trace.ir_check.verdict
    assert trace.status == "ok"


def test_a_model_in_train_mode_is_said_to_be_traced_for_inference(write_model):
    source = "import torch\nmodel = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.0))\nexample_inputs = (torch.randn(2, 4),)\n"
    trace = _trace(write_model, source)
    assert trace.notes[0] == (
        "the model is in train() mode, and its Dropout run as in training (dropout drawing, batch norm using batch statistics): "
        "fxlab traces it so, under torch.no_grad() as TorchAir's inference path runs; model.eval() gives their inference form."
    )
    frozen = source.replace("torch.nn.Dropout(0.0))", "torch.nn.Dropout(0.0)).eval()")
    assert not any("train() mode" in note for note in _trace(write_model, frozen, stages=("dynamo",)).notes)
    # A model whose graph is the same in both modes is not told about them.
    plain = source.replace(", torch.nn.Dropout(0.0))", ")")
    assert not any("train() mode" in note for note in _trace(write_model, plain, stages=("dynamo",)).notes)


# A fault of fxlab's CPU reference kernel of a torch_npu operator (it raises on a call it
# should compute): the trace goes on, the checks say whose fault it is, the model is not blamed.
RMS_NORM_MODEL = """
import torch
import torch_npu
def f(x, gamma):
    y, _ = torch_npu.npu_rms_norm(x + 1, gamma, 1e-6)
    return y * 2
model = f
example_inputs = (torch.randn(2, 8), torch.ones(8))
"""


def test_a_fault_of_fxlabs_cpu_reference_kernel_never_blames_the_model(write_model, monkeypatch):
    from fxlab.ir.kernels import npu_norm_reference

    def broken(x, gamma, epsilon):
        raise RuntimeError("The size of tensor a (8) must match the size of tensor b (0)")

    monkeypatch.setattr(npu_norm_reference, "normalised", broken)
    trace = _trace(write_model, RMS_NORM_MODEL)
    assert trace.status == "unverified" and trace.graphs[0].ir is not None
    verdict = trace.check.verdict
    assert verdict.startswith(
        "not run: npu.npu_rms_norm: fxlab's CPU reference kernel failed on this call (RuntimeError: The size of tensor a (8) "
        "must match the size of tensor b (0) (at fxlab/ir/kernels/npu_norm_reference.py:"
    )
    assert verdict.endswith("this is fxlab's fault, not the model's (torch_npu's own kernel computes the call on an NPU): please report it")


# float16 npu_add_rms_norm + npu_dynamic_quant, which TorchAir's pattern pass fuses into
# AddRmsNormDynamicQuant: the fused operator keeps the float32 RMSNorm result where the
# unfused ones round it first, a documented difference: a note, never a mismatch.
NORM_QUANT_MODEL = """
import torch
import torch_npu
class ResidualQuant(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gamma = torch.nn.Parameter(torch.rand(64).half() + 0.5, requires_grad=False)
    def forward(self, hidden, residual):
        normed, _, summed = torch_npu.npu_add_rms_norm(hidden, residual, self.gamma, 1e-6)
        quantised, scale = torch_npu.npu_dynamic_quant(normed)
        return quantised, scale, summed
torch.manual_seed(0)
model = ResidualQuant().eval()
example_inputs = (torch.randn(8, 64).half(), torch.randn(8, 64).half())
"""


def test_a_fused_operators_documented_precision_is_a_note_not_a_mismatch(write_model):
    trace = _trace(write_model, NORM_QUANT_MODEL)
    assert "AddRmsNormDynamicQuant" in trace.graphs[0].ir.types
    assert trace.ir_check.ok and trace.status == "ok"
    (note,) = trace.ir_check.notes
    assert note.startswith(
        "graph 0: AddRmsNormDynamicQuant (1 op), which TorchAir's pattern pass fused from npu_add_rms_norm and "
        "npu_dynamic_quant, quantises RMSNorm's float32 result as its documentation states"
    )
    assert "graph 0 output 0: values differ" in note and note.endswith("a documented difference in precision, not a mismatch")
