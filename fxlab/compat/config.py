"""``torchair.CompilerConfig``, ``get_npu_backend`` and ``get_compiler`` for the stand-in.

The config is an option tree that takes what TorchAir's takes (``config.mode``,
``config.ge_config.aicore_num``, ``config.debug.graph_dump.type``, ...: TorchAir 2.13's tree,
read from its sources, :mod:`fxlab.compat.torchair_config_scan`) and refuses what TorchAir's
refuses, in its words; it remembers what was set, so fxlab can read the options that matter
to it (the global core limit, the mode). The backend runs what TorchAir's runs before the Graph Engine:
``aot_module_simplified`` with ``keep_inference_input_mutations=True``; the compiled graph
then runs eagerly on CPU.
"""

from __future__ import annotations

import collections.abc
import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

import torch.fx as fx

from fxlab.capture.stages import functional_stage, torchair_decompositions
from fxlab.compat.torchair_config_scan import ROOT, load_configs
from fxlab.passes.pattern_fusion import RegisteredPattern, caller_location, register_pattern
from fxlab.passes.torchair_options import NPUGRAPH_EX_DEFAULTS, observe_backend_config

# Sections of TorchAir's CompilerConfig (its configs/compiler_config.py).
SECTIONS = (
    "debug",
    "aoe_config",
    "export",
    "dump_config",
    "fusion_config",
    "experimental_config",
    "inference_config",
    "ge_config",
    "aclgraph_config",
    "npugraphex_config",
)


class OptionSection:
    """A group of options. With the section's place in TorchAir's config tree (``schema``, a
    class of :data:`fxlab.compat.torchair_config_scan.CONFIGS_PATH`'s table) it takes what
    TorchAir's does: its options, their listed values, its sub-configs; a name it does not
    have is TorchAir's ``ValueError``. Without one, any attribute can be set, and unset
    nested groups appear on first use."""

    def __init__(self, path: str, schema: str | None = None, **defaults: Any) -> None:
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_schema", schema)
        object.__setattr__(self, "_values", dict(defaults))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        values = object.__getattribute__(self, "_values")
        if name not in values:
            shape = _shape(object.__getattribute__(self, "_schema"))
            if shape is not None and name in shape["sections"]:
                values[name] = OptionSection(f"{self._path}.{name}", shape["sections"][name])
            elif shape is not None and shape["strict"]:
                raise AttributeError(f"'{_class_name(self._schema)}' object has no attribute '{name}'")
            else:
                values[name] = OptionSection(f"{self._path}.{name}")
        return values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        shape = _shape(self._schema)
        if shape is not None and shape["strict"]:
            if name not in shape["names"]:  # TorchAir's words (NpuBaseConfig.__setattr__)
                raise ValueError(f"{_class_name(self._schema)} has no option {name}, all options {shape['names']}")
            listed = shape["options"].get(name)
            if listed is not None and value not in listed:  # TorchAir's OptionValue's words
                raise ValueError(
                    f"Value {value!r} (type: {type(value)}) not in optional list {listed!r} "
                    f"(type: {None if not listed else type(listed[0])})."
                )
            check = shape.get("checks", {}).get(name)
            if check is not None:
                _check_value(check["kind"], check["args"], value)
        self._values[name] = value

    def as_dict(self) -> dict[str, Any]:
        """The options set, flattened to dotted names (``ge_config.aicore_num``)."""
        flat: dict[str, Any] = {}
        for key, value in self._values.items():
            if isinstance(value, OptionSection):
                flat.update({f"{key}.{k}": v for k, v in value.as_dict().items()})
            elif value is not None:
                flat[key] = value
        return flat

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.as_dict()})"


def _int_range(value: Any, low: int, high: int) -> None:
    if not isinstance(value, int):
        raise ValueError(f"Please set integer type, but got {type(value)}")
    if value < low or value > high:
        raise ValueError(f"Please set value in [{low}, {high}], {value} is out of range.")


def _int_list(value: Any) -> None:
    if value is not None and not isinstance(value, (list, tuple)):
        raise TypeError(f"the set value must be None or list, got {type(value)}")
    items = list(value or [])
    if not all(isinstance(item, int) for item in items):
        raise TypeError(f"the set value must be int list, got list type: {[type(item) for item in items]}")


def _regex(value: Any, pattern: str, example: str) -> None:
    if not re.match(pattern, value):  # a value that is no string: re's TypeError, as in TorchAir
        raise ValueError(f"Please set legal regex value format match {pattern}, {value} is Illegal format, correct example:{example}.")


def _one_type(kind: Any, label: str) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        if value is not None and not isinstance(value, kind):
            raise TypeError(f"value must be {label} or None, got {type(value)}")

    return check


# TorchAir's typed option values (configs/_option_base.py), by class: the check its value
# setter makes, in its words. The paths and files an option names (MustExistedPathValue,
# FileValue, MustExistedFileAddr) are the NPU machine's, where its dumps and files are
# written and read: they are not checked here.
VALUE_CHECKS: dict[str, Callable[..., None]] = {
    "IntRangeValue": _int_range,
    "IntListValue": _int_list,
    "RegexValue": _regex,
    "StrOptionValue": _one_type(str, "str"),
    "DictOptionValue": _one_type(dict, "dict"),
    "CallableValue": _one_type(collections.abc.Callable, "Callable"),
}


def _check_value(kind: str, args: list[Any], value: Any) -> None:
    check = VALUE_CHECKS.get(kind)
    if check is not None:
        check(value, *args)


def _shape(schema: str | None) -> dict[str, Any] | None:
    """The config class ``schema`` names in the shipped table (None: none, or no table)."""
    return torchair_configs().get(schema) if schema is not None else None


def _class_name(schema: str | None) -> str:
    return (schema or "").rpartition(".")[2]


@functools.lru_cache(maxsize=1)
def torchair_configs() -> dict[str, dict[str, Any]]:
    """TorchAir's config classes, from the table fxlab ships (read once)."""
    return load_configs()


class ModeValue(str):
    """``config.mode`` as read back: the mode, and TorchAir's ``config.mode.value``."""

    @property
    def value(self) -> str:
        return str(self)


class CompilerConfig(OptionSection):
    """Stand-in for ``torchair.CompilerConfig``: ``mode`` defaults to ``"max-autotune"``; what
    it takes is what TorchAir's takes (:class:`OptionSection` with TorchAir's tree)."""

    def __init__(self) -> None:
        super().__init__("config", ROOT, mode="max-autotune", post_grad_custom_pre_pass=None, post_grad_custom_post_pass=None)
        for section in SECTIONS:
            self._values[section] = OptionSection(section, (_shape(ROOT) or {}).get("sections", {}).get(section))
        self.ge_config.aicore_num = None

    def __getattr__(self, name: str) -> Any:
        value = super().__getattr__(name)
        return ModeValue(value) if name == "mode" else value


class NpugraphExConfig(OptionSection):
    """Stand-in for ``npugraph_ex.CompilerConfig`` (flat: ``config.inplace_pass``)."""

    def __init__(self) -> None:
        super().__init__("config", **NPUGRAPH_EX_DEFAULTS)


NpugraphExConfig.__name__ = NpugraphExConfig.__qualname__ = "CompilerConfig"


class NpuBackend:
    """What ``torchair.get_npu_backend()`` returns here: a ``torch.compile`` backend. The
    config it is given drives fxlab's stages, as it drives TorchAir's."""

    def __init__(self, compiler_config: Any = None, custom_decompositions: dict[Any, Any] | None = None) -> None:
        self.compiler_config = compiler_config if compiler_config is not None else CompilerConfig()
        self.custom_decompositions = dict(custom_decompositions or {})
        observe_backend_config(compiler_config)

    def __call__(self, gm: fx.GraphModule, example_inputs: Sequence[Any], **kwargs: Any) -> Callable[..., Any]:
        apply_compile_options(self.compiler_config, kwargs.get("options"))  # torch.compile(..., options={...}), as TorchAir reads it
        _, compiled = functional_stage(gm, example_inputs, self.decompositions())
        return compiled

    def decompositions(self) -> dict[Any, Callable[..., Any]]:
        """TorchAir's default table and the backend's ``custom_decompositions``."""
        return {**torchair_decompositions(), **self.custom_decompositions}


def get_npu_backend(*, compiler_config: Any = None, custom_decompositions: dict[Any, Any] | None = None) -> NpuBackend:
    return NpuBackend(compiler_config, custom_decompositions)


def get_npugraph_ex_backend(*, compiler_config: Any = None, custom_decompositions: dict[Any, Any] | None = None) -> NpuBackend:
    """``npugraph_ex.get_npu_backend``: its own flat config by default (mode ``npugraph_ex``)."""
    return NpuBackend(compiler_config if compiler_config is not None else NpugraphExConfig(), custom_decompositions)


# torch.compile(backend=..., options={...}) on TorchAir's nested config: each option's
# config path, as TorchAir 2.13 maps them (configs/npugraphex_config.py), and the options
# whose value it inverts (a "disable_..." path).
NESTED_OPTION_PATHS = {
    "static_kernel_compile": "experimental_config.aclgraph._aclnn_static_shape_kernel",
    "super_kernel_optimize": "experimental_config.aclgraph._super_kernel_optimize",
    "super_kernel_optimize_options": "experimental_config.aclgraph._super_kernel_optimize_options",
    "super_kernel_debug_options": "experimental_config.aclgraph._super_kernel_debug_options",
    "inplace_pass": "debug.aclgraph.disable_reinplace_inplaceable_ops_pass",
    "input_inplace_pass": "debug.aclgraph.disable_reinplace_input_mutated_ops_pass",
    "remove_noop_ops": "experimental_config.remove_noop_ops",
    "remove_cat_ops": "debug.aclgraph.remove_cat_ops",
    "force_eager": "debug.run_eagerly",
    "pattern_fusion_pass": "experimental_config.pattern_fusion_pass",
    "clone_input": "debug.aclgraph.clone_input",
    "frozen_parameter": "experimental_config.frozen_parameter",
    "post_grad_custom_pre_pass": "post_grad_custom_pre_pass",
    "post_grad_custom_post_pass": "post_grad_custom_post_pass",
    "use_graph_pool": "aclgraph_config.use_custom_pool",
    "reuse_graph_pool_in_same_fx": "debug.aclgraph.disable_mempool_reuse_in_same_fx",
    "capture_limit": "debug.aclgraph.static_capture_size_limit",
    "clone_output": "debug.aclgraph.enable_output_clone",
    "dump_tensor_data": "dump_config.enable_dump",
    "data_dump_stage": "dump_config.data_dump_stage",
    "data_dump_dir": "dump_config.dump_path",
}
INVERTED_OPTIONS = ("inplace_pass", "input_inplace_pass", "reuse_graph_pool_in_same_fx")


def apply_compile_options(config: Any, options: dict[str, Any] | None) -> None:
    """Set ``torch.compile``'s ``options`` on a backend's config as TorchAir does: by name
    on npugraph_ex's flat config, through :data:`NESTED_OPTION_PATHS` on TorchAir's
    nested one. An option neither knows raises ``ValueError``, as TorchAir's does."""
    flat = isinstance(config, NpugraphExConfig)
    for name, value in dict(options or {}).items():
        if flat:
            if name not in config._values:  # npugraph_ex's words
                raise ValueError(
                    f"Invalid option '{name}'. The 'CompilerConfig' object does not have attribute '{name}'. "
                    f"Supported attributes are: {sorted(config._values)}"
                )
            setattr(config, name, value)
            continue
        if name not in NESTED_OPTION_PATHS:
            raise ValueError(f"Invalid option '{name}', allowed options: {sorted(NESTED_OPTION_PATHS)}")
        *sections, leaf = NESTED_OPTION_PATHS[name].split(".")
        section = config
        for part in sections:
            section = getattr(section, part)
        setattr(section, leaf, (not value) if name in INVERTED_OPTIONS and isinstance(value, bool) else value)


def _replacement_registrar(registrar: str, doc: str) -> Callable[..., None]:
    """A ``register_replacement`` with TorchAir's signature, registering into fxlab's
    pattern fusion pass under ``registrar``'s name."""

    def register_replacement(
        search_fn: Callable[..., Any],
        replace_fn: Callable[..., Any],
        example_inputs: Sequence[Any],
        trace_fn: Callable[..., Any] | None = None,
        extra_check: Callable[[Any], bool] | None = None,
        search_fn_pattern: Any = None,
        scalar_workaround: Any = None,
        skip_duplicates: bool = False,
    ) -> None:
        _register(
            registrar, search_fn, replace_fn, example_inputs, trace_fn, extra_check, search_fn_pattern, scalar_workaround, skip_duplicates
        )

    register_replacement.__doc__ = doc
    return register_replacement


def _register(registrar: str, search_fn: Any, replace_fn: Any, example_inputs: Sequence[Any], *rest: Any) -> None:
    trace_fn, extra_check, search_fn_pattern, scalar_workaround, skip_duplicates = rest
    if not callable(search_fn) or not callable(replace_fn):
        raise TypeError(f"{registrar}: search_fn and replace_fn must be functions")
    register_pattern(
        RegisteredPattern(
            search_fn,
            replace_fn,
            tuple(example_inputs),
            trace_fn,
            extra_check,
            search_fn_pattern,
            scalar_workaround,
            bool(skip_duplicates),
            registrar,
            caller_location(3),
        )
    )


register_replacement = _replacement_registrar(
    "torchair.register_replacement",
    "``torchair.register_replacement``: the pattern runs in fxlab's pattern fusion pass "
    "(and, with ``--converter torchair``, is registered with TorchAir's own).",
)
register_npugraph_ex_replacement = _replacement_registrar(
    "npugraph_ex.register_replacement", "``npugraph_ex.register_replacement``: as ``torchair.register_replacement``."
)


def get_compiler(compiler_config: CompilerConfig | None = None) -> Callable[[fx.GraphModule, Sequence[Any]], Callable[..., Any]]:
    """TorchAir's inference compiler: here, the functional graph run eagerly."""

    def compile_graph(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        return gm

    return compile_graph
