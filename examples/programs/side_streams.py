"""Streams and events as serving code uses them on an NPU: inputs copied on a side
stream while the default stream waits for it, events timing the compiled step, and a
stream switch inside the compiled function (TorchAir's ``npu_stream_switch``), compiled
for the ACL graph path (``mode="reduce-overhead"``).

    fxlab run -- python examples/programs/side_streams.py --steps 3
"""

import argparse

import torch
import torch_npu  # noqa: F401 - the npu device
import torchair


class GatedStep(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)
        self.gate = torch.nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.proj(x))
        with torchair.scope.npu_stream_switch("gate", 0):
            g = torch.sigmoid(self.gate(x))  # on the user stream "gate", beside the projection
        return h * g


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()

    torch.npu.set_device(0)
    torch.manual_seed(0)
    config = torchair.CompilerConfig()
    config.mode = "reduce-overhead"
    model = torch.compile(GatedStep().npu().eval(), backend=torchair.get_npu_backend(compiler_config=config))

    copy_stream = torch.npu.Stream()
    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    with torch.no_grad():
        for step in range(args.steps):
            with torch.npu.stream(copy_stream):
                x = torch.full((4, 16), float(step), device="npu")
            torch.npu.current_stream().wait_stream(copy_stream)
            start.record()
            out = model(x)
            end.record()
            torch.npu.synchronize()
            print(f"step {step}: mean {out.mean().item():.4f} ({start.elapsed_time(end):.3f} ms)")


if __name__ == "__main__":
    main()
