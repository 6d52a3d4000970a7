"""A mixture-of-experts layer with a shared expert on a second stream and the routed
experts in a SuperKernel, written the way Ascend serving code writes it for TorchAir's
graph mode: small wrappers around ``torchair.scope`` that switch off together.

    fxlab trace examples/multistream_moe.py
    fxlab trace examples/multistream_moe.py --converter torchair
    fxlab scopes examples/multistream_moe.py

The router runs on the main stream. The shared expert runs on the user stream
``moe_shared`` (``npu_stream_switch``), and its input waits for the router's logits
(``npu_wait_tensor``: in the GE graph an ``Identity`` with a control edge from the
router), so that both streams start from the same point. The routed experts sit in the
SuperKernel ``moe_experts``, their two matmuls under ``limit_core_num(16, 32)``. On the
CPU the wait has nothing to wait for and the streams run in order: eager and compiled
give the same numbers.
"""

import contextlib

import torch
import torchair
from torch import nn

TOKENS, HIDDEN, INTERMEDIATE, EXPERTS, TOP_K = 8, 32, 64, 4, 2
MULTISTREAM = True  # graph mode only, as serving code enables it


def npu_stream_switch(tag: str, priority: int, *, enabled: bool = True):
    return torchair.scope.npu_stream_switch(tag, priority) if enabled else contextlib.nullcontext()


def npu_wait_tensor(tensor: torch.Tensor, dependency: torch.Tensor, *, enabled: bool = True) -> torch.Tensor:
    return torchair.scope.npu_wait_tensor(tensor, dependency) if enabled else tensor


def super_kernel(scope: str, options: str = "", *, enabled: bool = True):
    return torchair.scope.super_kernel(scope, options) if enabled else contextlib.nullcontext()


class SwiGluExpert(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate_up = nn.Linear(HIDDEN, 2 * INTERMEDIATE, bias=False)
        self.down = nn.Linear(INTERMEDIATE, HIDDEN, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(nn.functional.silu(gate) * up)


class MultiStreamMoe(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.router = nn.Linear(HIDDEN, EXPERTS, bias=False)
        self.shared_expert = SwiGluExpert()
        self.w_gate_up = nn.Parameter(torch.randn(EXPERTS, HIDDEN, 2 * INTERMEDIATE) * HIDDEN**-0.5)
        self.w_down = nn.Parameter(torch.randn(EXPERTS, INTERMEDIATE, HIDDEN) * INTERMEDIATE**-0.5)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        logits = self.router(hidden)
        with npu_stream_switch("moe_shared", 0, enabled=MULTISTREAM):
            shared_in = npu_wait_tensor(hidden, logits, enabled=MULTISTREAM)
            shared = self.shared_expert(shared_in)
        with super_kernel("moe_experts", "stream-fusion=1", enabled=MULTISTREAM):
            weights, chosen = torch.softmax(logits, dim=-1).topk(TOP_K, dim=-1)
            weights = weights / weights.sum(dim=-1, keepdim=True)
            # every expert on every token, kept where the router chose it
            dense = torch.zeros_like(logits).scatter(1, chosen, weights)
            with torchair.scope.limit_core_num(16, 32):
                gate_up = torch.einsum("th,ehi->eti", hidden, self.w_gate_up)
                gate, up = gate_up.chunk(2, dim=-1)
                routed = torch.einsum("eti,eih->eth", nn.functional.silu(gate) * up, self.w_down)
            routed = (routed * dense.t().unsqueeze(-1)).sum(dim=0)
        return routed + shared


def get_model_and_inputs():
    torch.manual_seed(0)
    return MultiStreamMoe().eval(), (torch.randn(TOKENS, HIDDEN),)
