"""fxlab.compat.torchair_nodes: what a node whose TorchAir converter raised is recorded with."""
from __future__ import annotations

import sys

import pytest
import torch
import torch.fx as fx

from fxlab.compat.torchair_nodes import _raised_message


def _node(target) -> fx.Node:
    graph = fx.Graph()
    x = graph.placeholder("x")
    return graph.call_function(target, (x,))


def test_a_refused_op_with_a_known_rewrite_names_it():
    message = _raised_message(_node(torch.ops.aten.index_copy.default), NotImplementedError("ge_converter is not implemented!"))
    assert message.startswith("TorchAir's converter for aten.index_copy.default raised at node index_copy_default: NotImplementedError: ge_converter is not implemented!")
    assert message.endswith(". Fix: on Ascend, write the KV cache with torch_npu.scatter_update_(cache, positions, new, axis), "
                            "torch_npu.npu_scatter_nd_update_(cache, indices, new) or a slice assignment (cache[:, :, start:end] = new), which TorchAir converts")


def test_another_error_of_that_op_gets_no_rewrite():
    message = _raised_message(_node(torch.ops.aten.index_copy.default), ValueError("bad shape"))
    assert message == "TorchAir's converter for aten.index_copy.default raised at node index_copy_default: ValueError: bad shape"


def test_a_plugin_converter_that_raised_inside_torchair_is_named_not_torchairs_frame(tmp_path):
    from fxlab.capture.loader import load_python_file

    # Apart from the plugin's folder, which loading the plugin makes importable for good.
    torchair_file = tmp_path / "site" / "torchair" / "ge" / "ge_custom.py"  # where TorchAir's custom_op raises
    torchair_file.parent.mkdir(parents=True)
    torchair_file.write_text("def custom_op(op_type):\n    raise RuntimeError(f'No AscendIR {op_type} was found to be registered.')\n")
    plugin = tmp_path / "plugins" / "my_plugin.py"
    plugin.parent.mkdir()
    plugin.write_text("import ge_custom\n\n\ndef convert_mine(x):\n    return ge_custom.custom_op('Mine')\n")
    sys.path.insert(0, str(torchair_file.parent))
    try:
        convert = load_python_file(plugin, role="plugin").convert_mine
        with pytest.raises(RuntimeError) as info:
            convert(None)
    finally:
        sys.path.remove(str(torchair_file.parent))
        sys.modules.pop("ge_custom", None)
    message = _raised_message(_node(torch.ops.aten.index_copy.default), info.value)
    assert f" in convert_mine at {plugin}:5 (`return ge_custom.custom_op('Mine')`): RuntimeError: No AscendIR Mine" in message
    assert message.endswith("[in TorchAir's ge/ge_custom.py:2]")
