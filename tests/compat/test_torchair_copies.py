"""Finding TorchAir's sources: an explicit path, $FXLAB_TORCHAIR_PATH, or the copy in the
cache suiting the installed torch; a directory that is not TorchAir is refused clearly."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from fxlab.compat.torchair_copies import ENV_VAR, NotTorchAirError, TorchAirNotFoundError, cached_torchair, find_torchair, locate_torchair
from fxlab.compat.torchair_versions import release_of

MARKERS = ("__init__.py", "npu_fx_compiler.py", "_ge_concrete_graph/fx2ge_converter.py")


def _copy(root: Path, version: str) -> Path:
    """A TorchAir tree as ``fxlab torchair fetch`` leaves it: ``<version>/torch_npu/dynamo/torchair``."""
    folder = root / ".cache" / "torchair" / version / "torch_npu" / "dynamo" / "torchair"
    for marker in MARKERS:
        (folder / marker).parent.mkdir(parents=True, exist_ok=True)
        (folder / marker).write_text("")
    return folder


def test_a_directory_that_is_not_torchair_gets_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text("")
    with pytest.raises(NotTorchAirError) as err:
        locate_torchair(tmp_path)
    assert "is not a TorchAir source tree" in str(err.value)
    assert "npu_fx_compiler.py" in str(err.value) and "fxlab torchair fetch" in str(err.value)


def test_locate_accepts_the_package_or_a_tree_above_it(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "2.13.0")
    assert locate_torchair(folder) == folder.absolute()
    assert locate_torchair(folder.parents[2]) == folder.absolute()  # the torch_npu tree's parent


def test_the_cached_copy_is_the_newest_not_above_the_installed_torch(tmp_path: Path) -> None:
    installed = ".".join(map(str, release_of(torch.__version__)))
    older, newer = _copy(tmp_path, "2.6.0"), _copy(tmp_path, "99.0.0")
    assert cached_torchair([tmp_path]) == older.resolve()
    same = _copy(tmp_path, installed)
    assert cached_torchair([tmp_path]) == same.resolve()
    assert newer.exists() and cached_torchair([tmp_path / "nothing"]) is None


def test_an_explicit_path_wins_then_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    given, from_env = _copy(tmp_path / "a", "2.13.0"), _copy(tmp_path / "b", "2.13.0")
    monkeypatch.setenv(ENV_VAR, str(from_env))
    assert find_torchair(given) == given.absolute()
    assert find_torchair() == from_env.absolute()
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(NotTorchAirError, match="does not exist"):
        find_torchair()


def test_nothing_found_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fxlab.compat.torchair_copies as copies

    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setattr(copies, "installed_torchair_importable", lambda: False)
    monkeypatch.setattr(copies, "cached_torchair", lambda: None)
    with pytest.raises(TorchAirNotFoundError, match="fxlab torchair fetch"):
        find_torchair()
