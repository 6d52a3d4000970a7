"""What fxlab says an op has: its kernels by dispatch key, where each came from."""

from __future__ import annotations

import torch

from fxlab.npu_kernels import npu_kernels_serve_cpu
from fxlab.ops.inspect_op import dispatch_kernels


def test_the_copy_of_an_npu_kernel_that_serves_cpu_tensors_is_not_the_ops_cpu_kernel():
    lib = torch.library.Library("fxlab_inspect_test", "FRAGMENT")
    lib.define("npu_only(Tensor x) -> Tensor")
    with npu_kernels_serve_cpu():
        lib.impl("npu_only", lambda x: x + 1, "PrivateUse1")
        assert torch._C._dispatch_has_kernel_for_dispatch_key("fxlab_inspect_test::npu_only", "CPU")  # it runs on CPU tensors here
        kernels = dispatch_kernels("fxlab_inspect_test::npu_only")
    assert "PrivateUse1" in kernels and "CPU" not in kernels
