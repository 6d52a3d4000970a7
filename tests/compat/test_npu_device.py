"""The npu device on the CPU: a script written for an NPU runs under the block and gives
eager's numbers; what only an NPU can do is a clear error naming the call and the line;
the block leaves nothing behind; Dynamo compiles through it."""

from __future__ import annotations

import json
import operator
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from fxlab.compat.layer import compat_layer
from fxlab.compat.npu_device import NOTE, npu_on_cpu, unmapped_npu_device
from fxlab.errors import NpuNotEmulated
from tests.cli.cli_runner import run_cli

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "npu_scripts"


def _left_behind() -> list[str]:
    """What an emulation could leave in the process, if it did."""
    tensor_attrs = (("torch.npu", hasattr(torch, "npu")), ("Tensor.npu", hasattr(torch.Tensor, "npu")), ("Tensor.is_npu", hasattr(torch.Tensor, "is_npu")))
    leaks = [name for name, there in tensor_attrs if there]
    leaks += ["Module.npu"] if hasattr(torch.nn.Module, "npu") else []
    leaks += ["sys.modules['torch.npu']"] if "torch.npu" in sys.modules else []
    leaks += ["a torch function mode"] if torch._C._len_torch_function_stack() else []
    return leaks


def _reference(x_seed: int = 0) -> torch.Tensor:
    """quick_start.py's model on its input, on the CPU, without any npu."""
    torch.manual_seed(x_seed)
    linear = torch.nn.Linear(16, 16)
    x = torch.randn(4, 16)
    with torch.no_grad():
        return torch.relu(linear(x) + 0.5) * 2


def test_a_quick_start_script_runs_on_the_cpu_and_gives_eagers_numbers() -> None:
    notes: list[str] = []
    with compat_layer(announce=notes.append):
        results = runpy.run_path(str(SCRIPTS / "quick_start.py"))["RESULTS"]
    expected = _reference()
    torch.testing.assert_close(results["eager"].detach(), expected, rtol=0, atol=0)
    torch.testing.assert_close(results["compiled"].detach(), expected, rtol=0, atol=0)
    assert results["eager"].device.type == "cpu" and results["elapsed_ms"] >= 0
    assert (results["peak"], results["device"], results["count"]) == (0, 0, 1)
    assert notes.count(NOTE) == 1  # one note, when the script first used the npu
    assert _left_behind() == []
    with pytest.raises(RuntimeError, match="device string: npu"):
        torch.device("npu")


def test_the_block_undoes_everything_and_restores_what_was_there() -> None:
    with npu_on_cpu() as emulation:
        assert emulation.active and torch.npu.is_available()  # type: ignore[attr-defined]
        assert torch.device("npu:1") == torch.device("cpu") and torch.zeros(2, device="npu").device.type == "cpu"
        model = torch.nn.Linear(2, 2)
        assert model.npu() is model and model.to("npu:0") is model
        x = torch.ones(2)
        assert x.npu() is x and x.to("npu", torch.float16).dtype == torch.float16 and x.pin_memory() is x
    assert _left_behind() == []


def _recording_backend() -> tuple[list[torch.fx.GraphModule], Any]:
    """A torch.compile backend that keeps each graph Dynamo hands it and runs it as it is."""
    graphs: list[torch.fx.GraphModule] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> torch.fx.GraphModule:
        graphs.append(gm)
        return gm

    return graphs, backend


def _add_if_on_npu(x: torch.Tensor) -> torch.Tensor:
    return x + 1 if x.is_npu else x - 1


def test_is_npu_says_what_the_device_says_in_eager_and_in_a_compiled_call() -> None:
    # torch_npu defines Tensor.is_npu as its device registration does (device.type == "npu"):
    # a script that reads it runs, and it agrees with x.device (the CPU).
    graphs, backend = _recording_backend()
    torch._dynamo.reset()
    with npu_on_cpu():
        x = torch.ones(3, device="npu")
        assert x.is_npu is False and x.npu().is_npu is False and x.device.type == "cpu"
        compiled = torch.compile(_add_if_on_npu, backend=backend, fullgraph=True)(x)
    torch._dynamo.reset()
    assert compiled.tolist() == [0.0, 0.0, 0.0]
    assert [n.target for n in graphs[0].graph.nodes if n.op == "call_function"] == [operator.sub]
    assert _left_behind() == []


def test_a_thread_the_program_starts_names_the_npu_device_as_its_main_thread_does() -> None:
    from concurrent.futures import ThreadPoolExecutor

    def make() -> torch.Tensor:
        return torch.ones(2, device="npu") + torch.zeros(1, device=torch.device("npu:0")).to("npu")

    with npu_on_cpu():
        with ThreadPoolExecutor(1) as pool:  # a worker of a serving loop
            made = pool.submit(make).result(timeout=60)
        assert made.tolist() == [1.0, 1.0] and make().tolist() == [1.0, 1.0]
    assert _left_behind() == []


def test_streams_events_seeds_and_memory_keep_their_meaning_on_one_cpu() -> None:
    with npu_on_cpu():
        npu = torch.npu  # type: ignore[attr-defined]
        side = npu.Stream()
        assert npu.current_stream() == npu.default_stream() != side
        with npu.stream(side):
            assert npu.current_stream() is side
        assert npu.current_stream() == npu.default_stream()
        event = side.record_event(npu.Event())
        assert event.query() and npu.current_stream().wait_event(event) is None
        npu.manual_seed(7)
        first = torch.randn(3, device="npu")
        torch.manual_seed(7)
        assert torch.equal(first, torch.randn(3))
        assert [npu.memory_allocated(), npu.max_memory_reserved(), npu.memory_stats()] == [0, 0, {}]
        npu.set_stream_limit(side, 8, 16)
        assert npu.get_stream_limit(side) == {"cube_core_num": 8, "vector_core_num": 16}
        with npu.device(0):
            assert npu.current_device() == 0


def test_what_only_an_npu_can_do_names_the_call_and_the_scripts_line() -> None:
    with compat_layer(), pytest.raises(NpuNotEmulated) as info:
        runpy.run_path(str(SCRIPTS / "graph_capture.py"))
    message = str(info.value)
    assert message.startswith(f"torch.npu.NPUGraph ({SCRIPTS / 'graph_capture.py'}, line 6) needs capturing and replaying an ACL graph")
    with (
        npu_on_cpu(),
        pytest.raises(NpuNotEmulated, match=r"torch.npu.set_device\(3\) \(.*test_npu_device.py, line \d+\): the CPU stands in for 1 NPU"),
    ):
        torch.npu.set_device(3)  # type: ignore[attr-defined]


def test_a_device_torch_parses_out_of_reach_gets_fxlabs_error() -> None:
    with npu_on_cpu() as emulation:
        with pytest.raises(RuntimeError) as info:
            torch.autocast("npu")
        error = unmapped_npu_device(info.value, emulation)
    assert error is not None and f"{__file__}, line" in str(error) and "torch.autocast('cpu')" in str(error)
    assert unmapped_npu_device(ValueError("something else"), emulation) is None


def test_in_the_compat_layer_the_device_waits_for_its_first_use() -> None:
    notes: list[str] = []
    with compat_layer(announce=notes.append) as session:
        assert hasattr(torch, "npu") and not session.npu_device.active and torch._C._len_torch_function_stack() == 0
        with pytest.raises(RuntimeError) as info:
            runpy.run_path(str(SCRIPTS / "device_first.py"))
        error = session.explain(info.value)
        assert "device_first.py, line 4 names the npu device before" in str(error) and notes == []
        assert torch.npu.is_available() and session.npu_device.active  # type: ignore[attr-defined]
        import torch_npu

        assert torch_npu.npu.current_stream() is torch.npu.current_stream()  # type: ignore[attr-defined]
    assert notes.count(NOTE) == 1 and _left_behind() == []


def _forward(x: torch.Tensor) -> torch.Tensor:
    bias = torch.zeros(x.shape[-1], device="npu")
    return (x + bias) * (2 if x.device.type == "cpu" else 3)


def test_dynamo_compiles_a_forward_that_names_the_npu_device() -> None:
    graphs, backend = _recording_backend()
    torch._dynamo.reset()
    with npu_on_cpu():
        x = torch.randn(3, 4).npu()
        compiled = torch.compile(_forward, backend=backend, fullgraph=True)(x)
        torch.testing.assert_close(compiled, _forward(x))
    torch._dynamo.reset()
    calls = [(n.target, n.kwargs.get("device")) for n in graphs[0].graph.nodes if n.op in ("call_function", "call_method")]
    # x.device.type was "cpu": the branch taken; operators stay operators, as on an NPU machine
    assert calls == [(torch.zeros, "cpu"), (operator.add, None), (operator.mul, None)]


MODEL_FOR_AN_NPU = """
import torch
import torch_npu

torch.npu.set_device(0)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.linear(x)) + torch.ones(4, device="npu")


torch.manual_seed(0)
model = Model().npu().eval()
example_inputs = (torch.randn(2, 4).npu(),)
"""


def test_fxlab_trace_runs_a_model_file_written_for_an_npu(tmp_path: Path) -> None:
    model = tmp_path / "for_an_npu.py"
    model.write_text(MODEL_FOR_AN_NPU)
    code, out, err = run_cli("trace", str(model), "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["status"] == "ok" and summary["check"]["ok"]
    assert " ".join(err.split()).count("note: no NPU here: the npu device runs on the CPU") == 1
