"""Ascend SoCs and their core counts: the limits core-count settings are checked against.

CANN ships one platform ini per SoC (``<arch>-linux/data/platform_config/<SoC>.ini``);
its ``[SoCInfo]`` section has ``ai_core_cnt``, ``cube_core_cnt`` and ``vector_core_cnt``.
TorchAir's docs (``limit_core_num``, ``ge_config.aicore_num``) say a configured count
must lie in ``[1, max]`` of those, and that the Vector Core count may be 0 only on a SoC
without Vector Cores. Users with a CANN install pass their own ini (``--soc-ini``); the
small table below covers common parts for everyone else.

Sources of the table (values as read from each SoC's platform ini):

- Ascend910B1 24/24/48: TorchAir docs, ``docs/context/limit_core_num.md`` and
  ``图内AI-Core和Vector-Core全局核数配置.md`` (github.com/Ascend/torchair), which quote
  this ``[SoCInfo]`` block as the example.
- Ascend910B2 24/24/48, Ascend910B3 20/-/40, Ascend910B4 20/20/40, Ascend910_9392
  (Atlas A3) 24/24/48, Ascend310P3 8/8/7: ``[SoCInfo]`` excerpts of the CANN platform ini
  files quoted in public kernel-development notes and test fixtures.
"""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass
from pathlib import Path

from fxlab.errors import UsageError

CORE_COUNT_KEYS = ("ai_core_cnt", "vector_core_cnt")
# ASCII digits only: str.isdigit() accepts "²", which int() then refuses.
_INTEGER = re.compile(r"-?[0-9]+")


@dataclass(frozen=True)
class SocInfo:
    """Core counts of one SoC. ``vector_core_cnt == 0`` means it has no Vector Cores."""

    name: str
    ai_core_cnt: int
    vector_core_cnt: int
    cube_core_cnt: int | None = None
    source: str = ""

    @property
    def has_vector_cores(self) -> bool:
        return self.vector_core_cnt > 0

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "ai_core_cnt": self.ai_core_cnt,
            "cube_core_cnt": self.cube_core_cnt,
            "vector_core_cnt": self.vector_core_cnt,
            "source": self.source,
        }


_TABLE_SOURCE = "fxlab's SoC table, copied from CANN's platform ini files"

KNOWN_SOCS: dict[str, SocInfo] = {
    soc.name: soc
    for soc in (
        SocInfo("Ascend910B1", 24, 48, 24, _TABLE_SOURCE),
        SocInfo("Ascend910B2", 24, 48, 24, _TABLE_SOURCE),
        SocInfo("Ascend910B3", 20, 40, None, _TABLE_SOURCE),
        SocInfo("Ascend910B4", 20, 40, 20, _TABLE_SOURCE),
        SocInfo("Ascend910_9392", 24, 48, 24, _TABLE_SOURCE),
        SocInfo("Ascend310P3", 8, 7, 8, _TABLE_SOURCE),
    )
}


# The SoC every command stands in and checks core counts against unless told otherwise (an
# Atlas A2 part; TorchAir's docs quote its platform ini).
DEFAULT_SOC = "Ascend910B2"


def default_soc() -> SocInfo:
    return KNOWN_SOCS[DEFAULT_SOC]


def choose_soc(name: str | None = None, ini: str | Path | None = None) -> SocInfo:
    """The SoC a command works with: ``--soc NAME`` (a known SoC), ``--soc-ini FILE`` (a
    CANN platform ini), else :data:`DEFAULT_SOC`. Every command resolves it this way, before
    anything is captured, so a bad name fails alike everywhere."""
    if name is not None and ini is not None:
        raise UsageError("Give either --soc NAME or --soc-ini FILE, not both.")
    if ini is not None:
        return read_platform_ini(ini)
    return soc_by_name(name) if name is not None else default_soc()


def soc_by_name(name: str) -> SocInfo:
    """Look a SoC up by name (case-insensitive); an unknown name lists the known ones."""
    for known, soc in KNOWN_SOCS.items():
        if known.lower() == name.strip().lower():
            return soc
    raise UsageError(
        f"Unknown SoC {name!r}. fxlab knows {', '.join(KNOWN_SOCS)}. For another SoC pass its "
        "CANN platform ini instead: --soc-ini <CANN>/<arch>-linux/data/platform_config/<SoC>.ini."
    )


def read_platform_ini(path: str | Path) -> SocInfo:
    """Read ``[SoCInfo]`` core counts from a CANN platform ini file."""
    ini_path = Path(path)
    parser = configparser.ConfigParser(inline_comment_prefixes=("#", ";"), strict=False, interpolation=None)
    try:
        with ini_path.open(encoding="utf-8") as handle:
            parser.read_file(handle)
    except OSError as exc:
        raise UsageError(f"Cannot read the platform ini {str(ini_path)!r} ({exc.strerror}). Check the --soc-ini path.") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{str(ini_path)!r} is not a text file (byte {exc.start} is not UTF-8). Pass a CANN platform_config/<SoC>.ini."
        ) from exc
    except configparser.Error as exc:
        raise UsageError(f"{str(ini_path)!r} is not an ini file ({exc}). Pass a CANN platform_config/<SoC>.ini.") from exc
    section = parser["SoCInfo"] if parser.has_section("SoCInfo") else {}
    missing = [key for key in CORE_COUNT_KEYS if key not in section]
    if missing:
        raise UsageError(
            f"The platform ini {str(ini_path)!r} has no {' / '.join(missing)} in a [SoCInfo] section, so the "
            "SoC's core counts are unknown. Pass the SoC's ini from <CANN>/<arch>-linux/data/platform_config/, "
            "or a known SoC with --soc."
        )
    counts = {key: _count(section[key], key, ini_path) for key in (*CORE_COUNT_KEYS, "cube_core_cnt") if key in section}
    name = parser.get("version", "SoC_version", fallback=ini_path.stem)
    return SocInfo(name, counts["ai_core_cnt"], counts["vector_core_cnt"], counts.get("cube_core_cnt"), str(ini_path))


def _count(text: str, key: str, path: Path) -> int:
    value = text.strip()
    if not _INTEGER.fullmatch(value) or value.startswith("-"):
        raise UsageError(f"{key}={text!r} in {str(path)!r} is not a core count (a non-negative integer). Fix the ini file.")
    return int(value)


def check_core_count(text: str, kind: str, soc: SocInfo | None) -> str | None:
    """Why ``text`` is not a valid ``kind`` ("aicore" / "vectorcore") core count for
    ``soc``, or ``None`` when it is. The rule (TorchAir's ``limit_core_num`` and
    ``aicore_num`` docs): an integer in ``[1, max]``; a Vector Core count of 0 only on a
    SoC without Vector Cores."""
    label = "AI Core" if kind == "aicore" else "Vector Core"
    value = text.strip()
    if not _INTEGER.fullmatch(value):
        return f"{label} count {text!r} is not an integer"
    count = int(value)
    if count < 0:
        return f"{label} count {count} is negative; it must be at least 1"
    maximum = None if soc is None else (soc.ai_core_cnt if kind == "aicore" else soc.vector_core_cnt)
    if count == 0:
        if kind == "vectorcore" and soc is not None and not soc.has_vector_cores:
            return None
        if kind == "vectorcore" and soc is None:
            return "Vector Core count 0 is valid only on a SoC without Vector Cores; pass --soc to check"
        return f"{label} count 0 is not allowed; it must be at least 1"
    if soc is not None and maximum is not None and count > maximum:
        return f"{label} count {count} is above the maximum of {soc.name} ({maximum})"
    return None


def parse_aicore_num(text: str, where: str) -> tuple[int, int]:
    """Parse a global ``aicore_num`` value ``"A|V"`` (syntax only; :func:`check_core_count`
    checks the ranges)."""
    parts = text.split("|")
    if len(parts) != 2 or not all(_INTEGER.fullmatch(p.strip()) for p in parts):
        raise UsageError(
            f'{where} = {text!r} is not an aicore_num value: write "A|V", the AI Core and Vector Core counts as integers, e.g. "24|48".'
        )
    return int(parts[0]), int(parts[1])
