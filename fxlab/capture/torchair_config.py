"""The TorchAir settings a trace follows: the model file's config, users' registered
patterns, and ``--mode``.

A model file gives TorchAir a ``CompilerConfig`` as a module-level ``compiler_config``
or through ``torchair.get_npu_backend(compiler_config=...)`` (observed by fxlab's
stand-in); either drives fxlab's stages as it drives TorchAir's. Patterns registered with
``torchair.register_replacement`` (or npugraph_ex's) by a ``--plugin`` file or the model
file run in the pattern fusion pass. ``--mode`` wins over the file's mode.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fxlab.errors import UsageError
from fxlab.passes.pattern_fusion import registered_patterns
from fxlab.stage_names import ACLGRAPH, ASCEND_IR, ATEN, DYNAMO, FUNCTIONAL, PRE_GE
from fxlab.passes.torchair_options import MODES, NPUGRAPH_EX, REDUCE_OVERHEAD, TorchAirOptions, config_of_module, options_from_config

# The FX stages of each mode, in order (``ascend_ir`` follows ``pre_ge`` in GE mode).
GE_STAGES = (DYNAMO, ATEN, FUNCTIONAL, PRE_GE, ASCEND_IR)
ACLGRAPH_STAGES = (DYNAMO, ATEN, FUNCTIONAL, ACLGRAPH)


def check_mode(mode: str | None) -> str | None:
    if mode is not None and mode not in MODES:
        raise UsageError(f"--mode {mode!r}: choose {', '.join(MODES)} (max-autotune is the default).")
    return mode


def stages_of_mode(mode: str) -> tuple[str, ...]:
    return ACLGRAPH_STAGES if mode in (REDUCE_OVERHEAD, NPUGRAPH_EX) else GE_STAGES


def resolve_options(module: Any, mode: str | None = None) -> TorchAirOptions:
    """The options of the model file's config, its registered patterns, and ``mode``."""
    found = config_of_module(module)
    options = options_from_config(*found) if found is not None else TorchAirOptions()
    file_mode = options.mode
    if options.mode == NPUGRAPH_EX and found is not None and not _is_flat(found[0]):
        # TorchAir's own config with mode "npugraph_ex" runs TorchAir's aclgraph passes.
        options = replace(
            options,
            mode=REDUCE_OVERHEAD,
            notes=(*options.notes, "TorchAir's CompilerConfig mode 'npugraph_ex' runs TorchAir's aclgraph passes, as reduce-overhead"),
        )
    if mode is not None and mode != file_mode:
        options = options.with_mode(mode)
        if found is not None:
            options = replace(options, notes=(*options.notes, f"--mode {mode} overrides the model file's mode {file_mode}"))
    patterns = registered_patterns()
    if patterns:
        options = replace(
            options, patterns=patterns, set_by=(*options.set_by, *(f"pattern {p.name} ({p.registrar} at {p.where})" for p in patterns))
        )
    return options


def _is_flat(config: Any) -> bool:
    from fxlab.passes.torchair_options import is_npugraph_ex_config

    return is_npugraph_ex_config(config)
