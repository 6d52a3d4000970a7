"""What fxlab says an op has: its kernels by dispatch key, where each came from."""

from __future__ import annotations

import inspect

import torch

from fxlab.npu_kernels import npu_kernels_serve_cpu
from fxlab.ops.inspect_op import dispatch_kernels, op_facts


def test_the_copy_of_an_npu_kernel_that_serves_cpu_tensors_is_not_the_ops_cpu_kernel():
    lib = torch.library.Library("fxlab_inspect_test", "FRAGMENT")
    lib.define("npu_only(Tensor x) -> Tensor")
    with npu_kernels_serve_cpu():
        lib.impl("npu_only", lambda x: x + 1, "PrivateUse1")
        assert torch._C._dispatch_has_kernel_for_dispatch_key("fxlab_inspect_test::npu_only", "CPU")  # it runs on CPU tensors here
        kernels = dispatch_kernels("fxlab_inspect_test::npu_only")
    assert "PrivateUse1" in kernels and "CPU" not in kernels


def test_a_fake_function_is_placed_where_register_fake_was_called_not_in_torch():
    lib = torch.library.Library("fxlab_inspect_fake", "FRAGMENT")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    line = inspect.currentframe().f_lineno + 1
    torch.library.register_fake("fxlab_inspect_fake::twice", lambda x: torch.empty_like(x), lib=lib)
    facts = op_facts(torch.ops.fxlab_inspect_fake.twice.default)
    assert facts.fake == f"{__file__}:{line}"
    assert facts.kernels["CPU"].startswith(f"{__file__}:")  # the dispatcher's record: where the Library was made
