"""Stand-in ``torch_npu.meta``."""
