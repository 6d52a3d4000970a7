"""fxlab's ``aclgraph`` stage against TorchAir's own backend run end to end
(``tests/compat/end_to_end.py``), in both modes: on every example, fxlab's built-in passes
and ``--converter torchair`` give the graph and the capture calls that
``torch.compile(model, backend=torchair.get_npu_backend(compiler_config=config))`` (or
npugraph_ex's backend) makes, node for node. Then the programs where the two once
parted, each written here: what TorchAir's run does with them, and that fxlab's graph is
that one. Skipped without a TorchAir copy (CI fetches one).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.compat.end_to_end import MODES, ROOT, Comparison, compare, sides

EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py"))
_CACHE: dict[tuple[str, str], Comparison] = {}


@pytest.fixture(scope="module")
def side(torchair_path: Any) -> Iterator[Any]:
    with sides(torchair_path) as loaded:
        yield loaded
    _CACHE.clear()


# The examples whose aclgraph graph TorchAir's capture stops in (its NPU kernel of an
# operator raises in that mode): the check's first words.
CAPTURE_STOPS = {"multistream_moe": "graph 0: TorchAir's capture of the ACL graph stops at air::wait_tensor"}


def example(side: Any, name: str, mode: str) -> Comparison:
    if (name, mode) not in _CACHE:
        _CACHE[name, mode] = compare(side, ROOT / "examples" / f"{name}.py", mode)
    return _CACHE[name, mode]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_gives_torchairs_end_to_end_graph(side: Any, name: str, mode: str) -> None:
    comparison = example(side, name, mode)
    assert comparison.problems() == [], f"{name} ({mode}):\n" + "\n".join(comparison.problems())
    check = comparison.trace.aclgraph_check
    if name in CAPTURE_STOPS:  # TorchAir's capture refuses an operator of the graph: partial, said as such
        assert comparison.trace.status == "partial" and check.refused[0].startswith(CAPTURE_STOPS[name]), check.verdict
        assert check.mismatches == [] and check.verdict.startswith("REFUSED: "), check.verdict
        assert "fault" not in check.verdict and "internal error" not in check.verdict, check.verdict
    else:
        assert comparison.trace.status == "ok", check.verdict


def test_parameters_and_buffers_are_the_inputs_torchairs_capture_does_not_copy(side: Any) -> None:
    trace = example(side, "inplace_ops", "reduce-overhead").trace
    # proj.weight, proj.bias and the cache buffer; x is the user's.
    assert "parameter_user_inputs=[0, 1, 3]," in trace.graphs[0].capture_code
    assert "user_inputs_mapping=OrderedDict([('arg2_1', 2)])," in trace.graphs[0].capture_code


def test_a_warm_up_with_a_new_batch_size_compiles_a_graph_with_a_symbol_torchair_names_in_its_code(side: Any) -> None:
    comparison = example(side, "warmup_batches", "reduce-overhead")
    assert len(comparison.reference.graphs) == 2
    code = comparison.trace.graphs[1].capture_code
    assert "        s77 = arg2_1\n" in code and "    arg2_1 = 4\n    s77 = arg2_1\n" in code


# -- programs where fxlab's graph once parted from TorchAir's --------------------------------
# Each was made functional the same way on both sides; fxlab's passes ran outside the fake
# mode aot_autograd holds around TorchAir's compiler, so torch's reinplace found the
# scatter that writes a view back and wrote the view's op in place, where TorchAir's run
# writes the scatter itself in place (view + copy_) and leaves the op functional.
SAMPLER = """
import torch
class Sampler(torch.nn.Module):
    def forward(self, logits, top_p):
        ordered, order = logits.sort(dim=-1)
        cumulative = ordered.softmax(dim=-1).cumsum(dim=-1)
        drop = cumulative <= 1 - top_p.unsqueeze(1)
        drop[:, -1] = False
        kept = drop.sum(-1)
        ordered = ordered.masked_fill(drop, -float("inf"))
        return torch.empty_like(ordered).scatter_(-1, order, ordered), kept
model = Sampler().eval()
example_inputs = (torch.randn(3, 16), torch.tensor([0.9, 0.8, 0.5]))
"""

STACKED_CACHE = """
import torch
class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.ModuleList([torch.nn.Linear(16, 48) for _ in range(2)])
        self.register_buffer("keys", torch.zeros(2, 1, 2, 8, 8))
        self.register_buffer("values", torch.zeros(2, 1, 2, 8, 8))
    def forward(self, x):
        n = x.shape[1]
        for layer in range(2):
            q, k, v = self.proj[layer](x).split(16, -1)
            self.keys[layer][:, :, :n] = k.view(1, n, 2, 8).transpose(1, 2)
            self.values[layer][:, :, :n] = v.view(1, n, 2, 8).transpose(1, 2)
            q = q.view(1, n, 2, 8).transpose(1, 2)
            weights = torch.softmax(q @ self.keys[layer][:, :, :n].transpose(-1, -2), -1)
            x = x + (weights @ self.values[layer][:, :, :n]).transpose(1, 2).reshape(1, n, 16)
        return x
model = TwoLayers().eval()
example_inputs = (torch.randn(1, 4, 16),)
"""

ATEN_MIX = """
import torch
class Mix(torch.nn.Module):
    def forward(self, a, b):
        h = a * 2
        h.add_(b)
        h[1:].mul_(0.5)
        g = torch.zeros_like(a)
        g[0].fill_(1.0)
        g[:, 2:] = h[:, :2]
        torch.ops.aten.relu_(g)
        b.sub_(1)
        return h, g
model = Mix().eval()
example_inputs = (torch.randn(4, 4), torch.randn(4, 4))
"""

# The random programs' family: an op on a view of a tensor the graph made, written back.
VIEW_WRITE = """
import torch
class Program(torch.nn.Module):
    def forward(self, x0, x1):
        v0 = x0 + x1
        v1 = v0[1:]
        v1.mul_(2.0)
        v0[0] = 3.0
        return (v0, v1)
model = Program()
example_inputs = (torch.randn(4, 4), torch.randn(4, 4))
"""

# Found by the property test: npugraph_ex's stream rule lets a select that a re-inplaced
# scatter left behind (no stream label yet) read memory written in place; TorchAir's does not.
WRITE_THEN_SCATTER = """
import torch
class Program(torch.nn.Module):
    def forward(self, x0, x1, x2, x3):
        x2.add_(1.5)
        v1 = x0 + x0
        x2[0] = x3
        x2.add_(1.5)
        return (v1,)
model = Program()
example_inputs = (torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4))
"""

PROGRAMS = {"sampler": SAMPLER, "stacked_cache": STACKED_CACHE, "aten_mix": ATEN_MIX, "view_write": VIEW_WRITE}


def program(side: Any, tmp_path: Path, source: str, mode: str) -> Comparison:
    path = tmp_path / "program.py"
    path.write_text(source)
    return compare(side, path, mode)


def _targets(gm: torch.fx.GraphModule) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_view_written_back_gives_torchairs_graph_which_computes_the_models_values(side: Any, tmp_path: Path, name: str, mode: str) -> None:
    comparison = program(side, tmp_path, PROGRAMS[name], mode)
    assert comparison.problems() == [], "\n".join(comparison.problems())
    check = comparison.trace.aclgraph_check
    assert comparison.trace.status == "ok" and check.ok and not check.not_run, check.verdict
    # TorchAir's own graph, run on CPU on its first call's inputs, computes the model's values.
    for graph, theirs in zip(comparison.trace.graphs, comparison.reference.graphs):
        outputs = theirs.fx_graph(*[t.clone() if isinstance(t, torch.Tensor) else t for t in theirs.inputs or []])
        assert len(outputs) == len(theirs.expected_outputs or [])
        for computed, expected in zip(outputs, theirs.expected_outputs or []):
            torch.testing.assert_close(computed, expected)


def test_the_samplers_last_column_stays_a_fill_and_a_copy_into_its_select(side: Any, tmp_path: Path) -> None:
    comparison = program(side, tmp_path, SAMPLER, "reduce-overhead")
    targets = _targets(comparison.reference.graphs[0].fx_graph)
    assert "aten.fill.Tensor" in targets and "aten.fill_.Tensor" not in targets
    at = targets.index("aten.fill.Tensor")
    assert targets[at : at + 3] == ["aten.fill.Tensor", "aten.select.int", "aten.copy_.default"]
    assert "aten.select_scatter.default" not in targets


@pytest.mark.parametrize("mode", MODES)
def test_the_stream_rules_of_the_two_backends_differ_as_theirs_do(side: Any, tmp_path: Path, mode: str) -> None:
    comparison = program(side, tmp_path, WRITE_THEN_SCATTER, mode)
    assert comparison.problems() == [], "\n".join(comparison.problems())
    first_add = next(n for n in comparison.reference.graphs[0].fx_graph.graph.nodes if n.name == "add")
    assert str(first_add.target) == ("aten.add_.Tensor" if mode == "npugraph_ex" else "aten.add.Tensor")


# A serving warm-up: the batch size recompiles with a symbol that two inputs pass (the
# tensor's size, and the size again, which nothing reads), and a position the step is
# specialised on (a size input Dynamo fixed, which nothing reads either).
WARM_UP_SYMBOLS = """
import torch
class Step(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(4, 8))
    def forward(self, x, pos):
        b = x.shape[0]
        self.cache[:b].add_(x)
        mask = torch.arange(8).view(1, 8) > pos.view(b, 1)
        return self.cache[:b].masked_fill(mask, 0.0)
model = Step().eval()
example_inputs_list = [(torch.randn(b, 8), torch.arange(b) + 2) for b in (2, 3)]
"""

FIXED_POSITION = """
import torch
class Decode(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(2, 16, 4))
    def forward(self, x, pos: int):
        self.cache[:, pos] = x
        return self.cache[:, : pos + 1].mean(1)
model = Decode().eval()
example_inputs_list = [(torch.randn(2, 4), p) for p in (3, 5)]
"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("source", [WARM_UP_SYMBOLS, FIXED_POSITION], ids=["shared_symbol", "fixed_position"])
def test_the_symbols_that_key_a_recompiled_graph_are_torchairs(side: Any, tmp_path: Path, source: str, mode: str) -> None:
    comparison = program(side, tmp_path, source, mode)
    assert comparison.problems() == [], "\n".join(comparison.problems())
    assert comparison.trace.status == "ok", comparison.trace.aclgraph_check.verdict
    assert len(comparison.trace.graphs) == 2


# TorchAir's own events (torchair.ops.record / wait) around a side stream: npugraph_ex's
# capture code writes them as torch.npu events too.
TORCHAIR_EVENTS = """
import torch
import torchair
class Step(torch.nn.Module):
    def forward(self, x):
        ev = torchair.ops.record()
        with torchair.scope.npu_stream_switch("s1", 3):
            torchair.ops.wait([ev])
            y = x * 2
        return y + 1
model = Step().eval()
example_inputs = (torch.randn(2, 8),)
"""


@pytest.mark.parametrize("mode", MODES)
def test_torchairs_own_events_are_written_as_torchair_writes_them(side: Any, tmp_path: Path, mode: str) -> None:
    comparison = program(side, tmp_path, TORCHAIR_EVENTS, mode)
    assert comparison.problems() == [], "\n".join(comparison.problems())
    assert comparison.trace.status == "ok", comparison.trace.aclgraph_check.verdict
    code = comparison.trace.graphs[0].capture_code
    assert "event_record = torch.npu.Event()\n" in code and "event_record.wait(torch.npu.current_stream())" in code


# -- lengths the replay updates ---------------------------------------------------------------
# Serving code hands the attention its sequence lengths as a Python list each step; compiled
# with dynamic=True they are graph inputs. TorchAir's capture code then runs the attention in
# a task group of its own while capturing, notes it for the replay to update its lengths
# (updated_ops_param, ops_update_rulers), and leaves those inputs out of the symbols that
# key the captured graphs.
LENGTHS_AS_INPUTS = """
import torch
import torch_npu

compile_options = {"dynamic": True}

class Decode(torch.nn.Module):
    def forward(self, q, key_cache, value_cache, block_table, context_lens):
        attn, _ = torch_npu.npu_fused_infer_attention_score(
            q, key_cache.view(8, 4, 32), value_cache.view(8, 4, 32), block_table=block_table,
            actual_seq_lengths_kv=context_lens, block_size=4, num_heads=4, num_key_value_heads=2,
            input_layout="BSH", scale=0.25,
        )
        return attn * 2
model = Decode().eval()
example_inputs = (
    torch.randn(2, 1, 64).half(), torch.randn(8, 4, 2, 16).half(), torch.randn(8, 4, 2, 16).half(),
    torch.tensor([[5, 2, 7], [0, 3, 1]], dtype=torch.int32), [6, 10],
)
"""


@pytest.mark.parametrize("mode", MODES)
def test_lengths_the_replay_updates_are_written_as_torchair_writes_them(side: Any, tmp_path: Path, mode: str) -> None:
    path = tmp_path / "program.py"
    path.write_text(LENGTHS_AS_INPUTS)
    comparison = compare(side, path, mode, with_torch_npu=True)
    assert comparison.problems() == [], "\n".join(comparison.problems())
    check = comparison.trace.aclgraph_check
    assert check.mismatches == [] and "the same graph and capture code as" in check.verdict, check.verdict
    code = comparison.trace.graphs[0].capture_code
    attention = "npu_fused_infer_attention_score_out"
    assert f"updated_ops_param={{'{attention}': ['actual_seq_lengths_kv'], 'arg_index_{attention}': []}}," in code
    assert f"ops_update_rulers={{'{attention}': {{'actual_seq_lengths_kv': [('index', 8), ('index', 9)]}}}}," in code
    # The sizes' symbols key the captured graphs; the lengths (inputs 8 and 9) are updated instead.
    assert "unupdated_sym_input_index=[(0, True), (1, True), (4, True), (6, True)]," in code
    assert f"external_event_{attention} = torch.npu.ExternalEvent()" in code and f'node_name="{attention}",' in code
