"""The listing of TorchAir's converters: stubs that only raise are told from real ones."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import torchair_path_or_skip
from tools.torchair_converters import coverage, torchair_converters

STUBS = '''
@declare_supported([Support(F32(2))])
@register_fx_node_ge_converter(torch.ops.aten.zero.default)
def conveter_aten_zero_default(self, meta_outputs=None):
    """NB: aten::zero(Tensor self) -> Tensor"""
    return ge.ZerosLike(self)


@register_fx_node_ge_converter(torch.ops.aten.zero.out)
def conveter_aten_zero_out(self, *, out=None, meta_outputs=None):
    """NB: aten::zero.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"""
    raise NotImplementedError("torch.ops.aten.zero.out ge_converter is not implemented!")


@register_fx_node_ge_converter(torch.ops.aten.sym_size)
def conveter_sym_size(self, dim, meta_outputs=None):
    if dim < 0:
        raise NotImplementedError("negative dim")
    return ge.Gather(ge.Shape(self), dim)


@register_fx_node_ge_converter(torch.ops.npu.npu_thing.default)
def conveter_npu_thing(self, meta_outputs=None):
    return ge.Thing(self)
'''


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "torchair" / "_ge_concrete_graph" / "ge_converter" / "aten"
    folder.mkdir(parents=True)
    (folder / "zero.py").write_text(STUBS)
    return tmp_path / "torchair"


def test_real_converters_are_told_from_stubs(tmp_path):
    found = torchair_converters(_copy(tmp_path))
    assert {name: c.converts for name, c in found.items()} == {
        "aten.zero.default": True,
        "aten.zero.out": False,
        "aten.sym_size": True,  # a packet; raises only for some arguments: still converts
    }
    assert found["aten.zero.out"].line == 10  # the def line


def test_coverage_counts_fxlab_converters(tmp_path):
    covered, missing = coverage(_copy(tmp_path))
    assert set(covered) | set(missing) == {"aten.zero.default", "aten.sym_size"}


# fxlab's coverage of TorchAir's real converters only goes up.
COVERAGE_FLOOR = 0.95


def test_fxlab_coverage_of_torchair_real_converters_does_not_drop():
    covered, missing = coverage(torchair_path_or_skip())
    assert len(covered) + len(missing) > 300  # TorchAir of torch_npu 2.13.0 has 326
    assert len(covered) / (len(covered) + len(missing)) >= COVERAGE_FLOOR, missing
