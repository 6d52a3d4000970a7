"""scripts/extract_torch_npu_operators.py: fxlab's copy of torch_npu's operator files made
from a torch_npu wheel (here a small one built by the test)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from fxlab.compat.torch_npu_ops import TorchNpuCopy, read_schemas, torch_npu_definitions
from scripts.extract_torch_npu_operators import main, own_sections

SCHEMAS = """autograd:
- func: _thnn_fused_gru_cell(Tensor input_gates) -> (Tensor, Tensor)
backend: NPU
custom:
- device_check: NoCheck
  func: npu_scale_two(Tensor self) -> Tensor
- func: npu_scale_two_(Tensor(a!) self) -> Tensor(a!)
quant:
- func: npu_quant_thing(Tensor self) -> Tensor
supported:
- func: add.Tensor(Tensor self, Tensor other) -> Tensor
symint:
- func: npu_scale_two(Tensor self) -> Tensor
  exposed: true
"""
META = """import torch
import torch_npu
from torch.library import Library, impl

m = Library("npu", "IMPL", "Meta")


@impl(m, "npu_scale_two")
def npu_scale_two_meta(self):
    return torch.empty_like(self)
"""
LICENSE = "Copyright (c) 2020, Huawei Technologies Co., Ltd\nRedistribution and use ... are permitted\n"


def _wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("torch_npu-9.1.0.dist-info/METADATA", "Name: torch_npu\nVersion: 9.1.0\nRequires-Dist: torch==9.1.0.*\n")
        wheel.writestr("torch_npu-9.1.0.dist-info/licenses/LICENSE", LICENSE)
        wheel.writestr("torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml", SCHEMAS)
        wheel.writestr("torch_npu/op_plugin/meta/_meta_registrations.py", META)
        wheel.writestr("torch_npu/__init__.py", "")
    return path


def test_own_sections_keeps_custom_and_symint_line_for_line() -> None:
    assert own_sections(SCHEMAS) == (
        "custom:\n- device_check: NoCheck\n  func: npu_scale_two(Tensor self) -> Tensor\n- func: npu_scale_two_(Tensor(a!) self) -> Tensor(a!)\n"
        "symint:\n- func: npu_scale_two(Tensor self) -> Tensor\n  exposed: true\n"
    )


def test_the_files_made_from_a_wheel_carry_header_licence_and_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wheel = _wheel(tmp_path / "torch_npu-9.1.0-cp311-cp311-linux_x86_64.whl")
    out = tmp_path / "out"
    assert main(["--wheel", str(wheel), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"torch_npu 9.1.0's operator files are in {out}"
    assert sorted(p.name for p in out.iterdir()) == [
        "LICENSE",
        "_meta_registrations.py.txt",
        "npu_native_functions_by_codegen.yaml",
        "source.json",
    ]
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    header = (
        "# Made by scripts/extract_torch_npu_operators.py from torch_npu 9.1.0\n"
        f"# (wheel {wheel.name}, sha256 {sha256}):\n"
        "# torch_npu/op_plugin/meta/_meta_registrations.py, whole.\n"
        "# torch_npu's licence notice is in LICENSE beside this file.\n"
        "# Do not edit; make it again with: python scripts/extract_torch_npu_operators.py --version 9.1.0\n\n"
    )
    assert (out / "_meta_registrations.py.txt").read_text() == header + META
    yaml = (out / "npu_native_functions_by_codegen.yaml").read_text()
    assert yaml.startswith("# Made by") and "only its sections 'custom' and 'symint' (torch_npu's own operators).\n" in yaml
    assert yaml.endswith("\n\n" + own_sections(SCHEMAS))
    assert (out / "LICENSE").read_text() == LICENSE
    source = json.loads((out / "source.json").read_text())
    assert source == {
        "torch_npu": "9.1.0",
        "requires_torch": "9.1.0.*",
        "wheel": wheel.name,
        "sha256": sha256,
        "made_by": "scripts/extract_torch_npu_operators.py",
    }
    # fxlab reads them as it reads a torch_npu copy: the header is comments to both readers.
    assert read_schemas(out / "npu_native_functions_by_codegen.yaml") == {
        "npu_scale_two": "npu_scale_two(Tensor self) -> Tensor",
        "npu_scale_two_": "npu_scale_two_(Tensor(a!) self) -> Tensor(a!)",
    }
    copy = TorchNpuCopy(out / "npu_native_functions_by_codegen.yaml", out / "_meta_registrations.py.txt", "made here")
    import torch

    with torch_npu_definitions(copy) as defined:
        assert defined.with_meta == {"npu_scale_two"} and not defined.failures
        assert torch.ops.npu.npu_scale_two(torch.empty(2, 3, device="meta")).shape == (2, 3)


def test_a_wheel_without_a_licence_is_refused(tmp_path: Path) -> None:
    wheel = tmp_path / "torch_npu-9.1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("torch_npu-9.1.0.dist-info/METADATA", "Name: torch_npu\nVersion: 9.1.0\n")
        zf.writestr("torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml", SCHEMAS)
        zf.writestr("torch_npu/op_plugin/meta/_meta_registrations.py", META)
    with pytest.raises(SystemExit, match="no licence file"):
        main(["--wheel", str(wheel), "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()
