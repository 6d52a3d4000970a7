"""Where TorchAir's sources are: an explicit path, ``$FXLAB_TORCHAIR_PATH``, the installed
package, or a copy in the cache (``fxlab torchair fetch``'s, or a checkout's
``.cache/torchair/``), and whether a directory is one at all.

The bridge (:mod:`fxlab.compat.bridge`) loads the copy found here; the torch_npu
operator definitions (:mod:`fxlab.compat.torch_npu_ops`) read the torch_npu files beside it.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import torch

from fxlab.compat.torchair_fetch import torchair_cache_dir
from fxlab.compat.torchair_versions import read_torchair_version, release_of
from fxlab.errors import FxlabError

ENV_VAR = "FXLAB_TORCHAIR_PATH"
CACHE_DIR = Path(".cache") / "torchair"
# Files that only TorchAir has, used to tell a TorchAir directory from anything else.
_MARKERS = ("__init__.py", "npu_fx_compiler.py", "_ge_concrete_graph/fx2ge_converter.py")


class NotTorchAirError(FxlabError):
    """The directory given as TorchAir is not a TorchAir source tree."""


def find_torchair(explicit: str | Path | None = None) -> Path | None:
    """Where to load TorchAir from: ``explicit``, else ``$FXLAB_TORCHAIR_PATH``, else
    ``None`` when the installed TorchAir is importable, else the newest copy in
    ``.cache/torchair/`` suiting the installed torch. Raises when nothing is found."""
    if explicit:
        return locate_torchair(explicit)
    if os.environ.get(ENV_VAR):
        return locate_torchair(os.environ[ENV_VAR])
    if installed_torchair_importable():
        return None
    cached = cached_torchair()
    if cached is not None:
        return cached
    raise TorchAirNotFoundError(
        "no TorchAir found: it is not importable here and neither --torchair-path nor "
        f"{ENV_VAR} is set. Run `fxlab torchair fetch` to download the torch_npu wheel "
        "matching your torch and extract TorchAir's sources into your cache folder (torch_npu is "
        "not installed), or pass --torchair-path DIR."
    )


class TorchAirNotFoundError(FxlabError):
    """No TorchAir copy could be found."""


def installed_torchair_importable() -> bool:
    """True when a real TorchAir (not fxlab's stand-in) can be imported."""
    spec = importlib.util.find_spec("torchair")
    if spec is None or spec.origin is None or type(spec.loader).__module__.startswith("fxlab."):
        return False  # absent, or served by fxlab (a stand-in or a session's finder)
    return (Path(spec.origin).parent / "_ge_concrete_graph").is_dir()


def cached_torchair(roots: list[Path] | None = None) -> Path | None:
    """The copy in ``<cache>/torchair/<version>/`` (``fxlab torchair fetch``'s, or a
    checkout's ``.cache/torchair/``) closest to (not above) the installed torch."""
    folders = (
        [root / CACHE_DIR for root in roots]
        if roots
        else [torchair_cache_dir(), *(root / CACHE_DIR for root in (Path.cwd(), Path(__file__).resolve().parents[2]))]
    )
    found: list[tuple[tuple[int, ...], Path]] = []
    for folder in folders:
        for candidate in sorted(folder.glob("*/torch_npu/dynamo/torchair")):
            release = read_torchair_version(candidate).torch_release or release_of(candidate.parts[-4])
            found.append((release, candidate))
    wanted = release_of(torch.__version__)
    suitable = [f for f in found if f[0] <= wanted] or found
    return max(suitable, key=lambda f: f[0])[1].resolve() if suitable else None


def locate_torchair(path: str | Path) -> Path:
    """The ``torchair`` package directory for ``path``: the package itself, a folder
    holding ``torchair/`` (a source checkout's ``python/``), or a torch_npu tree."""
    base = Path(path).expanduser()
    for candidate in (base, base / "torchair", base / "dynamo" / "torchair", base / "torch_npu" / "dynamo" / "torchair"):
        if all((candidate / marker).is_file() for marker in _MARKERS):
            return candidate.absolute()  # not resolved: a symlinked copy keeps its own version files
    missing = [m for m in _MARKERS if not (base / m).is_file()]
    reason = "does not exist" if not base.exists() else f"lacks {', '.join(missing)}"
    raise NotTorchAirError(
        f"{base} is not a TorchAir source tree: it {reason}. Point --torchair-path (or "
        "FXLAB_TORCHAIR_PATH) at the torch_npu/dynamo/torchair folder of an extracted torch_npu "
        "wheel, or at the python/ folder of a TorchAir checkout; `fxlab torchair fetch` "
        "downloads and extracts one that matches the installed torch."
    )
