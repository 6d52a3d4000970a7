"""Stand-in ``npugraph_ex.scope``: ``limit_core_num`` and ``deterministic`` with
npugraph_ex's own markers (``npugraph_ex::scope_enter`` / ``scope_exit``)."""

from __future__ import annotations

from typing import Any

from fxlab.scope import NpugraphExScope

__all__ = ["limit_core_num", "deterministic"]


def limit_core_num(op_aicore_num: int, op_vectorcore_num: int, stream: Any = None) -> Any:
    if stream is not None:
        raise NotImplementedError(
            "npugraph_ex.scope.limit_core_num(stream=...) names an NPU stream; a CPU trace has none. Leave stream out."
        )
    return NpugraphExScope([("_op_aicore_num", str(op_aicore_num)), ("_op_vectorcore_num", str(op_vectorcore_num))])


def deterministic(level: int) -> Any:
    if level not in (0, 1, 2, 3):
        raise ValueError(f"deterministic level must be 0, 1, 2, or 3, got {level}")
    return NpugraphExScope([("_op_deterministic_level", str(level))])
