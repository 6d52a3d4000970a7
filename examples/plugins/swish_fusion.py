"""A fusion pattern written for TorchAir: ``x * sigmoid(x)`` becomes one fused op.

    fxlab trace examples/user_passes.py --plugin examples/plugins/swish_fusion.py
    fxlab trace examples/user_passes.py --plugin examples/plugins/swish_fusion.py --mode reduce-overhead

The fused op ``fxlab_example::swish`` is defined here (CPU kernel and fake function) with
a converter to the GE op ``Swish``; ``torchair.register_replacement`` registers the
pattern, which TorchAir's pattern fusion pass (``apply_pattern_passes``) applies in both
modes. The trace lists each match: the nodes replaced and the nodes put in their place.
"""
import torch
import torchair


if not hasattr(torch.ops.fxlab_example, "swish"):  # defined once per process

    @torch.library.custom_op("fxlab_example::swish", mutates_args=())
    def swish(x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)

    @swish.register_fake
    def _(x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)


@torchair.register_fx_node_ge_converter(torch.ops.fxlab_example.swish.default)
def convert_swish(x, meta_outputs=None):
    return torchair.ge.custom_op("Swish", inputs={"x": x}, outputs=["y"], attrs={"scale": torchair.ge.attr.Float(1.0)})


def swish_by_hand(x):
    return x * torch.sigmoid(x)


def fused_swish(x):
    return torch.ops.fxlab_example.swish.default(x)


# skip_duplicates: a second import of this file (another trace in the same process) is a no-op.
torchair.register_replacement(search_fn=swish_by_hand, replace_fn=fused_swish, example_inputs=[torch.randn(4, 8)], skip_duplicates=True)
