"""The one home of TorchAir's settings: what fxlab's passes follow, read from a
``CompilerConfig``; the mode and its stages; and a config of TorchAir's own class set
as those options say (for TorchAir's own code, run through the bridge).

TorchAir's ``CompilerConfig`` (and the standalone ``npugraph_ex`` backend's flat one)
decides which FX passes run and how: the mode (``max-autotune`` builds a GE graph,
``reduce-overhead`` / ``npugraph_ex`` capture an ACL graph), the user's custom passes,
``experimental_config`` switches and the aclgraph options. :func:`options_from_config`
reads any of the three config shapes by attribute name (TorchAir's own config keeps each
value in an ``OptionValue`` with ``.value``; fxlab's stand-in keeps plain values), so the
passes room needs neither TorchAir nor the stand-in.

A model file gives its config as a module-level ``compiler_config``, or by handing it to
``torchair.get_npu_backend(compiler_config=...)``: the stand-in backend reports such a
config to :func:`observe_backend_config`, and :func:`config_of_module` finds either.
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from fxlab.errors import UsageError
from fxlab.socs import SocInfo, default_soc
from fxlab.stage_names import ACLGRAPH, ASCEND_IR, ATEN, DYNAMO, FUNCTIONAL, PRE_GE

MAX_AUTOTUNE = "max-autotune"
REDUCE_OVERHEAD = "reduce-overhead"
NPUGRAPH_EX = "npugraph_ex"
MODES = (MAX_AUTOTUNE, REDUCE_OVERHEAD, NPUGRAPH_EX)
ACLGRAPH_MODES = (REDUCE_OVERHEAD, NPUGRAPH_EX)

UserPass = Callable[..., Any]


@dataclass(frozen=True)
class TorchAirOptions:
    """What a ``CompilerConfig`` sets that changes the FX graphs fxlab shows (TorchAir's
    defaults when nothing is set)."""

    mode: str = MAX_AUTOTUNE
    remove_noop_ops: bool = True  # experimental_config.remove_noop_ops
    pattern_fusion_pass: bool = True  # experimental_config.pattern_fusion_pass
    enable_view_optimize: bool = True  # experimental_config.enable_view_optimize (GE graph only)
    cann_supports_view_inplace: bool = True  # CANN >= 8.3.RC1
    remove_cat_ops: bool = True  # debug.aclgraph.remove_cat_ops
    inplace_pass: bool = True  # not debug.aclgraph.disable_reinplace_inplaceable_ops_pass
    input_inplace_pass: bool = True  # not debug.aclgraph.disable_reinplace_input_mutated_ops_pass
    custom_pre_pass: UserPass | None = None  # post_grad_custom_pre_pass(gm, example_inputs, config)
    custom_post_pass: UserPass | None = None  # post_grad_custom_post_pass(gm, example_inputs, config)
    patterns: tuple[Any, ...] = ()  # users' register_replacement patterns (RegisteredPattern)
    config: Any = None  # the user's config object, handed to their passes as TorchAir hands it
    set_by: tuple[str, ...] = ()  # "option=value (where)" for every option the user set
    notes: tuple[str, ...] = ()
    soc: SocInfo = field(default_factory=default_soc)  # the SoC stood in (core counts for the stream checks)

    @property
    def aclgraph(self) -> bool:
        """The ACL graph path (``reduce-overhead`` or ``npugraph_ex``), not the GE graph."""
        return self.mode in ACLGRAPH_MODES

    @property
    def has_user_passes(self) -> bool:
        """The user gave a custom pass or a pattern: each is checked on the traced inputs."""
        return bool(self.custom_pre_pass or self.custom_post_pass or self.patterns)

    def with_mode(self, mode: str, origin: str = "--mode") -> TorchAirOptions:
        if mode == self.mode:
            return self
        return replace(self, mode=mode, set_by=(*self.set_by, f"mode={mode} ({origin})"))


def _value(option: Any) -> Any:
    """An option's value: TorchAir's ``OptionValue`` holds it in ``.value``."""
    return getattr(option, "value", option)


def _lookup(config: Any, dotted: str) -> tuple[bool, Any]:
    """``(found, value)`` of ``config.a.b.c`` without creating sections that are not
    there (fxlab's stand-in makes a section on first read)."""
    current = config
    for part in dotted.split("."):
        values = getattr(current, "_values", None)
        if isinstance(values, dict):  # fxlab's stand-in: read what was set, create nothing
            if part not in values:
                return False, None
            current = values[part]
            continue
        if not hasattr(current, part):
            return False, None
        current = getattr(current, part)
    return True, _value(current)


# npugraph_ex's flat CompilerConfig: its options and their defaults.
NPUGRAPH_EX_DEFAULTS: dict[str, Any] = {
    "mode": "npugraph_ex",
    "force_eager": False,
    "remove_noop_ops": True,
    "remove_cat_ops": True,
    "inplace_pass": True,
    "input_inplace_pass": True,
    "pattern_fusion_pass": True,
    "post_grad_custom_pre_pass": None,
    "post_grad_custom_post_pass": None,
    "static_kernel_compile": False,
    "clone_input": True,
    "clone_output": False,
    "capture_limit": 64,
    "frozen_parameter": False,
    # The rest of npugraph_ex 2.13's options (configs/compiler_config.py), so that a program
    # setting them compiles as with npugraph_ex; none changes the FX graphs fxlab records.
    "use_graph_pool": None,
    "reuse_graph_pool_in_same_fx": True,
    "disable_static_kernel_compile_cache": False,
    "dump_tensor_data": False,
    "data_dump_stage": "optimized",
    "data_dump_dir": "./",
    "_vllm_aclnn_static_kernel_sym_index": 0,
    "_vllm_aclnn_static_kernel_sym_range": None,
    "super_kernel_optimize": False,
    "super_kernel_optimize_options": None,
    "super_kernel_debug_options": None,
    "deadlock_check": False,
    "capture_error_mode": "global",
    "force_recapture": False,
    "unsafe_skip_npugraph_capture_validation": False,
    "record_statistics_debug_info": False,
}


# (option, TorchAir's CompilerConfig path, npugraph_ex's flat name, whether TorchAir's
# path says the opposite: ``disable_...``)
_BOOL_OPTIONS = (
    ("remove_noop_ops", "experimental_config.remove_noop_ops", "remove_noop_ops", False),
    ("pattern_fusion_pass", "experimental_config.pattern_fusion_pass", "pattern_fusion_pass", False),
    ("enable_view_optimize", "experimental_config.enable_view_optimize", None, False),
    ("remove_cat_ops", "debug.aclgraph.remove_cat_ops", "remove_cat_ops", False),
    ("inplace_pass", "debug.aclgraph.disable_reinplace_inplaceable_ops_pass", "inplace_pass", True),
    ("input_inplace_pass", "debug.aclgraph.disable_reinplace_input_mutated_ops_pass", "input_inplace_pass", True),
)


def is_npugraph_ex_config(config: Any) -> bool:
    """npugraph_ex's ``CompilerConfig`` is flat (``config.inplace_pass``), TorchAir's nested."""
    found, mode = _lookup(config, "mode")
    return found and mode == NPUGRAPH_EX and _lookup(config, "inplace_pass")[0]


def options_from_config(config: Any, where: str = "compiler_config") -> TorchAirOptions:
    """The options ``config`` sets (TorchAir's, npugraph_ex's or fxlab's stand-in)."""
    if config is None:
        return TorchAirOptions()
    flat = is_npugraph_ex_config(config)
    values: dict[str, Any] = {}
    set_by: list[str] = []
    found, mode = _lookup(config, "mode")
    if found and mode in MODES:
        values["mode"] = mode
        if mode != MAX_AUTOTUNE:
            set_by.append(f"mode={mode} ({where})")
    for name, nested, flat_name, inverted in _BOOL_OPTIONS:
        path = flat_name if flat else nested
        found, value = _lookup(config, path) if path else (False, None)
        if not found or value is None or isinstance(value, (dict,)) or not isinstance(value, (bool, int, str)):
            continue
        flag = _as_bool(value)
        values[name] = (not flag) if inverted and not flat else flag
        if values[name] != getattr(TorchAirOptions, name):
            set_by.append(f"{path}={value} ({where})")
    for name, path in (("custom_pre_pass", "post_grad_custom_pre_pass"), ("custom_post_pass", "post_grad_custom_post_pass")):
        found, fn = _lookup(config, path)
        if found and callable(fn):
            values[name] = fn
            set_by.append(f"{path}={describe_callable(fn)} ({where})")
    return TorchAirOptions(**values, config=config, set_by=tuple(set_by), notes=_unfollowed(config, flat, where))


# Where a CompilerConfig holds options that change what TorchAir makes of the FX graph or
# captures (the other sections tune GE, dumps and tuning, which fxlab does not run).
_GRAPH_SECTIONS = ("experimental_config.", "debug.aclgraph.", "aclgraph_config.", "npugraphex_config.", "inference_config.")
_FOLLOWED = {"mode", "post_grad_custom_pre_pass", "post_grad_custom_post_pass"} | {
    path for _, nested, flat_name, _ in _BOOL_OPTIONS for path in (nested, flat_name) if path
}


def _unfollowed(config: Any, flat: bool, where: str) -> tuple[str, ...]:
    """A note naming the options ``config`` sets that fxlab does not follow (its graphs,
    and TorchAir's own run it compares them with, are made without them), each misspelt
    name with the option it is close to. Only a config that lists what was set (fxlab's
    stand-in, npugraph_ex's options) is read."""
    as_dict = getattr(config, "as_dict", None)
    if not callable(as_dict) or not hasattr(config, "_values"):
        return ()
    settings = as_dict()
    if flat:
        defaults = NPUGRAPH_EX_DEFAULTS
        chosen = {k: v for k, v in settings.items() if k not in _FOLLOWED and (k not in defaults or defaults[k] != v)}
    else:
        chosen = {k: v for k, v in settings.items() if k.startswith(_GRAPH_SECTIONS) and k not in _FOLLOWED}
    if not chosen:
        return ()
    paths = [flat_name if flat else nested for _, nested, flat_name, _ in _BOOL_OPTIONS]
    known = sorted({"mode", "post_grad_custom_pre_pass", "post_grad_custom_post_pass", *(path for path in paths if path is not None)})
    named = []
    for key, value in chosen.items():
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.9)
        named.append(f"{key}={value!r}" + (f" (did you mean {close[0]}?)" if close else ""))
    return (
        f"{where if where.startswith('the ') else f'the {where}'} also sets {', '.join(named)}, which fxlab does not follow: its graphs (and TorchAir's own run, where it "
        f"compares them with one) are made without {'it' if len(named) == 1 else 'them'} (fxlab follows: {', '.join(known)})",
    )


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "on", "yes")
    return bool(value)


def describe_callable(fn: Any) -> str:
    """``name (file.py:line)`` of a user's function, for the trace's pass list."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    try:
        code = inspect.unwrap(fn).__code__
    except AttributeError:
        return str(name)
    return f"{name} ({code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno})"


# -- where a model file's config is -------------------------------------------------------
@dataclass
class _Observed:
    configs: list[Any] = field(default_factory=list)


_OBSERVED = _Observed()


def observe_backend_config(config: Any) -> None:
    """Called by the stand-in ``get_npu_backend(compiler_config=...)``: remember the config."""
    if config is not None and all(config is not c for c in _OBSERVED.configs):
        _OBSERVED.configs.append(config)


def forget_observed_configs() -> None:
    _OBSERVED.configs.clear()


@contextlib.contextmanager
def configs_not_observed() -> Iterator[None]:
    """A block whose ``get_npu_backend`` calls are fxlab's own (TorchAir's backend run as
    the reference of a check), not the user's: the configs handed over are forgotten."""
    saved = list(_OBSERVED.configs)
    try:
        yield
    finally:
        _OBSERVED.configs[:] = saved


def looks_like_config(value: Any) -> bool:
    return type(value).__name__ == "CompilerConfig" and _lookup(value, "mode")[0]


def config_of_module(module: Any) -> tuple[Any, str] | None:
    """The config a model file gives TorchAir: its module-level ``compiler_config``, else
    the last config it handed ``get_npu_backend``; with where it was found."""
    found = getattr(module, "compiler_config", None) if module is not None else None
    if looks_like_config(found):
        return found, "compiler_config in the model file"
    if _OBSERVED.configs:
        return _OBSERVED.configs[-1], "the config the model file gave get_npu_backend"
    return None


# -- the mode, and what the trace follows ---------------------------------------------------
# The FX stages of each mode, in order (``ascend_ir`` follows ``pre_ge`` in GE mode).
GE_STAGES = (DYNAMO, ATEN, FUNCTIONAL, PRE_GE, ASCEND_IR)
ACLGRAPH_STAGES = (DYNAMO, ATEN, FUNCTIONAL, ACLGRAPH)


def check_mode(mode: str | None) -> str | None:
    if mode is not None and mode not in MODES:
        raise UsageError(f"--mode {mode!r}: choose {', '.join(MODES)} (max-autotune is the default).")
    return mode


def stages_of_mode(mode: str) -> tuple[str, ...]:
    return ACLGRAPH_STAGES if mode in ACLGRAPH_MODES else GE_STAGES


def resolve_options(module: Any, mode: str | None = None, patterns: tuple[Any, ...] = ()) -> TorchAirOptions:
    """The options a trace follows: the model file's config (``module``'s), the
    ``patterns`` registered with ``register_replacement``
    (:func:`fxlab.passes.pattern_fusion.registered_patterns`), and ``mode`` (``--mode``
    wins over the file's mode)."""
    found = config_of_module(module)
    options = options_from_config(*found) if found is not None else TorchAirOptions()
    file_mode = options.mode
    if found is not None:
        options = _as_torchair_runs(options, found[0])
    if mode is not None and mode != file_mode:
        options = options.with_mode(mode)
        if found is not None:
            what = f"mode {file_mode}" if file_mode != MAX_AUTOTUNE else f"mode ({MAX_AUTOTUNE}, TorchAir's default where it is not set)"
            options = replace(options, notes=(*options.notes, f"--mode {mode} overrides the model file's CompilerConfig's {what}"))
    return with_patterns(options, patterns)


def backend_options(config: Any, where: str, patterns: tuple[Any, ...] = ()) -> TorchAirOptions:
    """The options a TorchAir backend handed ``config`` compiles with (a program's
    ``torch.compile`` call, ``fxlab run``), with the ``patterns`` registered so far."""
    return with_patterns(_as_torchair_runs(options_from_config(config, where), config), patterns)


def _as_torchair_runs(options: TorchAirOptions, config: Any) -> TorchAirOptions:
    if options.mode == NPUGRAPH_EX and not is_npugraph_ex_config(config):
        # TorchAir's own config with mode "npugraph_ex" runs TorchAir's aclgraph passes.
        return replace(
            options,
            mode=REDUCE_OVERHEAD,
            notes=(*options.notes, "TorchAir's CompilerConfig mode 'npugraph_ex' runs TorchAir's aclgraph passes, as reduce-overhead"),
        )
    return options


def with_patterns(options: TorchAirOptions, patterns: tuple[Any, ...]) -> TorchAirOptions:
    """``options`` with users' ``register_replacement`` patterns, each named in ``set_by``."""
    if not patterns:
        return options
    return replace(
        options, patterns=patterns, set_by=(*options.set_by, *(f"pattern {p.name} ({p.registrar} at {p.where})" for p in patterns))
    )


def to_torchair_config(compiler: Any, options: TorchAirOptions, flat: bool) -> Any:
    """A config of TorchAir's own class (``compiler.CompilerConfig``; npugraph_ex's flat
    one with ``flat``) set as ``options`` say: the inverse of :func:`options_from_config`."""
    config = compiler.CompilerConfig()
    if not flat:
        config.mode = options.mode
    for name, nested, flat_name, inverted in _BOOL_OPTIONS:
        value = getattr(options, name)
        if flat and flat_name is not None:
            setattr(config, flat_name, value)
        elif not flat:
            *sections, leaf = nested.split(".")
            section = config
            for part in sections:
                section = getattr(section, part)
            setattr(section, leaf, (not value) if inverted else value)
    if options.custom_pre_pass is not None:
        config.post_grad_custom_pre_pass = options.custom_pre_pass
    if options.custom_post_pass is not None:
        config.post_grad_custom_post_pass = options.custom_post_pass
    return config
