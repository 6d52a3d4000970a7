"""Stand-in ``torch_npu.op_plugin``."""
