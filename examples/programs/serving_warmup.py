"""A serving warm-up over batch sizes, as serving code compiles its model for an NPU:
the decode step with torch_npu's ``"npugraph_ex"`` backend (the ACL graph path, with
npugraph_ex's options), the prefill with the ``"npu"`` backend (TorchAir's GE graph).
The second batch size makes Dynamo recompile the decode step; the third reuses it.

    fxlab run -- python examples/programs/serving_warmup.py
"""

import torch
import torch_npu  # noqa: F401 - registers the npu device and the "npu" / "npugraph_ex" backends

HIDDEN = 32
MAX_BATCH = 8


class Decoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(HIDDEN, 3 * HIDDEN)
        self.out = torch.nn.Linear(HIDDEN, HIDDEN)
        self.register_buffer("k_cache", torch.zeros(MAX_BATCH, HIDDEN))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        self.k_cache[: x.shape[0]].copy_(k)  # the cache is written in place
        scores = torch.softmax(q * self.k_cache[: x.shape[0]], dim=-1)
        return self.out(scores * v) + x


def prefill(model: Decoder, x: torch.Tensor) -> torch.Tensor:
    return model.out(torch.relu(model.qkv(x)[..., :HIDDEN])).mean(dim=0)


def main() -> None:
    torch.npu.set_device(0)
    torch.manual_seed(0)
    model = Decoder().to("npu").eval()
    decode = torch.compile(model, backend="npugraph_ex", options={"clone_input": False})
    first = torch.compile(prefill, backend="npu", dynamic=False)
    with torch.no_grad():
        print("prefill:", tuple(first(model, torch.randn(4, HIDDEN, device="npu")).shape))
        for batch in (1, 2, 4):  # the warm-up: each batch size once
            out = decode(torch.randn(batch, HIDDEN, device="npu"))
            print(f"decode batch {batch}: {tuple(out.shape)}")
    torch.npu.synchronize()


if __name__ == "__main__":
    main()
