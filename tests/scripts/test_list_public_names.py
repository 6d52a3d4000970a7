"""scripts/list_public_names.py: the public names of the three packages, read from a
torch_npu wheel (here a small one built by the test), never imported."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from scripts.list_public_names import main

FILES = {
    "torch_npu/__init__.py": "__all__ = ['erase_stream']\nimport torch_npu.utils.patch_getenv\n",
    "torch_npu/utils/patch_getenv.py": "",
    "torch_npu/npu/__init__.py": "__all__ = ['synchronize', 'Stream']\nfrom .utils import synchronize\n",
    "torch_npu/npu/utils.py": "def synchronize(): pass\n",
    "torch_npu/dynamo/__init__.py": "",
    "torch_npu/dynamo/torchair/__init__.py": "__all__ = ['get_npu_backend']\nimport torchair.scope\n",
    "torch_npu/dynamo/torchair/scope/__init__.py": "def npu_wait_tensor(x, dep): pass\nclass _Scope: pass\n",
    "torch_npu/dynamo/torchair/_ge_concrete_graph/ge_converter/__init__.py": "",
    "torch_npu/dynamo/torchair/_ge_concrete_graph/ge_converter/aten/add.py": "",
    "torch_npu/dynamo/npugraph_ex/__init__.py": "__all__ = ['compile_fx']\nimport npugraph_ex.scope\n",
    "torch_npu/dynamo/npugraph_ex/scope/__init__.py": "def limit_core_num(a, v): pass\n",
}


def _wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("torch_npu-9.1.0.dist-info/METADATA", "Name: torch_npu\nVersion: 9.1.0\nRequires-Dist: torch==9.1.0.*\n")
        for name, text in FILES.items():
            wheel.writestr(name, text)
    return path


def test_the_names_read_from_a_wheel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wheel = _wheel(tmp_path / "torch_npu-9.1.0-cp311-cp311-linux_x86_64.whl")
    out = tmp_path / "public_names.json"
    assert main(["--wheel", str(wheel), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"the public names of torch_npu 9.1.0 are in {out}"
    written = json.loads(out.read_text())
    assert written["names"] == {
        "torch_npu": ["erase_stream", "utils"],
        "torch_npu.npu": ["Stream", "synchronize"],
        "torchair": ["get_npu_backend", "scope"],
        "torchair.scope": ["npu_wait_tensor"],
        "npugraph_ex": ["compile_fx", "scope"],
        "npugraph_ex.scope": ["limit_core_num"],
    }
    assert written["modules"] == {
        "npugraph_ex": ["npugraph_ex", "npugraph_ex.scope"],
        "torch_npu": [  # TorchAir's and npugraph_ex's own modules are listed under their names
            "torch_npu",
            "torch_npu.dynamo",
            "torch_npu.dynamo.npugraph_ex",
            "torch_npu.dynamo.torchair",
            "torch_npu.npu",
            "torch_npu.npu.utils",
            "torch_npu.utils.patch_getenv",
        ],
        "torchair": ["torchair", "torchair._ge_concrete_graph.ge_converter", "torchair.scope"],
    }
    assert (written["torch_npu"], written["wheel"], written["sha256"]) == (
        "9.1.0",
        wheel.name,
        hashlib.sha256(wheel.read_bytes()).hexdigest(),
    )
