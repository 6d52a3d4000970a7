"""Which TorchAir a directory holds, and whether it suits the installed torch.

TorchAir has no version of its own: it ships inside torch_npu, and each torch_npu
release is built for exactly one torch release (its wheel requires ``torch==X.Y.Z.*``;
``torch_npu 2.13.0`` goes with ``torch 2.13.0``, ``2.12.0.post3`` with ``2.12.0``). A
TorchAir from another release may still import, but converters that name overloads the
installed torch lacks (or lack ones it has) fail one by one, and its FX passes may call
torch internals that moved. The version is read from, in order: the ``torchair-source.json``
that ``fxlab torchair fetch`` writes beside its extraction, a ``torch_npu/version.py``
or a ``torch_npu-*.dist-info/METADATA`` around the directory.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

SOURCE_FILE = "torchair-source.json"
_VERSION_LINE = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M)
_REQUIRES_TORCH = re.compile(r"^Requires-Dist:\s*torch\s*==\s*([0-9][^\s;,]*)", re.M)


def release_of(version: str) -> tuple[int, ...]:
    """``2.13.0+cpu`` -> ``(2, 13, 0)``; ``2.12.0.post3`` -> ``(2, 12, 0)``."""
    numbers = re.match(r"(\d+(?:\.\d+)*)", version)
    parts = tuple(int(p) for p in numbers.group(1).split(".")) if numbers else ()
    return parts[:3]


@dataclass(frozen=True)
class TorchAirVersion:
    """``torch_npu`` is the release TorchAir came from; ``requires_torch`` the torch
    version pattern that release was built for (``2.13.0.*``); both may be unknown."""

    torch_npu: str | None = None
    requires_torch: str | None = None
    found_in: str | None = None

    @property
    def torch_release(self) -> tuple[int, ...] | None:
        if self.requires_torch:
            return release_of(self.requires_torch)
        if self.torch_npu:
            return release_of(self.torch_npu)
        return None

    def describe(self) -> str:
        """``torch_npu 2.13.0 (built for torch 2.13.0.*)``, or ``version unknown``."""
        if not self.torch_npu:
            built_for = f" (built for torch {self.requires_torch})" if self.requires_torch else ""
            return f"version unknown{built_for}"
        built_for = f", built for torch {self.requires_torch}" if self.requires_torch else ""
        return f"from torch_npu {self.torch_npu}{built_for}"

    def matches(self, torch_version: str) -> bool | None:
        """True/False when known; None when this copy's release is unknown."""
        wanted = self.torch_release
        return None if wanted is None else wanted == release_of(torch_version)

    def compatibility(self, torch_version: str) -> str:
        """One plain sentence on whether this TorchAir suits ``torch_version``."""
        installed = ".".join(map(str, release_of(torch_version)))
        works = f"TorchAir works with the torch its torch_npu release was built for: for torch {installed} that is torch_npu {installed} (or a {installed}.postN)"
        match = self.matches(torch_version)
        if match is None:
            return f"This TorchAir copy does not say which torch_npu release it is from. {works}."
        built_for = ".".join(map(str, self.torch_release or ()))
        if match:
            return f"This TorchAir is from torch_npu {self.torch_npu}, built for torch {built_for}: it matches the installed torch {torch_version}."
        direction = "older" if (self.torch_release or ()) < release_of(torch_version) else "newer"
        return (
            f"This TorchAir is from torch_npu {self.torch_npu}, built for torch {built_for}, which is {direction} "
            f"than the installed torch {torch_version}. {works}; `fxlab torchair fetch` fetches it."
        )


def read_torchair_version(torchair_dir: Path) -> TorchAirVersion:
    """What is known of the release the TorchAir at ``torchair_dir`` came from."""
    for parent in list(torchair_dir.parents)[:4]:
        sidecar = parent / SOURCE_FILE
        if sidecar.is_file():
            data = json.loads(sidecar.read_text(encoding="utf-8"))
            return TorchAirVersion(data.get("torch_npu"), data.get("requires_torch"), str(sidecar))
    torch_npu_dir = torchair_dir.parent.parent  # .../torch_npu/dynamo/torchair
    version_py = torch_npu_dir / "version.py"
    npu_version = None
    if version_py.is_file():
        found = _VERSION_LINE.search(version_py.read_text(encoding="utf-8"))
        npu_version = found.group(1) if found else None
    for metadata in sorted(torch_npu_dir.parent.glob("torch_npu-*.dist-info/METADATA")):
        text = metadata.read_text(encoding="utf-8")
        requires = _REQUIRES_TORCH.search(text)
        version = re.search(r"^Version:\s*(\S+)", text, re.M)
        return TorchAirVersion(version.group(1) if version else npu_version, requires.group(1) if requires else None, str(metadata))
    if npu_version:
        return TorchAirVersion(npu_version, None, str(version_py))
    return TorchAirVersion()
