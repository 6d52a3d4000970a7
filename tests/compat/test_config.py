"""The stand-in TorchAir / npugraph_ex API a model or plugin file calls: configs, the
backend (which reports its config), register_replacement (which records the pattern)."""

from __future__ import annotations

import sys

import torch

from fxlab.compat.layer import compat_layer
from fxlab.passes.pattern_fusion import registered_patterns
from fxlab.passes.torchair_options import config_of_module, options_from_config

PLUGIN = """
import torch
import npugraph_ex

def search(x):
    return x * torch.sigmoid(x)

def replace(x):
    return torch.relu(x)

npugraph_ex.register_replacement(search, replace, [torch.randn(2)])
config = npugraph_ex.CompilerConfig()
config.input_inplace_pass = False
backend = npugraph_ex.get_npu_backend(compiler_config=config)
"""


def test_a_plugins_pattern_and_backend_config_reach_the_trace_and_leave_with_the_block(tmp_path):
    from fxlab.capture.loader import load_python_file

    path = tmp_path / "plugin.py"
    path.write_text(PLUGIN)
    with compat_layer() as session:
        module = load_python_file(path, role="plugin")
        (pattern,) = registered_patterns()
        assert pattern.registrar == "npugraph_ex.register_replacement" and pattern.where == "plugin.py:11"
        config, where = config_of_module(None)
        assert where == "the config the model file gave get_npu_backend" and config is module.config
        options = options_from_config(config)
        assert (options.mode, options.input_inplace_pass, options.inplace_pass) == ("npugraph_ex", False, True)
        assert "npugraph_ex" in session.used
    assert registered_patterns() == () and config_of_module(None) is None and "npugraph_ex" not in sys.modules


def test_npugraph_ex_scopes_trace_its_own_markers():
    with compat_layer():
        import npugraph_ex

        def f(x):
            with npugraph_ex.scope.limit_core_num(4, 8):
                y = x * 2
            with npugraph_ex.scope.deterministic(1):
                return y.sum()

        from tests.functional_graphs import functional_graph

        gm = functional_graph(lambda x: (f(x),), torch.randn(3))
    markers = [(str(n.target), n.args) for n in gm.graph.nodes if "scope" in str(n.target)]
    assert markers[0] == ("npugraph_ex.scope_enter.default", (["_op_aicore_num", "_op_vectorcore_num"], ["4", "8"]))
    assert markers[2] == ("npugraph_ex.scope_enter.default", (["_op_deterministic_level"], ["1"]))


def test_the_stand_in_config_takes_torchairs_modes_only_and_reads_back_as_torchairs_option():
    import pytest

    from fxlab.compat.config import CompilerConfig

    config = CompilerConfig()
    assert (config.mode.value, config.mode) == ("max-autotune", "max-autotune")  # TorchAir's OptionValue has .value
    config.mode = "reduce-overhead"
    assert config.mode.value == "reduce-overhead" and options_from_config(config).mode == "reduce-overhead"
    with pytest.raises(ValueError, match=r"Value 'reduce_overhead' \(type: <class 'str'>\) not in optional list \['max-autotune', 'reduce-overhead', 'npugraph_ex'\]"):
        config.mode = "reduce_overhead"  # a typo TorchAir refuses: never traced as another mode
    assert config.mode == "reduce-overhead"
