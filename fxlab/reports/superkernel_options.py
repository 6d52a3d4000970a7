"""SuperKernel options (``super_kernel(scope, options)``): ``key=value`` pairs joined by
``:``, parsed and checked as CANN's SuperKernel option parser takes them: known keys, the
value forms of each, core counts within the SoC's, and the ``debug-aic-num`` :
``debug-aiv-num`` ratios SuperKernel can launch with. Plain data, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fxlab.socs import SocInfo

# -- SuperKernel options --------------------------------------------------------------------
# Value forms per key, as CANN's SuperKernel option parser accepts them.
_BINARY = ("0", "1")
_OPTION_CHOICES: dict[str, tuple[str, ...]] = {
    "feed-sync-all": _BINARY,
    "stream-fusion": _BINARY,
    "debug-dcci-all": _BINARY,
    "debug-sync-all": _BINARY,
    "profiling": _BINARY,
    "strict-scope-check": ("bypass", "abort"),
    "preload-code": ("max", "none", "per-func"),
    "early-start": ("0", "1", "2"),
}
_OP_TYPE_LIST_OPTIONS = ("dcci-before-kernel-start", "dcci-after-kernel-end", "dcci-disable-on-kernel")
_CORE_NUM_OPTIONS = ("debug-aic-num", "debug-aiv-num")
KNOWN_OPTIONS = (*_OPTION_CHOICES, *_OP_TYPE_LIST_OPTIONS, *_CORE_NUM_OPTIONS, "split-mode", "func-align", "compile-options")
# debug-aic-num : debug-aiv-num ratios SuperKernel can launch with (1:0, 0:1, 1:1, 1:2).
_RATIOS = ((1, 0), (0, 1), (1, 1), (1, 2))


@dataclass
class SuperKernelOptions:
    """A parsed ``options`` string: ``values`` by key, and what is wrong with it."""

    text: str
    values: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "values": dict(self.values), "errors": list(self.errors)}


def parse_super_kernel_options(text: str, soc: SocInfo | None = None) -> SuperKernelOptions:
    """Parse ``key=value`` pairs joined by ``:`` and validate keys and values."""
    options = SuperKernelOptions(text)
    for part in (p.strip() for p in text.strip().strip('"').split(":")):
        if not part:
            continue
        pair = _split_pair(part, options)
        if pair is None:
            continue
        key, value = pair
        if key in options.values:
            options.errors.append(f"option {key!r} is given twice")
            continue
        if key not in KNOWN_OPTIONS:
            options.errors.append(f"unknown option {key!r}; the known ones are {', '.join(KNOWN_OPTIONS)}")
            continue
        problem = _option_value_problem(key, value, soc)
        if problem is not None:
            options.errors.append(f"{key}={value}: {problem}")
            continue
        options.values[key] = value
    _check_core_ratio(options)
    return options


def _split_pair(part: str, options: SuperKernelOptions) -> tuple[str, str] | None:
    if "=" not in part:
        options.errors.append(f"{part!r} is not key=value (CANN ignores it)")
        return None
    if part.count("=") > 1:
        options.errors.append(f"{part!r} has more than one '='; write one key=value per ':'-separated part")
        return None
    key, value = (s.strip() for s in part.split("="))
    if not key or not value:
        options.errors.append(f"{part!r} misses its {'key' if not key else 'value'}")
        return None
    return key, value


def _option_value_problem(key: str, value: str, soc: SocInfo | None) -> str | None:
    if key in _OPTION_CHOICES:
        choices = _OPTION_CHOICES[key]
        return None if value in choices else f"must be one of {', '.join(choices)}"
    if key in _OP_TYPE_LIST_OPTIONS:
        names = value.split(",")
        bad = [n for n in names if not n.strip().isidentifier()]
        return None if not bad else f"must be a comma-separated list of GE op types, not {value!r}"
    if not value.isdigit():
        return "must be a non-negative integer"
    number = int(value)
    if key == "split-mode":
        return None if 1 <= number <= 64 else "must lie in [1, 64]"
    if key == "func-align":
        return None if number == 0 or (number >= 2 and number & (number - 1) == 0) else "must be 0 or a power of 2"
    if key in _CORE_NUM_OPTIONS and soc is not None:
        maximum = soc.ai_core_cnt if key == "debug-aic-num" else soc.vector_core_cnt
        return None if number <= maximum else f"is above the maximum of {soc.name} ({maximum})"
    return None


def _check_core_ratio(options: SuperKernelOptions) -> None:
    aic, aiv = options.values.get("debug-aic-num"), options.values.get("debug-aiv-num")
    if aic is None and aiv is None:
        return
    if aic is None or aiv is None:
        if (aic or aiv) == "0":
            options.errors.append(f"{'debug-aic-num' if aic else 'debug-aiv-num'}=0 alone launches no cores; give a positive count")
        return
    a, v = int(aic), int(aiv)
    if (a, v) == (0, 0) or not any(a * rv == v * ra for ra, rv in _RATIOS):
        options.errors.append(f"debug-aic-num:debug-aiv-num = {a}:{v}; SuperKernel supports the ratios 1:0, 0:1, 1:1 and 1:2")
