from __future__ import annotations

import types

import pytest

from fxlab.compat.config import CompilerConfig, NpugraphExConfig
from fxlab.errors import UsageError
from fxlab.passes.pattern_fusion import RegisteredPattern, forget_patterns, register_pattern, registered_patterns
from fxlab.passes.torchair_options import (
    ACLGRAPH_STAGES,
    GE_STAGES,
    TorchAirOptions,
    check_mode,
    config_of_module,
    forget_observed_configs,
    observe_backend_config,
    options_from_config,
    resolve_options,
    stages_of_mode,
)


def _pass(gm, example_inputs, config):
    return None


def test_torchairs_nested_config_sets_the_mode_switches_and_passes():
    config = CompilerConfig()
    config.mode = "reduce-overhead"
    config.experimental_config.remove_noop_ops = False
    config.debug.aclgraph.disable_reinplace_inplaceable_ops_pass = True
    config.post_grad_custom_post_pass = _pass
    options = options_from_config(config)
    assert (options.mode, options.remove_noop_ops, options.inplace_pass, options.input_inplace_pass) == ("reduce-overhead", False, False, True)
    assert options.custom_post_pass is _pass and options.custom_pre_pass is None and options.config is config
    assert options.set_by == (
        "mode=reduce-overhead (compiler_config)",
        "experimental_config.remove_noop_ops=False (compiler_config)",
        "debug.aclgraph.disable_reinplace_inplaceable_ops_pass=True (compiler_config)",
        f"post_grad_custom_post_pass=_pass (test_torchair_options.py:{_pass.__code__.co_firstlineno}) (compiler_config)",
    )


def test_npugraph_exs_flat_config_reads_its_own_names():
    config = NpugraphExConfig()
    config.inplace_pass = False
    config.remove_cat_ops = False
    options = options_from_config(config)
    assert (options.mode, options.inplace_pass, options.remove_cat_ops, options.input_inplace_pass) == ("npugraph_ex", False, False, True)
    assert options.set_by == ("mode=npugraph_ex (compiler_config)", "remove_cat_ops=False (compiler_config)", "inplace_pass=False (compiler_config)")


class _Option:
    def __init__(self, value):
        self.value = value


def test_torchairs_own_option_values_are_read():
    real = types.SimpleNamespace(mode=_Option("max-autotune"), experimental_config=types.SimpleNamespace(pattern_fusion_pass=_Option(False)))
    options = options_from_config(real)
    assert options.mode == "max-autotune" and options.pattern_fusion_pass is False and options.remove_noop_ops is True


def test_the_module_config_wins_over_the_one_given_get_npu_backend():
    given = CompilerConfig()
    observe_backend_config(given)
    try:
        assert config_of_module(types.SimpleNamespace()) == (given, "the config the model file gave get_npu_backend")
        own = CompilerConfig()
        assert config_of_module(types.SimpleNamespace(compiler_config=own)) == (own, "compiler_config in the model file")
    finally:
        forget_observed_configs()
    assert config_of_module(types.SimpleNamespace()) is None


def test_mode_is_overridden_and_said_so():
    options = TorchAirOptions().with_mode("npugraph_ex")
    assert options.mode == "npugraph_ex" and options.aclgraph and options.set_by == ("mode=npugraph_ex (--mode)",)


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
    assert options.mode == "max-autotune" and options.notes == ("--mode max-autotune overrides the model file's CompilerConfig's mode reduce-overhead",)


def test_torchairs_own_npugraph_ex_mode_is_its_aclgraph_path():
    config = CompilerConfig()
    config.mode = "npugraph_ex"  # TorchAir's nested config: its own aclgraph passes
    options = resolve_options(types.SimpleNamespace(compiler_config=config))
    assert options.mode == "reduce-overhead" and "as reduce-overhead" in options.notes[0]


def test_registered_patterns_are_followed_and_listed():
    pattern = RegisteredPattern(lambda x: x, lambda x: x, (), where="plugin.py:3")
    register_pattern(pattern)
    try:
        options = resolve_options(None, patterns=registered_patterns())
        assert options.patterns == (pattern,) and options.set_by[-1].endswith("(torchair.register_replacement at plugin.py:3)")
    finally:
        forget_patterns()


def test_options_fxlab_does_not_follow_are_named_with_the_one_a_misspelt_name_is_close_to():
    from fxlab.passes.torchair_options import options_from_config

    config = CompilerConfig()
    config.mode = "reduce-overhead"
    config.experimental_config.frozen_parameter = True
    with pytest.raises(ValueError, match=r"^_AclGraphDebugConfig has no option disable_reinplace_inplaceable_ops, all options \["):
        config.debug.aclgraph.disable_reinplace_inplaceable_ops = True  # the option's name ends in _pass: TorchAir refuses it
    config.debug.aclgraph.remove_cat_ops = False  # followed
    config.ge_config.aicore_num = "24|48"  # GE's, not the FX graph's
    config.debug.graph_dump.type = "py"
    (note,) = options_from_config(config).notes
    assert note.startswith(
        "the compiler_config also sets experimental_config.frozen_parameter=True, which fxlab does not follow: its graphs "
        "(and TorchAir's own run, where it compares them with one) are made without it (fxlab follows: debug.aclgraph.disable_reinplace_"
    )
    followed_only = CompilerConfig()
    followed_only.debug.aclgraph.remove_cat_ops = False
    followed_only.ge_config.aicore_num = "24|48"
    assert options_from_config(followed_only).notes == ()


def test_npugraph_ex_options_away_from_their_defaults_are_named():
    from fxlab.passes.torchair_options import options_from_config

    config = NpugraphExConfig()
    assert options_from_config(config).notes == ()
    config.clone_input, config.capture_limit, config.inplace_pass = False, 4, False
    (note,) = options_from_config(config).notes
    assert note.startswith("the compiler_config also sets clone_input=False, capture_limit=4, which fxlab does not follow")
