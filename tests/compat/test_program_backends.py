"""Which of a program's torch.compile backends are TorchAir's, the config each compiles
with (torch.compile's options set as TorchAir sets them), and on an NPU machine the graph
dump turned on in TorchAir's own config class."""

from __future__ import annotations

import os

import pytest
import torch

from fxlab.compat.config import CompilerConfig, NpugraphExConfig, apply_compile_options
from fxlab.compat.layer import compat_layer
from fxlab.compat.program_backends import DUMP_TYPE, torchair_backend
from fxlab.passes.torchair_options import backend_options


def test_the_stand_ins_backends_and_the_names_torch_npu_registers():
    with compat_layer():
        import npugraph_ex
        import torchair

        config = torchair.CompilerConfig()
        config.mode = "reduce-overhead"
        own = torchair_backend(torchair.get_npu_backend(compiler_config=config), None)
        assert own is not None and own.label == "torchair.get_npu_backend(...)" and own.config is config and own.real is None
        assert backend_options(own.config, "here").mode == "reduce-overhead"
        npu = torchair_backend("npu", None)
        assert npu is not None and npu.label == "'npu'" and type(npu.config) is CompilerConfig
        assert backend_options(npu.config, "here").mode == "max-autotune"
        flat = torchair_backend(npugraph_ex.get_npu_backend(), None)
        assert flat is not None and flat.label == "npugraph_ex.get_npu_backend(...)" and backend_options(flat.config, "here").mode == "npugraph_ex"
        entry = torchair_backend(npugraph_ex.compile_fx, {"remove_noop_ops": False})
        assert entry is not None and entry.label == "npugraph_ex.compile_fx" and entry.config.remove_noop_ops is False
        for other in ("inductor", "aot_eager", "eager", lambda gm, inputs: gm, None):
            assert torchair_backend(other, None) is None


def test_torch_compile_options_are_set_as_torchair_sets_them():
    flat = NpugraphExConfig()
    apply_compile_options(flat, {"inplace_pass": False, "clone_input": False})
    assert (flat.inplace_pass, flat.clone_input) == (False, False)
    nested = CompilerConfig()
    apply_compile_options(nested, {"inplace_pass": False, "remove_noop_ops": False, "capture_limit": 8})
    assert nested.debug.aclgraph.disable_reinplace_inplaceable_ops_pass is True  # TorchAir inverts it
    assert nested.experimental_config.remove_noop_ops is False and nested.debug.aclgraph.static_capture_size_limit == 8
    assert not backend_options(nested, "here").inplace_pass
    with pytest.raises(ValueError, match="Invalid option 'bogus'"):
        apply_compile_options(nested, {"bogus": 1})
    with pytest.raises(ValueError, match="Invalid option 'bogus'"):
        apply_compile_options(flat, {"bogus": 1})


@pytest.fixture
def torchair_package(torchair_path):
    from tests.conftest import torchair_session

    for loaded in torchair_session(torchair_path):
        yield loaded.package


def test_torchairs_own_backend_is_recognised_and_on_an_npu_machine_dumps_into_the_run(torchair_package, tmp_path):
    torchair = torchair_package
    config = torchair.CompilerConfig()
    backend = torchair.get_npu_backend(compiler_config=config)
    here = torchair_backend(backend, None)  # no NPU: fxlab's capture compiles, TorchAir's config drives it
    assert here is not None and here.label == "torchair.get_npu_backend(...)" and here.config is config and here.real is None
    assert config.debug.graph_dump.type.value is None  # nothing set without an NPU
    on_npu = torchair_backend(backend, {"remove_noop_ops": False}, on_npu=True, torchair_dumps=str(tmp_path / "dumps"))
    assert on_npu is not None and on_npu.real is backend and on_npu.dumps_to is None
    assert config.debug.graph_dump.type.value == DUMP_TYPE and config.debug.graph_dump.path == os.path.realpath(tmp_path / "dumps")
    assert backend_options(config, "here").remove_noop_ops is False  # set by TorchAir's own _process_kwargs_options
    chosen = torchair.CompilerConfig()
    chosen.debug.graph_dump.type = "py"
    chosen.debug.graph_dump.path = str(tmp_path / "mine")
    kept = torchair_backend(torchair.get_npu_backend(compiler_config=chosen), None, on_npu=True, torchair_dumps=str(tmp_path / "dumps"))
    assert kept is not None and chosen.debug.graph_dump.type.value == "py" and kept.dumps_to == os.path.realpath(tmp_path / "mine")
    assert torch.compile is not None
