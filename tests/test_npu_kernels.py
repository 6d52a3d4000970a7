"""A program's npu kernels serve CPU tensors for one block, and only then."""

from __future__ import annotations

import itertools

import pytest
import torch

from fxlab.npu_kernels import npu_kernels_serve_cpu, serves_cpu

_NAMES = itertools.count()


def _op(schema: str = "(Tensor x) -> Tensor") -> tuple[torch.library.Library, str]:
    """A fresh op (names are never reused within a test process)."""
    name = f"f{next(_NAMES)}"
    lib = torch.library.Library("fxlab_npu_kernels_test", "FRAGMENT")
    lib.define(name + schema)
    return lib, name


def _call(name: str, *args: object) -> torch.Tensor:
    return getattr(torch.ops.fxlab_npu_kernels_test, name)(*args)


def test_a_kernel_registered_for_the_npu_key_runs_for_cpu_tensors_in_the_block_only():
    x = torch.arange(4.0)
    lib, name = _op()
    with npu_kernels_serve_cpu():
        lib.impl(name, lambda t: t * 3 + 1, "PrivateUse1")  # as vLLM Ascend's direct_register_custom_op does
        assert torch.equal(_call(name, x), x * 3 + 1)
        assert serves_cpu(f"fxlab_npu_kernels_test::{name}")
    assert not serves_cpu(f"fxlab_npu_kernels_test::{name}")
    assert not torch._C._dispatch_has_kernel_for_dispatch_key(f"fxlab_npu_kernels_test::{name}", "CPU")
    with pytest.raises(NotImplementedError, match="CPU"):
        _call(name, x)


def test_custom_op_device_types_npu_parses_and_serves_cpu_tensors():
    name = f"g{next(_NAMES)}"
    with npu_kernels_serve_cpu():

        @torch.library.custom_op(f"fxlab_npu_kernels_test::{name}", mutates_args=("out",), device_types="npu")
        def add_into(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> None:
            out.copy_(x + y)

        out = torch.zeros(3)
        _call(name, torch.ones(3), torch.full((3,), 2.0), out)
        assert out.tolist() == [3.0, 3.0, 3.0]
        assert torch._C._dispatch_key_for_device("cpu") == "CPU"  # other devices as torch names them
    with pytest.raises(RuntimeError, match="npu"):
        torch._C._dispatch_key_for_device("npu")


def test_the_programs_own_cpu_kernel_wins_whether_registered_before_or_after():
    x = torch.arange(3.0)
    before, name_before = _op()
    after, name_after = _op()
    with npu_kernels_serve_cpu():
        before.impl(name_before, lambda t: t - 1, "CPU")
        before.impl(name_before, lambda t: t + 100, "PrivateUse1")
        assert torch.equal(_call(name_before, x), x - 1) and not serves_cpu(f"fxlab_npu_kernels_test::{name_before}")
        after.impl(name_after, lambda t: t + 100, "PrivateUse1")
        after.impl(name_after, lambda t: t * 2, "CPU")  # no clash with fxlab's copy: it is dropped first
        assert torch.equal(_call(name_after, x), x * 2) and not serves_cpu(f"fxlab_npu_kernels_test::{name_after}")
    assert torch.equal(_call(name_after, x), x * 2)  # the program's kernel outlives the block
