import torch
import torchair

from fxlab.ops import reference_kernel

lib = torch.library.Library("mylib", "FRAGMENT")
lib.define("scale_add(Tensor x, Tensor y, float alpha) -> Tensor")
lib.impl("scale_add", lambda x, y, alpha: x * alpha + y, "CPU")
lib.impl("scale_add", lambda x, y, alpha: torch.empty_like(x), "Meta")


@torchair.register_fx_node_ge_converter(torch.ops.mylib.scale_add.default)
def convert_scale_add(x, y, alpha, meta_outputs=None):
    # Two GE ops: the Ascend C kernel ScaleBy, then AddCustom (one of fxlab's seed ops).
    scaled = torchair.ge.custom_op("ScaleBy", inputs={"x": x}, attrs={"alpha": torchair.ge.attr.Float(alpha)}, outputs=["y"])
    return torchair.ge.custom_op("AddCustom", inputs={"x": scaled, "y": y}, outputs=["z"])


@reference_kernel("ScaleBy")         # what ScaleBy computes, on CPU: the IR check runs it
def scale_by(x, *, alpha):             # the op's inputs in order, its attrs by name
    return x * alpha
