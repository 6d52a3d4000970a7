"""Reading the inputs and attrs of the GE ops TorchAir makes for torch_npu's operators.

Those ops come from two styles of TorchAir builder: one writes every prototype input
(an absent optional input as an empty one), the other leaves absent optional inputs out
altogether. Their kernels therefore read inputs by name (the input descs keep the
prototype's names: :func:`fxlab.ir.kernels.registry.named_inputs`), never by position;
here, a dynamic input's tensors and the zeros of outputs a model does not read.
"""

from __future__ import annotations

from typing import Any

import torch

from fxlab.ir.model import IrOp, torch_dtype


def dynamic_inputs(named: dict[str, Any], prefix: str) -> list[Any]:
    """A dynamic input's tensors (``x0``, ``x1``, ... under ``prefix``), in order."""
    out: list[Any] = []
    while f"{prefix}{len(out)}" in named:
        out.append(named[f"{prefix}{len(out)}"])
    return out


def zeros_of(op: IrOp, index: int) -> torch.Tensor:
    """Zeros of output ``index``'s desc (an output the model does not read)."""
    desc = op.output_desc[index]
    return torch.zeros([max(d, 0) for d in desc.shape], dtype=torch_dtype(desc.dtype))
