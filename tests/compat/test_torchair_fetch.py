"""``fxlab torchair fetch``: the torch_npu release for the installed torch, TorchAir
extracted from its wheel into the user's cache, where the bridge finds it."""
from __future__ import annotations

import json
import zipfile

import pytest

from fxlab.compat.torchair_fetch import TorchAirFetchError, choose_release, extract_torchair, torchair_cache_dir
from tests.cli.cli_runner import run_main


def test_fetch_picks_the_release_built_for_the_installed_torch():
    available = ["2.14.0", "2.13.0", "2.12.0.post3", "2.12.0.post2", "2.12.0", "2.9.0.post9", "2.10.0rc1"]
    assert choose_release(available, "2.13.0+cpu") == "2.13.0"
    assert choose_release(available, "2.12.0") == "2.12.0.post3"
    assert choose_release(available, "2.11.1") == "2.9.0.post9"  # closest lower release
    assert choose_release(available, "2.1.0") is None


def _wheel(path, version="2.13.0", members=("torch_npu/dynamo/torchair/__init__.py", "torch_npu/dynamo/torchair/core/x.py")):
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(f"torch_npu-{version}.dist-info/METADATA", f"Name: torch_npu\nVersion: {version}\nRequires-Dist: torch==2.13.0.*\n")
        for member in members:
            wheel.writestr(member, "# torchair\n")
        wheel.writestr("torch_npu/__init__.py", "raise ImportError('not extracted')\n")
    return path


def test_user_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("FXLAB_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert torchair_cache_dir() == tmp_path / "xdg" / "fxlab" / "torchair"
    monkeypatch.setenv("FXLAB_CACHE_DIR", str(tmp_path / "mine"))
    assert torchair_cache_dir() == tmp_path / "mine" / "torchair"


def test_fetch_from_a_wheel_into_the_cache_where_the_bridge_finds_it(monkeypatch, tmp_path):
    from fxlab.compat.torchair_copies import cached_torchair

    monkeypatch.setenv("FXLAB_CACHE_DIR", str(tmp_path / "cache"))
    code, out, err = run_main("torchair", "fetch", "--wheel", str(_wheel(tmp_path / "torch_npu-2.13.0-cp311.whl")))
    assert code == 0, err
    folder = tmp_path / "cache" / "torchair" / "2.13.0" / "torch_npu" / "dynamo" / "torchair"
    assert out.strip() == str(folder)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*.py")) == ["__init__.py", "core/x.py"]
    assert not (folder.parents[1] / "__init__.py").exists()  # only TorchAir is extracted
    source = json.loads((tmp_path / "cache" / "torchair" / "2.13.0" / "torchair-source.json").read_text())
    assert (source["torch_npu"], source["requires_torch"]) == ("2.13.0", "2.13.0.*")
    assert cached_torchair() == folder.resolve()


@pytest.mark.parametrize(
    "content, message",
    [
        (b"not a zip", "cannot be read as a wheel"),
        ("no-torchair", "holds no torch_npu/dynamo/torchair/: it is not a torch_npu wheel"),
        ("bad-version", "which is not a version"),
    ],
)
def test_a_bad_wheel_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "w.whl"
    if content == "no-torchair":
        _wheel(path, members=())
    elif content == "bad-version":
        _wheel(path, version="../../x")
    else:
        path.write_bytes(content)
    with pytest.raises(TorchAirFetchError, match=message):
        extract_torchair(path, tmp_path / "cache")
    code, _, err = run_main("torchair", "fetch", "--wheel", str(path), "--cache-dir", str(tmp_path / "cache"))
    assert code == 1 and "Traceback" not in err and message.split(":")[0] in " ".join(err.split())
