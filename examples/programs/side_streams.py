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


class TwoStreams(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w_main = torch.nn.Parameter(torch.randn(16, 16) * 0.1)
        self.w_side = torch.nn.Parameter(torch.randn(16, 16) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        main = torch.relu(x @ self.w_main)
        with torchair.scope.npu_stream_switch("side", 0):
            side = torch.sigmoid(x @ self.w_side)  # on the user stream "side"
        return main * 2 + side


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()

    torch.npu.set_device(0)
    torch.manual_seed(0)
    config = torchair.CompilerConfig()
    config.mode = "reduce-overhead"
    model = torch.compile(TwoStreams().npu().eval(), backend=torchair.get_npu_backend(compiler_config=config))

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
