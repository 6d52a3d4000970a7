"""Stand-in ``torchair.scope``: TorchAir's scopes (the same ``air::scope_enter`` /
``air::scope_exit`` markers TorchAir uses, from :mod:`fxlab.scope`) and
``npu_wait_tensor`` (``air::wait_tensor``, defined by the block that stands in for
torchair: fxlab's GE conversion turns it into an ``Identity`` with a control edge from
the dependency, as TorchAir's does; run eagerly it is a copy, see
:mod:`fxlab.compat.graph_only_ops`)."""

from __future__ import annotations

import torch

from fxlab.scope import data_dump, deterministic, limit_core_num, npu_stream_switch, op_never_timeout, super_kernel

__all__ = [
    "npu_wait_tensor",
    "npu_stream_switch",
    "super_kernel",
    "limit_core_num",
    "deterministic",
    "op_never_timeout",
    "data_dump",
]
# ``npu_wait_tensor(self, dependency)`` is the operator itself, defined by the block that
# stands in for torchair: no Python frame of fxlab's stands between the user's line and the
# operator in the graph's stack traces, and Dynamo has no function of a module named
# ``torchair.scope`` to remember.
npu_wait_tensor = torch.ops.air.wait_tensor
