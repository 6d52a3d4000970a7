import torch
from fxlab.ops import Sample, define_op
from fxlab.ir import ge


def scale_cpu(x, y, alpha):            # kernel per device: "cpu", "npu", "default", ...
    return x * alpha + y


def scale_fake(x, y, alpha):           # registered as the op's Meta kernel
    return torch.empty_like(x)


def convert_scale(x, y, alpha, *, meta_outputs=None):
    """mylib::scale(Tensor x, Tensor y, float alpha) -> Tensor"""
    return ge.op("Scale", {"x": x, "y": y}, {"alpha": float(alpha)}, outputs=("z",))[0]


define_op(
    "mylib::scale(Tensor x, Tensor y, float alpha) -> Tensor",
    kernels={"cpu": scale_cpu},
    fake=scale_fake,
    converter=convert_scale,            # optional: TorchAir's auto converter may do
    prototype="scale.json",             # the op's msOpGen JSON, beside this file
    samples=[Sample((torch.randn(2, 3), torch.randn(2, 3), 0.5))],
)
