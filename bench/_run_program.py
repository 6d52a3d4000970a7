"""The program bench_run.py times: a Llama-style decoder (examples/llama_decoder.py)
compiled with the backend named on the command line and called as a serving warm-up
calls it: each prompt length once, then a few steps at the last. Serving code compiles a
graph per size bucket (``dynamic=False``, as the ACL graph path needs static shapes), so
the warm-up is one compile per length. The same program for both sides; only the backend
differs. With ``dynamic`` as the last argument the compile is Dynamo's default instead
(static first, the length dynamic on the recompile).

    python bench/_run_program.py aot_eager|npu LAYERS [dynamic]
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from llama_decoder import build  # noqa: E402

LENGTHS = (4, 8)
STEPS = 4


def main() -> None:
    backend, layers = sys.argv[1], int(sys.argv[2])
    dynamic = None if sys.argv[3:] == ["dynamic"] else False
    model, (tokens,) = build(layers)
    compiled = torch.compile(model, backend=backend, dynamic=dynamic)
    with torch.no_grad():
        for length in LENGTHS:
            compiled(tokens[:, :length])
        for _ in range(STEPS):
            out = compiled(tokens[:, : LENGTHS[-1]])
    print(f"{backend}: {layers} layers, logits {tuple(out.shape)}, sum {out.sum().item():.3f}")


if __name__ == "__main__":
    main()
