"""Stand-in for ``torch_npu`` while TorchAir's package is being imported from a directory.

One TorchAir module imports ``torch_npu`` at module level (it reads NPU-only dtypes inside
its functions, which only run for that NPU op). This empty module lets that import pass.
It has no submodules and no attributes, so TorchAir's guarded imports of torch_npu
pieces (``from torch_npu.distributed import ...``) fail as they do on a machine without
torch_npu, and TorchAir takes its no-torch_npu path. It is served only during the
package import and removed from ``sys.modules`` afterwards, because TorchAir checks
``'torch_npu' in sys.modules`` at conversion time to decide whether an NPU is present.
"""
