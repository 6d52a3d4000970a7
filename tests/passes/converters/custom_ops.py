"""Custom ops the converter tests define, in one ``fxlabtest`` library."""
from __future__ import annotations

from typing import Any, Callable

import torch

LIB = torch.library.Library("fxlabtest", "FRAGMENT")  # noqa: TOR901 - ops that only tests use


def define_test_op(schema: str, cpu: Callable[..., Any], fake: Callable[..., Any]) -> Any:
    """Define ``fxlabtest::<name>`` from ``schema`` with a CPU kernel and a fake; return
    its default overload."""
    name = schema.split("(")[0]
    LIB.define(schema)
    LIB.impl(name, cpu, "CPU")
    torch.library.register_fake(f"fxlabtest::{name}", fake, lib=LIB)
    return getattr(torch.ops.fxlabtest, name).default
