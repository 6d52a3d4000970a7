"""A script written for an NPU machine, in TorchAir's quick-start style: the device set,
the model and its input moved to the npu, a side stream with events, a compiled run."""
import torch
import torch_npu  # noqa: F401
import torchair

torch.npu.set_device(0)
config = torchair.CompilerConfig()
npu_backend = torchair.get_npu_backend(compiler_config=config)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)

    def forward(self, x):
        shift = torch.full((x.shape[-1],), 0.5, device="npu")
        scale = torch.ones(1, device=x.device) * 2
        return torch.relu(self.linear(x) + shift) * scale


torch.manual_seed(0)
model = Model().npu()
x = torch.randn(4, 16).to("npu:0")
side = torch.npu.Stream()
start, done = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
start.record()
side.wait_stream(torch.npu.current_stream())
with torch.npu.stream(side):
    eager = model(x)
    done.record()
torch.npu.current_stream().wait_stream(side)
eager.record_stream(torch.npu.current_stream())
compiled = torch.compile(model, backend=npu_backend)(x)
torch.npu.synchronize()
RESULTS = {
    "eager": eager,
    "compiled": compiled,
    "elapsed_ms": start.elapsed_time(done),
    "peak": torch.npu.max_memory_allocated(),
    "device": torch.npu.current_device(),
    "count": torch.npu.device_count(),
}
