import torch
import torchair

config = torchair.CompilerConfig()
config.mode = "max-autotune"
config.ge_config.aicore_num = "24|48"
config.debug.graph_dump.type = "pbtxt"
backend = torchair.get_npu_backend(compiler_config=config)


def model(x, y):
    with torchair.scope.super_kernel("sk1", "stream-fusion=1"):
        return torch.ops.npu.npu_add_custom(x, y)
