from __future__ import annotations

import types

import pytest

from fxlab.capture.torchair_config import ACLGRAPH_STAGES, GE_STAGES, check_mode, resolve_options, stages_of_mode
from fxlab.compat.config import CompilerConfig
from fxlab.errors import UsageError
from fxlab.passes.pattern_fusion import RegisteredPattern, forget_patterns, register_pattern


def test_each_mode_has_its_stages_and_a_bad_mode_is_refused():
    assert stages_of_mode("max-autotune") == GE_STAGES and stages_of_mode("npugraph_ex") == stages_of_mode("reduce-overhead") == ACLGRAPH_STAGES
    with pytest.raises(UsageError, match="choose max-autotune, reduce-overhead, npugraph_ex"):
        check_mode("eager")


def test_mode_overrides_the_files_config_and_says_so():
    config = CompilerConfig()
    config.mode = "reduce-overhead"
    module = types.SimpleNamespace(compiler_config=config)
    assert resolve_options(module).mode == "reduce-overhead"
    options = resolve_options(module, "max-autotune")
    assert options.mode == "max-autotune" and options.notes == ("--mode max-autotune overrides the model file's mode reduce-overhead",)


def test_torchairs_own_npugraph_ex_mode_is_its_aclgraph_path():
    config = CompilerConfig()
    config.mode = "npugraph_ex"  # TorchAir's nested config: its own aclgraph passes
    options = resolve_options(types.SimpleNamespace(compiler_config=config))
    assert options.mode == "reduce-overhead" and "as reduce-overhead" in options.notes[0]


def test_registered_patterns_are_followed_and_listed():
    pattern = RegisteredPattern(lambda x: x, lambda x: x, (), where="plugin.py:3")
    register_pattern(pattern)
    try:
        options = resolve_options(None)
        assert options.patterns == (pattern,) and options.set_by[-1].endswith("(torchair.register_replacement at plugin.py:3)")
    finally:
        forget_patterns()
