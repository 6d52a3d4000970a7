"""A script that fails after its compiled model ran: it fails the same way under
fxlab (the same traceback on stderr, exit code 1), and the compile is still saved.

    fxlab run -- python examples/programs/fails.py
"""

import torch
import torch_npu  # noqa: F401 - the npu device
import torchair


def check_output(out: torch.Tensor, limit: float) -> None:
    if out.abs().max().item() > limit:
        raise ValueError(f"output out of range: max |out| {out.abs().max().item():.3f} > {limit}")


def main() -> None:
    torch.npu.set_device(0)
    model = torch.compile(torch.nn.Linear(8, 8).npu(), backend=torchair.get_npu_backend())
    with torch.no_grad():
        out = model(torch.full((2, 8), 10.0).npu())
    check_output(out, limit=1.0)


if __name__ == "__main__":
    main()
